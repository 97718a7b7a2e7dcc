import type { Intent } from './intent.ts';
import { isNotReachedCode, type ProviderOutcome } from './outcome.ts';

/*
 * Provider failover per channel (docs/architecture.md §"Provider failover"): which provider an
 * attempt goes to, and which outcomes may send the next attempt to the channel's fallback. The
 * one rule that keeps it from double-sending: only an outcome that PROVES the primary does not
 * hold the message moves the row; a timeout or any other ambiguous answer stays `unknown` and is
 * reconciled with the provider that was called.
 */

/** Why an outcome lets the next attempt go to the fallback. */
export const FailoverCause = {
  /** No byte of the request reached the primary: refused connection, DNS, TLS, no credentials. */
  neverReached: 'never_reached',
  /** The primary refuses our account: 401/403, suspended, spend limit or credit exhausted. */
  accountRefused: 'account_refused',
} as const;

export type FailoverCause = (typeof FailoverCause)[keyof typeof FailoverCause];

/**
 * The one classifier of the failover policy, over the domain's outcome kinds (never a provider's
 * own codes): `operator_action_required` is an account refusal, a `retryable` whose code is one of
 * the shared not-reached codes ({@link isNotReachedCode}) proves the request never arrived.
 * Everything else — accepted, rejected (the message itself was refused), throttled, a 503, a
 * timeout, a reset — is `undefined`: no failover.
 */
export function failoverCause(outcome: ProviderOutcome): FailoverCause | undefined {
  if (outcome.kind === 'operator_action_required') return FailoverCause.accountRefused;
  if (outcome.kind === 'retryable' && !outcome.throttled && isNotReachedCode(outcome.code)) {
    return FailoverCause.neverReached;
  }
  return undefined;
}

/** A channel's providers: the primary, and the fallback when `<CHANNEL>_FALLBACK_PROVIDER` names one. */
export interface ChannelRoute {
  readonly primary: string;
  readonly fallback?: string | undefined;
}

/**
 * The provider of a row's next attempt. Every notice starts on the primary (traffic returns to
 * the primary with each new notice, there is no channel-wide switch to undo); a row that failed
 * over stays on the fallback for the rest of its attempts (its `provider` names the fallback from
 * the failover record on), so its later attempts are never split across providers.
 */
export function providerForAttempt(row: Pick<Intent, 'provider'>, route: ChannelRoute): string {
  if (route.fallback !== undefined && row.provider === route.fallback) return route.fallback;
  return route.primary;
}

/** The fallback an attempt through `provider` may fail over to: only the primary's attempts have one. */
export function failoverTarget(provider: string, route: ChannelRoute): string | undefined {
  return route.fallback !== undefined && provider === route.primary ? route.fallback : undefined;
}
