import { failoverCause } from './failover.ts';
import type { Intent, LedgerTiming } from './intent.ts';
import type { ProviderOutcome } from './outcome.ts';
import { TIMEOUT_CODE } from './outcome.ts';
import { decideRetry, type RandomSource, type RetryPolicy } from './retry-policy.ts';
import { CLAIMABLE_STATES, Reason } from './state-machine.ts';
import { planTransition, type TransitionChange, type TransitionPlan } from './transition.ts';

/*
 * One send attempt: whether a worker may claim the row, the one transition each provider outcome
 * leads to, and the one way back onto the retry path (or out of it, when attempts or time ran out).
 */

export type ClaimDecision =
  | { readonly kind: 'claim'; readonly plan: TransitionPlan }
  | { readonly kind: 'leave'; readonly why: 'not_claimable' | 'not_due_yet' | 'past_deadline' };

/**
 * Whether a worker holding a queue message for this row may start an attempt. Any state
 * but reserved/retry_scheduled means someone else owns the next step: leave it alone.
 */
export function decideClaim(
  intent: Intent,
  ctx: {
    now: number;
    workerId: string;
    timing: LedgerTiming;
    provider?: string | undefined;
    /** The batch call this attempt will ride in, recorded by the claim itself (before the call). */
    batch?: string | undefined;
    /** On the claim record (e.g. what the provider's suppression check answered). */
    detail?: string | undefined;
  },
): ClaimDecision {
  if (!CLAIMABLE_STATES.includes(intent.state)) return { kind: 'leave', why: 'not_claimable' };
  // Early messages (a duplicate delivery of an old message) must not jump the backoff.
  if (
    intent.state === 'retry_scheduled' &&
    intent.nextAttemptAt !== undefined &&
    intent.nextAttemptAt > ctx.now
  ) {
    return { kind: 'leave', why: 'not_due_yet' };
  }
  // Held for its send window (./send-window.ts): not before the window opens, whoever asks.
  if (intent.state === 'reserved' && intent.notBefore !== undefined && intent.notBefore > ctx.now) {
    return { kind: 'leave', why: 'not_due_yet' };
  }
  if (ctx.now >= intent.deadline) return { kind: 'leave', why: 'past_deadline' };
  const attempt = intent.attempts + 1;
  const plan = planTransition(
    intent,
    {
      to: 'sending',
      reason: Reason.claimed,
      at: ctx.now,
      attempt,
      detail: ctx.detail,
      set: {
        attempts: attempt,
        leaseOwner: ctx.workerId,
        leaseExpiresAt: ctx.now + ctx.timing.leaseMs,
        // The attempt's provider, recorded in the claim itself (no extra write): a lease that
        // expires, and the reconciler's lookup after it, then ask the provider that was called.
        ...(ctx.provider !== undefined ? { provider: ctx.provider } : {}),
        ...(ctx.batch !== undefined ? { batch: ctx.batch } : {}),
      },
    },
    ctx.timing,
  );
  return { kind: 'claim', plan };
}

export interface OutcomeContext {
  readonly now: number;
  readonly provider: string;
  readonly policy: RetryPolicy;
  readonly random: RandomSource;
  readonly timing: LedgerTiming;
  /**
   * `OPERATOR_HOLD_MS`: how long a channel is held after an `operator_action_required` answer
   * that names no time of its own.
   */
  readonly operatorHoldMs?: number | undefined;
  /**
   * The channel's fallback provider, when this attempt went to the primary and the channel has
   * one (lambdas/domain/failover.ts `failoverTarget`): an outcome proving the primary does not
   * hold the message sends the next attempt there.
   */
  readonly failoverTo?: string | undefined;
}

/** Default of `OPERATOR_HOLD_MS` for callers that give none. */
export const DEFAULT_OPERATOR_HOLD_MS = 15 * 60_000;

export interface RetryChange {
  readonly reason: Reason;
  readonly at: number;
  /** The provider's advice, when it gave one. */
  readonly retryAfterMs?: number | undefined;
  /** Detail of the `retry_scheduled` record, given the chosen delay. */
  readonly retryDetail: (delayMs: number, basis: 'retry_after' | 'backoff') => string | undefined;
  /** Detail of the `failed` record when attempts or time have run out. */
  readonly giveUpDetail: string;
  readonly actor?: string | undefined;
  readonly set?: TransitionChange['set'];
}

/**
 * The one place a row is put back on the retry path: `retry_scheduled` at the time
 * `decideRetry` chooses, or `failed` (`attempts_exhausted` / `deadline_exceeded`) when it says
 * stop. Used for retryable outcomes and for the reconciler's "not sent" conclusions alike.
 */
