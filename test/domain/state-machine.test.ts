import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import {
  ALLOWED_TRANSITIONS,
  assertTransition,
  IllegalTransitionError,
  INTENT_STATES,
  isTerminal,
  isUnresolved,
  Reason,
} from '../../lambdas/domain/state-machine.ts';
import { planTransition } from '../../lambdas/domain/transition.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';
import { ledgerOpArb, runLedgerSequence } from '../helpers/ledger-properties.ts';

describe('state machine table', () => {
  it('matches docs/architecture.md §3', () => {
    expect(ALLOWED_TRANSITIONS).toEqual({
      reserved: ['sending', 'suppressed', 'failed'],
      sending: ['accepted', 'retry_scheduled', 'unknown', 'failed'],
      retry_scheduled: ['sending', 'failed'],
      unknown: ['accepted', 'retry_scheduled', 'failed'],
      accepted: ['delivered', 'failed'],
      delivered: [],
      failed: [],
      suppressed: [],
    });
  });

  it('never lets accepted or unknown go straight back to sending (no blind resend)', () => {
    expect(() => assertTransition('accepted', 'sending')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('unknown', 'sending')).toThrow(IllegalTransitionError);
  });

  it('classifies terminal and unresolved states', () => {
    expect(INTENT_STATES.filter(isTerminal)).toEqual(['delivered', 'failed', 'suppressed']);
    expect(INTENT_STATES.filter(isUnresolved)).toEqual(['reserved', 'sending', 'retry_scheduled', 'unknown']);
  });
});

describe('planTransition', () => {
  it('refuses an illegal move with a typed error', () => {
    const intent = newIntent();
    expect(() =>
      planTransition(intent, { to: 'delivered', reason: Reason.deliveryReported, at: T0 }, TEST_TIMING),
    ).toThrow(IllegalTransitionError);
  });

  it('stamps seq = version + 1 and keeps earlier records', () => {
    const intent = newIntent();
    const claim = decideClaim(intent, { now: T0 + 5, workerId: 'w1', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error('expected a claim');
    expect(claim.plan.record).toEqual({
      seq: 2,
      at: T0 + 5,
      from: 'reserved',
      to: 'sending',
      reason: 'claimed',
      attempt: 1,
    });
    expect(claim.plan.next.transitions[0]).toBe(intent.transitions[0]);
    expect(claim.plan.next.leaseExpiresAt).toBe(T0 + 5 + TEST_TIMING.leaseMs);
    // The due time it had as `reserved` (earlier than the lease end) is kept: no index write.
    expect(claim.plan.next.dueAt).toBe(T0 + TEST_TIMING.leaseMs);
  });
});

describe('decideClaim', () => {
  it('leaves rows in any state but reserved / retry_scheduled', () => {
    const intent = newIntent();
    const claim = decideClaim(intent, { now: T0, workerId: 'w1', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error('expected a claim');
    expect(decideClaim(claim.plan.next, { now: T0, workerId: 'w2', timing: TEST_TIMING })).toEqual({
      kind: 'leave',
      why: 'not_claimable',
    });
  });

  it('does not let an early message jump a scheduled retry', () => {
    const intent = newIntent();
    const claim = decideClaim(intent, { now: T0, workerId: 'w1', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error('expected a claim');
    const retry = planOutcome(
      claim.plan.next,
      { kind: 'retryable', code: 'throttled', throttled: true, retryAfterMs: 30_000 },
      {
        now: T0 + 10,
        provider: 'p',
        policy: { baseMs: 1000, capMs: 10_000, maxAttempts: 5 },
        random: () => 0.5,
        timing: TEST_TIMING,
      },
    );
    expect(retry.next.state).toBe('retry_scheduled');
    expect(retry.next.nextAttemptAt).toBe(T0 + 30_010);
    expect(decideClaim(retry.next, { now: T0 + 20_000, workerId: 'w1', timing: TEST_TIMING })).toEqual({
      kind: 'leave',
      why: 'not_due_yet',
    });
    expect(decideClaim(retry.next, { now: T0 + 30_010, workerId: 'w1', timing: TEST_TIMING }).kind).toBe(
      'claim',
    );
  });
});

describe('planOutcome', () => {
  const ctx = {
    provider: 'ses',
    policy: { baseMs: 1000, capMs: 10_000, maxAttempts: 2 },
    random: () => 0.5,
    timing: TEST_TIMING,
  };
  const sending = () => {
    const claim = decideClaim(newIntent(), { now: T0, workerId: 'w1', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error('expected a claim');
    return claim.plan.next;
  };

  it('accepted stores the receipt, drops the envelope and lease, and keeps its due time (follow-up)', () => {
    const row = sending();
    const plan = planOutcome(row, { kind: 'accepted', receiptId: 'm-1' }, { ...ctx, now: T0 + 1 });
    expect(plan.next).toMatchObject({ state: 'accepted', providerReceiptId: 'm-1', provider: 'ses' });
    expect(plan.next.envelope).toBeUndefined();
    expect(plan.next.leaseOwner).toBeUndefined();
    // Still owed a final delivery report, at the index key it had: the outcome write moves no key.
    expect(plan.next.dueAt).toBe(row.dueAt);
  });

  it('ambiguous records unknown with the timeout reason, due for reconciliation at once', () => {
    const plan = planOutcome(sending(), { kind: 'ambiguous', code: 'timeout' }, { ...ctx, now: T0 + 1 });
    expect(plan.record).toMatchObject({ to: 'unknown', reason: 'provider_timeout', attempt: 1 });
    expect(plan.next.dueAt).toBe(T0 + 1);
    expect(plan.next.envelope).toBeDefined();
  });

  it('permanent rejection fails; retries stop at max attempts', () => {
    expect(
      planOutcome(sending(), { kind: 'rejected', code: 'x', permanent: true }, { ...ctx, now: T0 + 1 })
        .record,
    ).toMatchObject({
      to: 'failed',
      reason: 'provider_rejected',
    });
    const exhausted = { ...sending(), attempts: 2 };
    expect(
      planOutcome(
        exhausted,
        { kind: 'retryable', code: 'http_503', throttled: false },
        { ...ctx, now: T0 + 1 },
      ).record,
    ).toMatchObject({ to: 'failed', reason: 'attempts_exhausted' });
  });
});

describe('random operation sequences (in-memory ledger)', () => {
  it('never write an illegal transition; records stay append-only and ordered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ledgerOpArb, { maxLength: 40 }), fc.boolean(), async (ops, watched) => {
        await runLedgerSequence(new MemoryLedgerStore(), ops, watched);
      }),
      { numRuns: 300 },
    );
  });
});
