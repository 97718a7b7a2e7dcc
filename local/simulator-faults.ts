/**
 * The fault controls every provider simulator shares: the transport faults (slow accept, slow
 * drop, resets), the seeded-probability mix and their validation. Each simulator adds its own
 * `status` fault, answered in its provider's words.
 */

/** Upper bound for any configured hold, so a mistyped fault cannot hang a test run for hours. */
export const MAX_DELAY_MS = 10 * 60_000;

export type TransportFault =
  /** Take the message, then hold the answer for `delayMs`: "slow accept", the client may time out. */
  | { readonly kind: 'timeout_after_accept'; readonly delayMs: number }
  /** Hold for `delayMs`, take nothing, then answer 5xx if the client is still there: "slow drop". */
  | { readonly kind: 'timeout_before_accept'; readonly delayMs: number }
  /** Take the message, then destroy the socket without answering. */
  | { readonly kind: 'reset_after_accept' }
  /** Destroy the socket, taking nothing. */
  | { readonly kind: 'reset_before_accept' };

/** Per send call, drawn from the seeded PRNG when no scripted fault is queued; sum ≤ 1. */
export interface FaultProbabilities {
  readonly timeoutAfterAccept: number;
  readonly timeoutBeforeAccept: number;
  readonly status500: number;
  readonly status429: number;
}

export const NO_FAULT_PROBABILITIES: FaultProbabilities = {
  timeoutAfterAccept: 0,
  timeoutBeforeAccept: 0,
  status500: 0,
  status429: 0,
};

export function validDelay(value: unknown, name: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_DELAY_MS)) {
    throw new RangeError(`${name} must be between 0 and ${MAX_DELAY_MS} ms`);
  }
  return value;
}

/** A transport fault checked; `undefined` when `f.kind` is not one (the caller's own kinds). */
export function validateTransportFault(f: Record<string, unknown>): TransportFault | undefined {
  switch (f.kind) {
    case 'timeout_after_accept':
    case 'timeout_before_accept':
      return { kind: f.kind, delayMs: validDelay(f.delayMs, `${f.kind}.delayMs`) };
    case 'reset_after_accept':
    case 'reset_before_accept':
      return { kind: f.kind };
    default:
      return undefined;
  }
}

/** A status fault's shared fields: a 4xx/5xx status and an optional whole Retry-After. */
export function validateStatusFields(f: Record<string, unknown>): {
  status: number;
  retryAfterSeconds?: number;
} {
  if (!Number.isInteger(f.status) || (f.status as number) < 400 || (f.status as number) > 599) {
    throw new RangeError('status fault needs a 4xx/5xx status');
  }
  if (
    f.retryAfterSeconds !== undefined &&
    !(Number.isInteger(f.retryAfterSeconds) && (f.retryAfterSeconds as number) >= 0)
  ) {
    throw new RangeError('retryAfterSeconds must be a non-negative integer');
  }
  return {
    status: f.status as number,
    ...(f.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: f.retryAfterSeconds as number }),
  };
}

/** `current` with `patch` applied, each in [0, 1] and summing to at most 1; else a RangeError. */
export function mergeProbabilities(
  current: FaultProbabilities,
  patch: Partial<FaultProbabilities>,
): FaultProbabilities {
  const merged = { ...current, ...patch };
  let sum = 0;
  for (const [key, p] of Object.entries(merged)) {
    if (typeof p !== 'number' || !(p >= 0 && p <= 1))
      throw new RangeError(`probabilities.${key} must be in [0, 1]`);
    sum += p;
  }
  if (sum > 1 + 1e-9) throw new RangeError('probabilities must sum to at most 1');
  return merged;
}
