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
   * The message exactly as the attempt sent it, idempotency key included (rendered again from
   * the row's envelope: rendering is deterministic): a provider that honours the key looks an
   * ambiguous send up by replaying it (answered with the original, never sent twice).
   */
  readonly replay?: EmailMessage | SmsMessage | undefined;
  /** The row's deadline: a replay that could be a first send must not happen past it. */
  readonly deadline?: number | undefined;
  /** When this intent's idempotency key was first sent (its first claim), epoch ms. */
  readonly keyFirstUsedAt?: number | undefined;
  /** When the ambiguous attempt rode in a batch call: that call, to replay it as it was made. */
  readonly batch?: BatchLookup | undefined;
}

/** The recorded batch call an ambiguous attempt rode in, rebuilt exactly (docs/architecture.md §4). */
export interface BatchLookup {
  readonly id: string;
  readonly idempotencyKey: string;
  /** When the call was made (the record's creation), epoch ms. */
  readonly createdAt: number;
  /** This row's position in the call. */
  readonly index: number;
  /** Every member's message, in the call's order. */
  readonly messages: readonly EmailMessage[];
}

/** Asks a provider whether it holds a message. Returns `undecidable` rather than guessing. */
export interface ProviderLookup {
  readonly provider: string;
  lookup(query: LookupQuery): Promise<LookupVerdict>;
}
