import type { LookupVerdict } from '../domain/reconcile.ts';
import type { EmailMessage, SmsMessage } from './transport.port.ts';

/** What the reconciler knows about an ambiguous attempt, to ask the provider about it. */
export interface LookupQuery {
  readonly correlationId: string;
  /** Raw destination, from the opened envelope; never logged. */
  readonly destination: string;
  /** The body exactly as it was sent (SMS) or the subject (email), to match a listing. */
  readonly content: string;
  /** When the ambiguous attempt started (its claim), epoch ms. */
  readonly attemptStartedAt: number;
  /** When the attempt's outcome became unknown (timeout, lease expiry), epoch ms. */
  readonly attemptEndedAt: number;
  readonly receiptId?: string | undefined;
  /**
   * The message exactly as the attempt sent it, idempotency key included: a provider that honours
   * the key looks an ambiguous send up by replaying it (answered with the original, never sent twice).
   */
  readonly replay?: EmailMessage | SmsMessage | undefined;
}

/** Asks a provider whether it holds a message. Returns `undecidable` rather than guessing. */
export interface ProviderLookup {
  readonly provider: string;
  lookup(query: LookupQuery): Promise<LookupVerdict>;
}
