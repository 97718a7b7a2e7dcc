import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRIORITIES, type Priority } from '../../lambdas/domain/priority.ts';
import {
  afterAdvance,
  budgetRules,
  firstWrite,
  grant,
  tokenTimes,
  toUs,
} from '../../lambdas/domain/rate-budget.ts';

/** The clock item as the stores apply the writes: one integer, atomic operations. */
function applyBooking(
  clock: { at: number | undefined },
  lastSeen: number | undefined,
  nowMs: number,
  count: number,
  lane: Priority,
  rules = budgetRules(25),
) {
  const nowUs = toUs(nowMs);
  const write = firstWrite(lastSeen, nowUs, count, rules);
  if (write.kind === 'restart' && (clock.at === undefined || clock.at <= write.ifAtOrBeforeUs)) {
    clock.at = write.toUs;
    return grant(nowUs, nowUs, count, lane, rules);
  }
  for (;;) {
    clock.at = (clock.at ?? 0) + count * rules.spacingUs;
    const result = afterAdvance(clock.at, nowUs, count, rules);
    if (result.kind === 'granted') return grant(result.startUs, nowUs, count, lane, rules);
    if (clock.at === result.ifEqualsUs) {
      clock.at = result.toUs;
      return grant(nowUs, nowUs, count, lane, rules);
    }
  }
}

describe('shared rate budget: the booking rule', () => {
  it('spaces tokens 1/R apart on one clock, whoever books', () => {
    const clock = { at: undefined as number | undefined };
    const a = applyBooking(clock, undefined, 1_000, 3, 'bulk');
    const b = applyBooking(clock, a.clockMs * 1000, 1_000, 2, 'bulk');
    expect(tokenTimes(a)).toEqual([1_000, 1_040, 1_080]);
    expect(tokenTimes(b)).toEqual([1_120, 1_160]);
  });

  it('an idle clock is pulled up to now: tokens not used are gone', () => {
    const clock = { at: toUs(500) };
    // This process last saw a clock in the future (stale): the advance lands in the past.
    const g = applyBooking(clock, toUs(2_000), 10_000, 2, 'standard');
    expect(g.firstAtMs).toBe(10_000);
    expect(clock.at).toBe(toUs(10_080));
  });

  it('a critical booking goes ahead of booked bulk tokens by at most its lead', () => {
    const rules = budgetRules(25, 500);
    const clock = { at: undefined as number | undefined };
    const bulk = applyBooking(clock, undefined, 0, 50, 'bulk', rules); // 2 s booked ahead
    expect(bulk.clockMs).toBe(2_000);
    const critical = applyBooking(clock, toUs(bulk.clockMs), 100, 1, 'critical', rules);
    expect(critical.firstAtMs).toBe(1_500);
    const standard = applyBooking(clock, toUs(critical.clockMs), 100, 1, 'standard', rules);
    expect(standard.firstAtMs).toBe(2_040 - 250);
    const later = applyBooking(clock, toUs(standard.clockMs), 100, 1, 'bulk', rules);
    // Bulk gives the tokens back: its next one comes after both.
    expect(later.firstAtMs).toBe(2_080);
  });

  it('holds the rate: in any window at most one token per spacing, plus the lead’s worth of tokens', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 300 }),
            count: fc.integer({ min: 1, max: 10 }),
            lane: fc.constantFrom(...PRIORITIES),
            // Which process books: each has its own (possibly stale) view of the clock.
            process: fc.integer({ min: 0, max: 4 }),
          }),
          { minLength: 1, maxLength: 200 },
        ),
        (rate, leadMs, bookings) => {
          const rules = budgetRules(rate, leadMs);
          const clock = { at: undefined as number | undefined };
          const seen = new Map<number, number>();
          const times: number[] = [];
          let now = 0;
          for (const b of bookings) {
            now += b.gap;
            const g = applyBooking(clock, seen.get(b.process), now, b.count, b.lane, rules);
            seen.set(b.process, toUs(g.clockMs));
            for (const t of tokenTimes(g)) {
              expect(t).toBeGreaterThanOrEqual(now);
              times.push(t);
            }
          }
          times.sort((x, y) => x - y);
          const spacing = rules.spacingUs / 1000;
          const leadTokens = Math.ceil((leadMs * 1000) / rules.spacingUs);
          // Any window [times[i], times[j]]: j − i + 1 tokens in (times[j] − times[i]) ms.
          for (let i = 0; i < times.length; i++) {
            for (let j = i; j < times.length; j += Math.max(1, Math.floor(times.length / 20))) {
              const span = (times[j] as number) - (times[i] as number);
              expect(j - i + 1).toBeLessThanOrEqual(Math.floor(span / spacing + 1e-9) + 1 + leadTokens);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('without leads the tokens never come closer than the spacing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ gap: fc.integer({ min: 0, max: 200 }), count: fc.integer({ min: 1, max: 10 }) }),
          {
            minLength: 1,
            maxLength: 100,
          },
        ),
        (bookings) => {
          const rules = budgetRules(50, 0);
          const clock = { at: undefined as number | undefined };
          let seen: number | undefined;
          let now = 0;
          const times: number[] = [];
          for (const b of bookings) {
            now += b.gap;
            const g = applyBooking(clock, seen, now, b.count, 'bulk', rules);
            seen = toUs(g.clockMs);
            times.push(...tokenTimes(g));
          }
          times.sort((x, y) => x - y);
          for (let i = 1; i < times.length; i++)
            expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(20 - 1e-9);
        },
      ),
    );
  });
});
