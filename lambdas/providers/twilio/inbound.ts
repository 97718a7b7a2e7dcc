import { parseCorrelationId } from '../../domain/identity.ts';
import type { DeliveryReport, InboundFacet, InboundViolation } from '../../ports/provider.port.ts';
import { setting } from '../settings.ts';
import { CALLBACK_CORRELATION_PARAM } from './callbacks.ts';
import { descriptor } from './descriptor.ts';
import { verifyTwilioSignature } from './signature.ts';
import { twilioStatusReport } from './statuses.ts';

const MESSAGE_SID = /^[A-Z]{2}[0-9a-fA-F]{32}$/;

export type TwilioCallback =
  | { readonly ok: true; readonly report: DeliveryReport | undefined; readonly status: string }
  /** Verified, but not for an intent of ours: no `ref` (a Messaging-Service-level callback URL). */
  | { readonly ok: true; readonly report: undefined; readonly status: string; readonly unmatched: true }
  | { readonly ok: false; readonly errors: readonly InboundViolation[] };

/**
 * A verified callback → a delivery report (`undefined` for a status we ignore). The intent comes
 * from `?ref=<noticeId>-sms`, which our transport adds to the StatusCallback URL and Twilio signs.
 * A callback without `ref` (one a Messaging Service sends to its own callback URL) is for no
 * intent of ours: `unmatched`, answered 2xx and counted. A `ref` that is not one of ours, or a
 * callback without SID or status, is malformed (400).
 */
export function twilioCallbackReport(
  params: Readonly<Record<string, string>>,
  rawQueryString: string,
  at: number,
): TwilioCallback {
  const errors: InboundViolation[] = [];
  const rawRef = new URLSearchParams(rawQueryString).get(CALLBACK_CORRELATION_PARAM);
  const ref = rawRef === null ? undefined : parseCorrelationId(rawRef);
  if (rawRef !== null && ref?.channel !== 'sms') {
    errors.push({
      path: CALLBACK_CORRELATION_PARAM,
      code: 'invalid_format',
      message: `query parameter ${CALLBACK_CORRELATION_PARAM} must be <noticeId>-sms`,
    });
  }
  const receiptId = params.MessageSid ?? params.SmsSid ?? '';
  if (!MESSAGE_SID.test(receiptId)) {
    errors.push({ path: 'MessageSid', code: 'required', message: 'must be a Twilio message SID' });
  }
  const status = (params.MessageStatus ?? params.SmsStatus ?? '').toLowerCase();
  if (status === '') errors.push({ path: 'MessageStatus', code: 'required', message: 'is required' });
  if (errors.length > 0) return { ok: false, errors };
  if (!ref) return { ok: true, report: undefined, status, unmatched: true };

  const code = /^\d{1,10}$/.test(params.ErrorCode ?? '') ? params.ErrorCode : undefined;
  return { ok: true, status, report: twilioStatusReport(ref, receiptId, status, code, at) };
}

/**
 * The inbound facet: `POST /v1/provider-events/twilio`. The signature covers the exact URL Twilio
 * called (our public origin + path + query, which carries `ref`) and every form parameter;
 * anything that does not verify is refused (403) and changes nothing.
 */
export const facet: InboundFacet = {
  kind: 'webhook',
  contentType: descriptor.webhook.contentType,
  create: (context) => {
    const authToken = setting(context, 'TWILIO_AUTH_TOKEN');
    return (request) => {
      // URLSearchParams decodes `+` as a space, which is right for form encoding (not for paths).
      const params = Object.fromEntries(new URLSearchParams(request.body));
      if (!verifyTwilioSignature(authToken, request.header('x-twilio-signature'), request.url, params)) {
        return {
          kind: 'refused',
          status: descriptor.webhook.refusedStatus,
          detail: 'X-Twilio-Signature does not verify for this request',
        };
      }
      const query = new URL(request.url).search.replace(/^\?/, '');
      const callback = twilioCallbackReport(params, query, context.clock.now());
      if (!callback.ok) return { kind: 'malformed', errors: callback.errors };
      if ('unmatched' in callback) return { kind: 'accepted', reports: [], unmatched: 1, ignored: [] };
      return callback.report
        ? { kind: 'accepted', reports: [callback.report], unmatched: 0, ignored: [] }
        : { kind: 'accepted', reports: [], unmatched: 0, ignored: [`status_${callback.status}`] };
    };
  },
};
