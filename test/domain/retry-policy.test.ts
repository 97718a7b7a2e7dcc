import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffCeilingMs,
  backoffDelayMs,
  decideRetry,
  type RetryPolicy,
} from '../../lambdas/domain/retry-policy.ts';

const policyArb = fc.record({
  baseMs: fc.integer({ min: 1, max: 10_000 }),
  capMs: fc.integer({ min: 1, max: 3_600_000 }),
  maxAttempts: fc.integer({ min: 1, max: 20 }),
});
const randomArb = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

describe('backoff with full jitter', () => {
  it('stays within [0, min(cap, base·2^(n-1))) and never above the cap', () => {
    fc.assert(
      fc.property(
        policyArb,
        fc.integer({ min: 1, max: 200 }),
        randomArb,
        (policy: RetryPolicy, attempt, r) => {
          const delay = backoffDelayMs(attempt, policy, () => r);
          const ceiling = backoffCeilingMs(attempt, policy);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(ceiling);
          expect(ceiling).toBeLessThanOrEqual(policy.capMs);
          expect(Number.isFinite(delay)).toBe(true);
        },
      ),
    );
  });

  it('uses the whole jitter range: r → 0 gives 0, r → 1 approaches the ceiling', () => {
    const policy = { baseMs: 1000, capMs: 900_000, maxAttempts: 8 };
    expect(backoffDelayMs(3, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(3, policy, () => 0.999999)).toBe(3999);
    expect(backoffCeilingMs(30, policy)).toBe(900_000);
  });

  it('clamps a misbehaving random source instead of exceeding the ceiling', () => {
    const policy = { baseMs: 1000, capMs: 5000, maxAttempts: 8 };
    expect(backoffDelayMs(2, policy, () => 7)).toBeLessThan(2000);
    expect(backoffDelayMs(2, policy, () => -1)).toBe(0);
  });
});

describe('decideRetry', () => {
  it('never schedules at or past the deadline, never past max attempts, never above the cap without advice', () => {
    fc.assert(
      fc.property(
        policyArb,
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 0, max: 10 ** 12 }),
        fc.integer({ min: 0, max: 10 ** 8 }),
        fc.option(fc.integer({ min: 0, max: 10 ** 7 }), { nil: undefined }),
        randomArb,
        (policy, attempt, now, untilDeadline, retryAfterMs, r) => {
          const deadline = now + untilDeadline;
          const decision = decideRetry({ attempt, now, deadline, retryAfterMs, policy, random: () => r });
          if (attempt >= policy.maxAttempts) {
            expect(decision).toEqual({ kind: 'give_up', reason: 'attempts_exhausted' });
            return;
          }
          if (decision.kind === 'give_up') {
            expect(decision.reason).toBe('deadline_exceeded');
            return;
          }
          expect(decision.at).toBeLessThan(deadline);
          expect(decision.at).toBe(now + decision.delayMs);
          if (retryAfterMs === undefined) {
            expect(decision.basis).toBe('backoff');
            expect(decision.delayMs).toBeLessThanOrEqual(policy.capMs);
          } else {
            // The provider's advice is honoured exactly: never earlier than it asked.
            expect(decision.basis).toBe('retry_after');
            expect(decision.delayMs).toBe(retryAfterMs);
          }
        },
      ),
    );
  });

  it('gives up with deadline_exceeded when the advised wait reaches the deadline', () => {
    const policy = { baseMs: 1000, capMs: 900_000, maxAttempts: 8 };
    expect(
      decideRetry({ attempt: 1, now: 0, deadline: 5000, retryAfterMs: 5000, policy, random: () => 0.5 }),
    ).toEqual({
      kind: 'give_up',
      reason: 'deadline_exceeded',
    });
    expect(
      decideRetry({ attempt: 1, now: 0, deadline: 5001, retryAfterMs: 5000, policy, random: () => 0.5 }),
    ).toMatchObject({
      kind: 'retry',
      at: 5000,
    });
  });
});
