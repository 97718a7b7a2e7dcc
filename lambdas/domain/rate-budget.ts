import type { Priority } from './priority.ts';

/**
 * The booking rule of the shared rate budget (docs/architecture.md §11). Pure: the caller owns
 * the clock item and its writes.
 *
 * One clock per channel holds the time at which the next token of the lowest lane is due. A
 * booking of k tokens moves it by k × spacing; the tokens sit on it one spacing apart, so
 * whatever the number of instances booking, the channel sends at the rate. Tokens not used
 * while the channel was idle are gone: a clock in the past is pulled up to `now` (no saved-up
 * burst). A lane with lead L takes its tokens up to L before the clock — ahead of what lower
 * lanes have booked — and still moves the clock by k × spacing, so the lower lanes give the
 * same tokens back later: over any window, at most R × window + R × L tokens.
 *
 * The clock counts microseconds (an integer: conditional writes compare it exactly, and the
 * spacing is rounded up, so the rate is never exceeded by rounding).
 */
export interface BudgetRules {
  /** Microseconds between two tokens: ceil(10^6 / rate). */
  readonly spacingUs: number;
  /** How far ahead of the clock each lane may take its tokens, in microseconds. */
  readonly leadUs: Readonly<Record<Priority, number>>;
}

/** Default lead of the critical lane (standard has half of it, bulk none). */
export const DEFAULT_CRITICAL_LEAD_MS = 500;

export function budgetRules(ratePerSecond: number, criticalLeadMs = DEFAULT_CRITICAL_LEAD_MS): BudgetRules {
  if (!(ratePerSecond > 0)) throw new RangeError(`rate must be positive, got ${ratePerSecond}`);
  const lead = Math.max(0, Math.round(criticalLeadMs * 1000));
  return {
    spacingUs: Math.ceil(1_000_000 / ratePerSecond),
    leadUs: { critical: lead, standard: Math.round(lead / 2), bulk: 0 },
  };
}

export const toUs = (ms: number): number => Math.round(ms * 1000);
export const toMs = (us: number): number => us / 1000;

/** The first write of a booking, from the clock this process saw last. */
export type BookingWrite =
  /** The clock was ahead of now (the channel is busy): move it by the block. */
  | { readonly kind: 'advance'; readonly byUs: number }
  /** The clock was in the past (idle): set it to now + the block, if it still is. */
  | { readonly kind: 'restart'; readonly toUs: number; readonly ifAtOrBeforeUs: number };

export function firstWrite(
  lastSeenUs: number | undefined,
  nowUs: number,
  count: number,
  rules: BudgetRules,
): BookingWrite {
  const byUs = count * rules.spacingUs;
  if (lastSeenUs === undefined || lastSeenUs <= nowUs)
    return { kind: 'restart', toUs: nowUs + byUs, ifAtOrBeforeUs: nowUs };
  return { kind: 'advance', byUs };
}

/** What an `advance` that answered the clock after it means. */
export type AdvanceResult =
  | { readonly kind: 'granted'; readonly startUs: number }
  /**
   * The clock lagged behind now: the block landed in the past. Pull the clock up to `toUs`
   * unless someone booked after us (`ifEqualsUs`); if someone did, book again.
   */
  | { readonly kind: 'pull_up'; readonly toUs: number; readonly ifEqualsUs: number };

export function afterAdvance(
  clockAfterUs: number,
  nowUs: number,
  count: number,
  rules: BudgetRules,
): AdvanceResult {
  const byUs = count * rules.spacingUs;
  const startUs = clockAfterUs - byUs;
  if (startUs >= nowUs) return { kind: 'granted', startUs };
  return { kind: 'pull_up', toUs: nowUs + byUs, ifEqualsUs: clockAfterUs };
}

/** The tokens of one booking: the i-th is due at `firstAtMs + i × spacingMs`. */
export interface Grant {
  readonly firstAtMs: number;
  readonly spacingMs: number;
  readonly count: number;
  /** The channel's clock after this booking (ms): how far ahead the budget is booked. */
  readonly clockMs: number;
}

/** Where the tokens of a block booked at `startUs` go for `lane`: up to its lead before the clock. */
export function grant(
  startUs: number,
  nowUs: number,
  count: number,
  lane: Priority,
  rules: BudgetRules,
): Grant {
  const firstUs = Math.max(nowUs, startUs - rules.leadUs[lane]);
  return {
    firstAtMs: toMs(firstUs),
    spacingMs: toMs(rules.spacingUs),
    count,
    clockMs: toMs(startUs + count * rules.spacingUs),
  };
}

/** The due time of each token of a grant, in ms. */
export function tokenTimes(g: Grant): number[] {
  return Array.from({ length: g.count }, (_, i) => g.firstAtMs + i * g.spacingMs);
}
