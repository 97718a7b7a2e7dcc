import { describe, expect, it } from 'vitest';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { MemoryRateClock } from '../../lambdas/adapters/memory/memory-rate-clock.ts';
import { LANE_BOOKING_HORIZON_MS, laneEventSource } from '../../lambdas/contract/lanes.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { budgetRules } from '../../lambdas/domain/rate-budget.ts';
import { BudgetSendGate } from '../../lambdas/use-cases/budget-send-gate.ts';
import { RateBudget } from '../../lambdas/use-cases/rate-budget.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { ManualClock } from '../helpers/fakes.ts';

/** Two "instances" on one clock item; sleeping advances nobody's time, it records the wait. */
function world(
  options: { rate?: number; leadMs?: number; maxInlineWaitMs?: number; lingerMs?: number } = {},
) {
  const clock = new ManualClock(1_000_000);
  const ledger = new MemoryLedgerStore();
  const rateClock = new MemoryRateClock();
  const waits: number[] = [];
  const instance = () => {
    const budget = new RateBudget(rateClock, { sms: budgetRules(options.rate ?? 25, options.leadMs ?? 500) });
    return new BudgetSendGate({
      holds: new SharedSendGate({ store: ledger, clock, sleep: async () => undefined }),
      budget,
      clock,
      sleep: async (ms) => {
        waits.push(ms);
      },
      ...(options.maxInlineWaitMs !== undefined ? { maxInlineWaitMs: options.maxInlineWaitMs } : {}),
      ...(options.lingerMs !== undefined ? { lingerMs: options.lingerMs } : {}),
    });
  };
  return { clock, ledger, rateClock, waits, instance };
}

