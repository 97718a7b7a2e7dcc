import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { LookupFacet } from '../../ports/provider.port.ts';
import type { LookupQuery, ProviderLookup } from '../../ports/provider-lookup.port.ts';
import { setting } from '../settings.ts';
import { findMessages, type TwilioLookupConfig, TwilioLookupError } from './messages-api.ts';

/** Allowance between our clock and Twilio's (its timestamps have one-second resolution). */
const CLOCK_SKEW_MS = 60_000;

/**
 * Lists messages to the destination since the attempt started and matches the exact body and
 * the attempt's time window; a complete listing without a match is "absent". What it cannot
 * prove: that a single match is ours and not another notice's identical text sent in the same
 * minute (Twilio has no idempotency key or client reference to match on).
 */
export class TwilioProviderLookup implements ProviderLookup {
  readonly provider = 'twilio';
  constructor(private readonly config: TwilioLookupConfig) {}

  async lookup(query: LookupQuery): Promise<LookupVerdict> {
    try {
      const found = await findMessages(this.config, {
        to: query.destination,
        sentAfter: query.attemptStartedAt - CLOCK_SKEW_MS,
        bodyEquals: query.content,
      });
      // Only a message created during this attempt (± skew) can be its message; and if two such
      // messages carry the same body to the same number (two notices with identical text), the
      // listing cannot say which is ours: that is undecidable, never "found".
      const inWindow = found.filter(
        (m) =>
          m.status !== 'canceled' &&
          m.dateCreated >= query.attemptStartedAt - CLOCK_SKEW_MS &&
          m.dateCreated <= query.attemptEndedAt + CLOCK_SKEW_MS,
      );
      if (inWindow.length === 0)
        return { kind: 'absent', detail: 'no matching message in a complete listing' };
      if (inWindow.length > 1) {
        return {
          kind: 'undecidable',
          detail: `${inWindow.length} messages match destination, body and time`,
        };
      }
      return {
        kind: 'found',
        receiptId: inWindow[0]?.sid as string,
        detail: 'matched by destination, body and time',
      };
    } catch (error) {
      const reason = error instanceof TwilioLookupError ? error.reason : 'lookup_failed';
      return { kind: 'undecidable', detail: `twilio lookup: ${reason}` };
    }
  }
}

/** The lookup facet: the reconciler's question about an ambiguous attempt. */
export const facet: LookupFacet = (context) =>
  new TwilioProviderLookup({
    baseUrl: setting(context, 'TWILIO_BASE_URL'),
    accountSid: setting(context, 'TWILIO_ACCOUNT_SID'),
    authToken: setting(context, 'TWILIO_AUTH_TOKEN'),
    timeoutMs: context.timeoutMs,
  });
