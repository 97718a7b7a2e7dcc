import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { ProviderLookup } from '../../ports/provider-lookup.port.ts';

/**
 * SES has no API to find a message by tag or recipient (GetMessageInsights needs a
 * MessageId, which an ambiguous send never returned, and VDM). The evidence for SES is its
 * event stream: a `Send` event tagged with the intent settles the row through the events
 * handler. Until then, and after the grace period, the answer is honestly "undecidable".
 */
export class SesProviderLookup implements ProviderLookup {
  readonly provider = 'ses';

  async lookup(): Promise<LookupVerdict> {
    return { kind: 'undecidable', detail: 'ses offers no lookup; waiting for a Send event' };
  }
}
