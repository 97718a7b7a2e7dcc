/**
 * What one provider call told us. Adapters return these and never throw for a provider's
 * answer; whether and when to try again is decided by the retry policy, not the adapter.
 */
export type ProviderOutcome =
  /** The provider holds the message; `receiptId` is its id for it (a message id, a SID). */
  | { readonly kind: 'accepted'; readonly receiptId: string }
  /**
   * Provably not accepted and worth trying again: throttling, 5xx before the request was
   * processed. `throttled` marks a "slow down" that concerns every worker on the channel.
   */
  | {
      readonly kind: 'retryable';
      readonly code: string;
      readonly throttled: boolean;
      readonly retryAfterMs?: number;
    }
  /** The provider refused the message. `permanent: false` means the same request may pass later. */
  | { readonly kind: 'rejected'; readonly code: string; readonly permanent: boolean }
  /**
   * We cannot tell whether the provider accepted: timeout or connection reset after the
   * request was written. Never resent blindly; the reconciler asks the provider first.
   */
  | { readonly kind: 'ambiguous'; readonly code: string }
  /**
   * Provably not accepted, and no message will be until a person acts: the credentials are
   * refused, the account is suspended, a quota is spent. Every message on the channel would meet
   * the same answer, so the dispatcher holds the whole channel (the shared gate) for
   * `holdMs` (the provider's advice, e.g. a quota reset; else `OPERATIONAL_HOLD_MS`), escalates,
   * and gives the attempt back: the row waits for the fix instead of burning its attempts.
   */
  | { readonly kind: 'operational'; readonly code: string; readonly holdMs?: number };

export type OutcomeKind = ProviderOutcome['kind'];

/** Outcome code for a call cut off by `PROVIDER_TIMEOUT_MS`. */
export const TIMEOUT_CODE = 'timeout';