describe('BudgetSendGate', () => {
  it('callers waiting together share one booking; their tokens are one spacing apart', async () => {
    const w = world();
    const gate = w.instance();
    const admissions = await Promise.all(Array.from({ length: 10 }, () => gate.admit('sms', 'bulk')));
    expect(admissions.every((a) => a.kind === 'go')).toBe(true);
    // The first caller books alone (block of 1, the clock was idle), the nine that arrived
    // during that write share the next.
    expect(w.rateClock.writes).toBe(2);
    expect(w.waits).toEqual([40, 80, 120, 160, 200, 240, 280, 320, 360]);
  });

  it('with a linger, the first caller waits for the others: the whole batch shares one write', async () => {
    const w = world({ lingerMs: 5 });
    const gate = w.instance();
    await Promise.all(Array.from({ length: 10 }, () => gate.admit('sms', 'bulk')));
    expect(w.rateClock.writes).toBe(1);
    expect(w.waits).toEqual([5, ...Array.from({ length: 9 }, (_, i) => (i + 1) * 40)]);
  });

  it('two instances share the rate: tokens interleave on one clock, never closer than the spacing', async () => {
    const w = world();
    const [a, b] = [w.instance(), w.instance()];
    await Promise.all([
      ...Array.from({ length: 5 }, () => a.admit('sms', 'bulk')),
      ...Array.from({ length: 5 }, () => b.admit('sms', 'bulk')),
    ]);
    const sorted = [0, ...w.waits].sort((x, y) => x - y);
    expect(sorted).toEqual(Array.from({ length: 10 }, (_, i) => i * 40));
  });

  it('a critical caller goes ahead of booked bulk tokens by the lead; standard by half of it', async () => {
    const w = world({ leadMs: 500 });
    const gate = w.instance();
    await Promise.all(Array.from({ length: 50 }, () => gate.admit('sms', 'bulk'))); // 2 s booked
    const wait = async (p: Priority) => {
      w.waits.length = 0;
      await gate.admit('sms', p);
      return w.waits[0] ?? 0;
    };
    expect(await wait('critical')).toBe(2_000 - 500);
    expect(await wait('standard')).toBe(2_040 - 250);
    expect(await wait('bulk')).toBe(2_080);
  });

  describe('the lower lanes in flight as their event sources allow, then one critical caller', () => {
    type Source = { batchSize: number; maxConcurrency: number };
    /** Every record the sources can hold in flight books at once (an instance per batch); then a critical caller. */
    async function criticalWaitBehind(sources: Partial<Record<'standard' | 'bulk', Source>>) {
      const w = world({ rate: 25, leadMs: 500 });
      const instances = Object.entries(sources).flatMap(([lane, source]) =>
        Array.from({ length: source.maxConcurrency }, () => ({ gate: w.instance(), lane, source })),
      );
      await Promise.all(
        instances.flatMap(({ gate, lane, source }) =>
          Array.from({ length: source.batchSize }, () => gate.admit('sms', lane as Priority)),
        ),
      );
      w.waits.length = 0;
      const critical = await w.instance().admit('sms', 'critical');
      return { critical, wait: w.waits[0] ?? 0 };
    }

    it('capped from the rate, critical waits at most the lower horizons less its lead, at any channel concurrency', async () => {
      const { standard, bulk } = LANE_BOOKING_HORIZON_MS;
      for (const maxConcurrency of [2, 10, 50, 200]) {
        const channel = { batchSize: 10, maxConcurrency };
        const capped = {
          standard: laneEventSource('standard', channel, 25),
          bulk: laneEventSource('bulk', channel, 25),
        };
        expect(capped.bulk.batchSize * capped.bulk.maxConcurrency).toBeLessThanOrEqual((25 * bulk) / 1000);
        expect(laneEventSource('critical', channel, 25)).toEqual(channel);
        const behindBulk = await criticalWaitBehind({ bulk: capped.bulk });
        expect(behindBulk.critical).toEqual({ kind: 'go' });
        expect(behindBulk.wait).toBeLessThanOrEqual(bulk - 500);
        const behindBoth = await criticalWaitBehind(capped);
        expect(behindBoth.critical).toEqual({ kind: 'go' });
        expect(behindBoth.wait).toBeLessThanOrEqual(standard + bulk - 500);
      }
    });

    it('through a batching provider the cap counts calls: an invocation keeps a full call, calls in flight stay within R × horizon (or 2)', () => {
      const channel = { batchSize: 100, maxConcurrency: 50 };
      // 1 call/s, 5 e-mails per call: R × 0.8 s is under one call; one full call per invocation, 2 invocations.
      expect(laneEventSource('bulk', channel, 1, 5)).toEqual({ batchSize: 5, maxConcurrency: 2 });
      // 25 calls/s, 10 per call: 20 calls in 0.8 s → 10 calls (100 records) per invocation, 2 invocations.
      expect(laneEventSource('standard', channel, 25, 10)).toEqual({ batchSize: 100, maxConcurrency: 2 });
      // 25 calls/s, 4 per call: 20 calls → batch 40 (10 calls), 2 invocations; never above the channel's.
      expect(laneEventSource('bulk', channel, 25, 4)).toEqual({ batchSize: 40, maxConcurrency: 2 });
      for (const [rate, perCall] of [
        [1, 5],
        [4, 10],
        [25, 10],
        [60, 100],
      ] as const) {
        const s = laneEventSource('bulk', channel, rate, perCall);
        const callsInFlight = Math.ceil(s.batchSize / perCall) * s.maxConcurrency;
        expect(callsInFlight).toBeLessThanOrEqual(Math.max(2, (rate * LANE_BOOKING_HORIZON_MS.bulk) / 1000));
        expect(s.batchSize).toBeGreaterThanOrEqual(Math.min(perCall, channel.batchSize));
      }
      // One record per call is the rule as it was.
      expect(laneEventSource('bulk', channel, 25, 1)).toEqual(laneEventSource('bulk', channel, 25));
    });

    it('through a batching provider an invocation holds whole calls: no call of the remainder spends a token on fewer records', () => {
      // The deployed e-mail source: 10 records (EMAIL_BATCH_MAX below 10), 5 or 10 at once.
      for (const maxConcurrency of [5, 10]) {
        const channel = { batchSize: 10, maxConcurrency };
        // 25 calls/s, 3 per call: 10 records would be calls of 3, 3, 3 and 1 (4 tokens for 10
        // e-mails, 2.5 a call); 9 are three full calls.
        expect(laneEventSource('bulk', channel, 25, 3)).toEqual({
          batchSize: 9,
          maxConcurrency: Math.min(maxConcurrency, 6),
        });
        expect(laneEventSource('standard', channel, 25, 4).batchSize).toBe(8);
        expect(laneEventSource('bulk', channel, 25, 5).batchSize).toBe(10);
        for (const perCall of [2, 3, 4, 5, 6, 7, 8, 9, 10]) {
          for (const rate of [1, 5, 20, 25, 60]) {
            const s = laneEventSource('bulk', channel, rate, perCall);
            expect(s.batchSize % perCall).toBe(0);
            expect(s.batchSize).toBeGreaterThanOrEqual(perCall);
            const callsInFlight = (s.batchSize / perCall) * s.maxConcurrency;
            expect(callsInFlight).toBeLessThanOrEqual(
              Math.max(2, (rate * LANE_BOOKING_HORIZON_MS.bulk) / 1000),
            );
          }
        }
      }
      // Critical is not capped, and a source smaller than one call is left as it is.
      expect(laneEventSource('critical', { batchSize: 10, maxConcurrency: 5 }, 25, 3)).toEqual({
        batchSize: 10,
        maxConcurrency: 5,
      });
      expect(laneEventSource('bulk', { batchSize: 10, maxConcurrency: 5 }, 25, 100).batchSize).toBe(10);
    });

    it('uncapped (the negative control), critical waits behind bulk for seconds, or is deferred', async () => {
      const { critical, wait } = await criticalWaitBehind({ bulk: { batchSize: 10, maxConcurrency: 50 } });
      expect(critical.kind === 'wait' || wait > 2_000).toBe(true);
    });
  });

  it('defers a caller whose lane is booked beyond the inline wait, without booking', async () => {
    const w = world({ rate: 10, maxInlineWaitMs: 1_000 });
    const gate = w.instance();
    await Promise.all(Array.from({ length: 30 }, () => gate.admit('sms', 'bulk'))); // 3 s booked
    const writes = w.rateClock.writes;
    const admission = await gate.admit('sms', 'bulk');
    expect(admission).toEqual({ kind: 'wait', untilMs: w.clock.now() + 3_000 - 500 });
    expect(w.rateClock.writes).toBe(writes);
    expect(gate.deferrals).toBe(1);
    // So is a critical caller whose lead does not bring the clock within reach.
    expect((await gate.admit('sms', 'critical')).kind).toBe('wait');
  });

  it('a closed hold gate comes first: the caller waits without booking a token', async () => {
    const w = world();
    const gate = w.instance();
    await gate.throttled('sms', w.clock.now() + 5_000);
    expect(await gate.admit('sms', 'critical')).toEqual({
      kind: 'wait',
      untilMs: w.clock.now() + 5_000,
      held: { reason: 'provider_throttled' },
    });
    expect(w.rateClock.writes).toBe(0);
  });

  it('a channel without a budget goes at once', async () => {
    const w = world();
    expect(await w.instance().admit('email')).toEqual({ kind: 'go' });
    expect(w.rateClock.writes).toBe(0);
  });
});
