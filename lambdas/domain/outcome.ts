import type { Reason } from './state-machine.ts';

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
  /**
   * The provider refused the message. `permanent: false` means the same request may pass later.
   * `suppress`: the refusal says the destination must not be messaged on this channel again (an
   * opt-out list the provider keeps): the ledger adds it to its suppression list, the provider as
   * the source.
   */
  | {
      readonly kind: 'rejected';
      readonly code: string;
      readonly permanent: boolean;
      readonly suppress?: { readonly reason: string } | undefined;
    }
  /**
   * The provider refused because of our account, not this message: a spend limit reached, credit
   * exhausted, a daily or monthly quota spent, a key refused or revoked, the account suspended. Nothing was sent, every message of the
   * channel would meet the same answer, and only a person can clear it. The dispatcher holds the
   * channel (`retryAfterMs` when the provider says when it clears), escalates, and does not count
   * the attempt. The kind is the reason the row records (`Reason.operatorActionRequired`): one
   * name for "an operator must act", whichever provider or path says it.
   */
  | {
      readonly kind: typeof Reason.operatorActionRequired;
      readonly code: string;
      readonly retryAfterMs?: number;
    }
  /**
   * We cannot tell whether the provider accepted: timeout or connection reset after the
   * request was written. Never resent blindly; the reconciler asks the provider first.
   */
  | { readonly kind: 'ambiguous'; readonly code: string };

export type OutcomeKind = ProviderOutcome['kind'];

/** Outcome code for a call cut off by `PROVIDER_TIMEOUT_MS`. */
export const TIMEOUT_CODE = 'timeout';

/**
 * Codes of `retryable` outcomes that prove no byte of the request reached the provider: the
 * connection never opened (refused, no route, connect timeout), the name did not resolve, the TLS
 * handshake failed, or the credentials to sign it could not be had. Written once, here: the
 * shared classifiers (lambdas/providers/fetch-send.ts, aws-sdk-send.ts) answer with these codes,
 * and the failover policy (./failover.ts) reads them.
 */
export const NotReached = {
  connectionRefused: 'connection_refused',
  dnsFailure: 'dns_failure',
  hostUnreachable: 'host_unreachable',
  connectTimeout: 'connect_timeout',
  connectFailed: 'connect_failed',
  tlsError: 'tls_error',
  credentialsUnavailable: 'credentials_unavailable',
} as const;

export type NotReachedCode = (typeof NotReached)[keyof typeof NotReached];

const NOT_REACHED_CODES: ReadonlySet<string> = new Set(Object.values(NotReached));

/** Whether a `retryable` code proves the provider never got the request (see {@link NotReached}). */
export function isNotReachedCode(code: string): code is NotReachedCode {
  return NOT_REACHED_CODES.has(code);
}
