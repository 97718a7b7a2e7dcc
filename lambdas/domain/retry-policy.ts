export interface RetryPolicy {
  /** First backoff ceiling (`RETRY_BASE_MS`). @default 1000 */
  readonly baseMs: number;
  /** Largest computed backoff (`RETRY_CAP_MS`). @default 900000 */
  readonly capMs: number;
  /** Attempts allowed in all, the first included (`MAX_ATTEMPTS`). @default 8 */
  readonly maxAttempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 1000, capMs: 900_000, maxAttempts: 8 };

/** A source of uniform numbers in [0, 1); injectable so tests are deterministic. */
export type RandomSource = () => number;

/**
 * Capped exponential backoff with full jitter (uniform in [0, min(cap, base·2^(attempt-1))) ).
 * Full jitter spreads the retries of workers that failed together, so they do not return
 * together.
 *
 *   attempt 1: [0, base)   attempt 2: [0, 2·base)   …   attempt n: [0, min(cap, base·2^(n-1)))
 */
export function backoffCeilingMs(attempt: number, policy: RetryPolicy): number {
  const exponent = Math.max(0, attempt - 1);
  // 2^exponent overflows to Infinity long after it passes any sane cap; min() handles it.
  return Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
}

export function backoffDelayMs(attempt: number, policy: RetryPolicy, random: RandomSource): number {
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  return Math.floor(r * backoffCeilingMs(attempt, policy));
}

export type RetryDecision =
  | {
      readonly kind: 'retry';
      readonly at: number;
      readonly delayMs: number;
      readonly basis: 'retry_after' | 'backoff';
    }
  | { readonly kind: 'give_up'; readonly reason: 'attempts_exhausted' | 'deadline_exceeded' };

export interface RetryContext {
  /** Attempts made so far, the one that just failed included. */
  readonly attempt: number;
  readonly now: number;
  readonly deadline: number;
  /** The provider's advice (Retry-After); it wins over computed backoff, even above the cap. */
  readonly retryAfterMs?: number | undefined;
  readonly policy: RetryPolicy;
  readonly random: RandomSource;
}

/**
 * When to try again, or that we must stop. A retry that could only happen at or after the
 * deadline is not scheduled: the row fails now with `deadline_exceeded` instead of lingering.
 */
export function decideRetry(ctx: RetryContext): RetryDecision {
  if (ctx.attempt >= ctx.policy.maxAttempts) return { kind: 'give_up', reason: 'attempts_exhausted' };
  const advised = ctx.retryAfterMs !== undefined && ctx.retryAfterMs >= 0;
  const delayMs = advised
    ? Math.ceil(ctx.retryAfterMs as number)
    : backoffDelayMs(ctx.attempt, ctx.policy, ctx.random);
  const at = ctx.now + delayMs;
  if (at >= ctx.deadline) return { kind: 'give_up', reason: 'deadline_exceeded' };
  return { kind: 'retry', at, delayMs, basis: advised ? 'retry_after' : 'backoff' };
}
