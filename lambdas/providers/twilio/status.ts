import type { StatusFacet } from '../../ports/provider.port.ts';
import { setting } from '../settings.ts';
import { fetchMessage, TwilioLookupError } from './messages-api.ts';
import { twilioStatusReport } from './statuses.ts';

/**
 * Delivery follow-up: an accepted message whose final status callback never arrived (lost while
 * this deployment was down, say) is fetched by its SID, and its status applied like a callback.
 */
export const facet: StatusFacet = (context) => {
  const config = {
    baseUrl: setting(context, 'TWILIO_BASE_URL'),
    accountSid: setting(context, 'TWILIO_ACCOUNT_SID'),
    authToken: setting(context, 'TWILIO_AUTH_TOKEN'),
    timeoutMs: context.timeoutMs,
  };
  return {
    provider: 'twilio',
    async pull(query) {
      try {
        const message = await fetchMessage(config, query.receiptId);
        if (!message) return { kind: 'unavailable', code: 'twilio_message_not_found' };
        const errorCode = message.errorCode === null ? undefined : String(message.errorCode);
        const report = twilioStatusReport(
          query.ref,
          message.sid,
          message.status,
          errorCode,
          context.clock.now(),
        );
        return { kind: 'reports', reports: report ? [report] : [] };
      } catch (error) {
        return {
          kind: 'unavailable',
          code: `twilio_${error instanceof TwilioLookupError ? error.reason : 'lookup_failed'}`,
        };
      }
    },
  };
};
