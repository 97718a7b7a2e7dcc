import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { LookupQuery, ProviderLookup } from '../../ports/provider-lookup.port.ts';
import { findMessages, type TwilioLookupConfig, TwilioLookupError } from './twilio-lookup.ts';

/**
 * Lists messages to the destination since the attempt started and matches the exact body.
 * Twilio's list filters by send date at day precision, so the window starts a minute before
 * the claim to absorb clock skew; a complete listing without a match is "absent".
 */
export class TwilioProviderLookup implements ProviderLookup {
  readonly provider = 'twilio';
  constructor(private readonly config: TwilioLookupConfig) {}

  async lookup(query: LookupQuery): Promise<LookupVerdict> {
    try {
      const found = await findMessages(this.config, {
        to: query.destination,
        sentAfter: query.attemptStartedAt - 60_000,
        bodyEquals: query.content,
      });
      const live = found.filter((m) => m.status !== 'canceled');
      if (live.length === 0) return { kind: 'absent', detail: 'no matching message in a complete listing' };
      // Oldest first: if one attempt produced it, the earliest match is ours.
      const first = [...live].sort((a, b) => a.dateCreated - b.dateCreated)[0];
      return {
        kind: 'found',
        receiptId: first?.sid as string,
        detail: `matched ${live.length} by destination and body`,
      };
    } catch (error) {
      const reason = error instanceof TwilioLookupError ? error.reason : 'lookup_failed';
      return { kind: 'undecidable', detail: `twilio lookup: ${reason}` };
    }
  }
}