export function planRetryOrGiveUp(
  intent: Intent,
  change: RetryChange,
  ctx: { readonly policy: RetryPolicy; readonly random: RandomSource; readonly timing: LedgerTiming },
): TransitionPlan {
  const decision = decideRetry({
    attempt: intent.attempts,
    now: change.at,
    deadline: intent.deadline,
    retryAfterMs: change.retryAfterMs,
    policy: ctx.policy,
    random: ctx.random,
  });
  const common = { at: change.at, attempt: intent.attempts, actor: change.actor };
  if (decision.kind === 'give_up') {
    return planTransition(
      intent,
      { ...common, to: 'failed', reason: decision.reason, detail: change.giveUpDetail, set: change.set },
      ctx.timing,
    );
  }
  return planTransition(
    intent,
    {
      ...common,
      to: 'retry_scheduled',
      reason: change.reason,
      detail: change.retryDetail(decision.delayMs, decision.basis),
      set: { ...change.set, nextAttemptAt: decision.at },
    },
    ctx.timing,
  );
}

function retryAfterOutcome(
  intent: Intent,
  ctx: OutcomeContext,
  reason: Reason,
  code: string,
  retryAfterMs: number | undefined,
): TransitionPlan {
  return planRetryOrGiveUp(
    intent,
    {
      reason,
      at: ctx.now,
      retryAfterMs,
      retryDetail: (delayMs, basis) => `${code}; retry in ${delayMs} ms (${basis})`,
      giveUpDetail: `${reason}: ${code}`,
      set: { provider: ctx.provider },
    },
    ctx,
  );
}

/**
 * The primary proved it does not hold the message and the channel has a fallback: the row is due
 * again at once, its `provider` naming the fallback (the next claim goes there:
 * `providerForAttempt`), the refused attempt given back (nothing was sent; no channel hold, the
 * fallback carries the traffic). The record names both providers and the cause.
 */
function planFailover(
  intent: Intent,
  outcome: ProviderOutcome & { readonly code: string },
  cause: string,
  fallback: string,
  ctx: OutcomeContext,
): TransitionPlan {
  return planTransition(
    intent,
    {
      to: 'retry_scheduled',
      reason: Reason.failover,
      at: ctx.now,
      attempt: intent.attempts,
      detail: `${ctx.provider} ${cause} (${outcome.code}); next attempt via ${fallback}, attempt not counted`,
      set: {
        provider: fallback,
        attempts: Math.max(0, intent.attempts - 1),
        nextAttemptAt: Math.min(ctx.now, intent.deadline),
      },
    },
    ctx.timing,
  );
}

/** Maps the typed outcome of the current attempt (row in `sending`) to its one transition. */
export function planOutcome(intent: Intent, outcome: ProviderOutcome, ctx: OutcomeContext): TransitionPlan {
  const attempt = intent.attempts;
  const cause = ctx.failoverTo !== undefined ? failoverCause(outcome) : undefined;
  if (cause !== undefined && ctx.failoverTo !== undefined && outcome.kind !== 'accepted') {
    return planFailover(intent, outcome, cause, ctx.failoverTo, ctx);
  }
  switch (outcome.kind) {
    case 'accepted':
      return planTransition(
        intent,
        {
          to: 'accepted',
          reason: Reason.providerAccepted,
          at: ctx.now,
          attempt,
          set: { provider: ctx.provider, providerReceiptId: outcome.receiptId },
        },
        ctx.timing,
      );
    case 'retryable':
      return retryAfterOutcome(
        intent,
        ctx,
        outcome.throttled ? Reason.providerThrottled : Reason.providerUnavailable,
        outcome.code,
        outcome.retryAfterMs,
      );
    case 'rejected':
      if (!outcome.permanent) {
        return retryAfterOutcome(intent, ctx, Reason.providerRejected, outcome.code, undefined);
      }
      return planTransition(
        intent,
        {
          to: 'failed',
          reason: Reason.providerRejected,
          at: ctx.now,
          attempt,
          detail: outcome.code,
          set: { provider: ctx.provider },
        },
        ctx.timing,
      );
    case 'operator_action_required': {
      // Nothing was sent and the cause is our account: the attempt is given back (a person will
      // fix the account; the notice must not run out of attempts meanwhile), the row waits for
      // the hold, never past its deadline (the reconciler fails it there, escalated), and the
      // record escalates (planTransition sets the durable marker).
      const holdMs = outcome.retryAfterMs ?? ctx.operatorHoldMs ?? DEFAULT_OPERATOR_HOLD_MS;
      return planTransition(
        intent,
        {
          to: 'retry_scheduled',
          reason: Reason.operatorActionRequired,
          at: ctx.now,
          attempt,
          detail: `${outcome.code}; channel held ${holdMs} ms, attempt not counted`,
          set: {
            provider: ctx.provider,
            attempts: Math.max(0, attempt - 1),
            nextAttemptAt: Math.min(ctx.now + holdMs, intent.deadline),
          },
        },
        ctx.timing,
      );
    }
    case 'ambiguous':
      return planTransition(
        intent,
        {
          to: 'unknown',
          reason: outcome.code === TIMEOUT_CODE ? Reason.providerTimeout : Reason.providerAmbiguous,
          at: ctx.now,
          attempt,
          detail: outcome.code,
          set: { provider: ctx.provider },
        },
        ctx.timing,
      );
  }
}
