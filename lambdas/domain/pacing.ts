/**
 * A token bucket that paces sends to a provider's known rate and adapts when the provider
 * says "slow down" (multiplicative decrease on a throttle, additive increase on success, never
 * above the configured rate). Pure: the caller owns the clock and the state.
 *
 *   tokens ─┬─ refill at `rate`/s up to `capacity` (one second of burst)
 *           └─ take 1 per send; when empty, the wait is (1 - tokens) / rate seconds
 */
export interface BucketState {
  readonly tokens: number;
  readonly updatedAt: number;
  /** Current pace, tokens per second. */
  readonly rate: number;
  /** The configured (known) provider rate: the ceiling for `rate`. */
  readonly maxRate: number;
}

/** Never pace below this fraction of the configured rate: a burst of 429s must not stall the channel. */
const MIN_RATE_FRACTION = 0.1;
const DECREASE_FACTOR = 0.5;
/** Additive increase per successful send, as a fraction of the configured rate. */
const INCREASE_FRACTION = 0.02;

export function newBucket(ratePerSecond: number, now: number): BucketState {
  return { tokens: Math.max(1, ratePerSecond), updatedAt: now, rate: ratePerSecond, maxRate: ratePerSecond };
}

function capacity(state: BucketState): number {
  return Math.max(1, state.rate);
}

export function refill(state: BucketState, now: number): BucketState {
  const elapsed = Math.max(0, now - state.updatedAt) / 1000;
  return {
    ...state,
    tokens: Math.min(capacity(state), state.tokens + elapsed * state.rate),
    updatedAt: Math.max(now, state.updatedAt),
  };
}

/** Takes one token if there is one; otherwise says how long until there will be. */
export function take(state: BucketState, now: number): { state: BucketState; waitMs: number } {
  const current = refill(state, now);
  if (current.tokens >= 1) return { state: { ...current, tokens: current.tokens - 1 }, waitMs: 0 };
  return { state: current, waitMs: Math.ceil(((1 - current.tokens) / current.rate) * 1000) };
}

/**
 * Reserves the next token even if it lies in the future (tokens go negative), so concurrent
 * callers queue up one behind another instead of all waking at the same instant.
 */
export function reserve(state: BucketState, now: number): { state: BucketState; waitMs: number } {
  const current = refill(state, now);
  const next = { ...current, tokens: current.tokens - 1 };
  return { state: next, waitMs: next.tokens >= 0 ? 0 : Math.ceil((-next.tokens / current.rate) * 1000) };
}

export function onThrottled(state: BucketState, now: number): BucketState {
  const current = refill(state, now);
  const rate = Math.max(state.maxRate * MIN_RATE_FRACTION, current.rate * DECREASE_FACTOR);
  // Whatever was saved up was a wrong belief about the provider: start from empty.
  return { ...current, rate, tokens: Math.min(current.tokens, 0) };
}

export function onAccepted(state: BucketState): BucketState {
  return { ...state, rate: Math.min(state.maxRate, state.rate + state.maxRate * INCREASE_FRACTION) };
}
