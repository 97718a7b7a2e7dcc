import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import {
  isCancelled,
  type OperatorContext,
  operatorDetail,
  planCancel,
  planResolution,
} from '../../lambdas/domain/operator-actions.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import {
  canTransition,
  INTENT_STATES,
  type IntentState,
  Reason,
} from '../../lambdas/domain/state-machine.ts';
import { planTransition } from '../../lambdas/domain/transition.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';
import { assertRowInvariants, TEST_ACTOR } from '../helpers/ledger-properties.ts';

const POLICY = { baseMs: 1000, capMs: 600_000, maxAttempts: 3 };
const CTX: OperatorContext = { timing: TEST_TIMING, policy: POLICY, random: () => 0.5 };
const OUTCOME_CTX = { provider: 'ses', policy: POLICY, random: () => 0.5, timing: TEST_TIMING };

function claimed(row: Intent, now: number): Intent {
  const decision = decideClaim(row, { now, workerId: 'w1', timing: TEST_TIMING });
  if (decision.kind !== 'claim') throw new Error(`expected a claim, got ${decision.why}`);
  return decision.plan.next;
}

function after(row: Intent, outcome: ProviderOutcome, now: number): Intent {
  return planOutcome(row, outcome, { ...OUTCOME_CTX, now }).next;
}

/** A row whose `attempts`-th attempt timed out at `now`. */
function unknownRow(options: { attempts?: number; deadline?: number } = {}): Intent {
  let row = newIntent({ deadline: options.deadline ?? T0 + 86_400_000 });
  const attempts = options.attempts ?? 1;
  let now = T0;
  for (let i = 1; i < attempts; i++) {
    row = after(claimed(row, now), { kind: 'retryable', code: 'http_503', throttled: false }, now + 10);
    now = (row.nextAttemptAt as number) + 1;
  }
  return after(claimed(row, now), { kind: 'ambiguous', code: 'timeout' }, now + 10_000);
}

/** A row in each state, reached through the real planners. */
function rowIn(state: IntentState): Intent {
  const reserved = newIntent();
  const sending = claimed(reserved, T0 + 1);
  switch (state) {
    case 'reserved':
      return reserved;
    case 'sending':
      return sending;
    case 'retry_scheduled':
      return after(
        sending,
        { kind: 'retryable', code: 'throttled', throttled: true, retryAfterMs: 5000 },
        T0 + 2,
      );
    case 'unknown':
      return after(sending, { kind: 'ambiguous', code: 'timeout' }, T0 + 2);
    case 'accepted':
      return after(sending, { kind: 'accepted', receiptId: 'msg-1' }, T0 + 2);
    case 'delivered': {
      const accepted = after(sending, { kind: 'accepted', receiptId: 'msg-1' }, T0 + 2);
      return planTransition(
        accepted,
        { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 3 },
        TEST_TIMING,
      ).next;
    }
    case 'failed':
      return after(sending, { kind: 'rejected', code: 'MessageRejected', permanent: true }, T0 + 2);
    case 'suppressed':
      return planTransition(
        reserved,
        { to: 'suppressed', reason: Reason.onSuppressionList, at: T0 + 1 },
        TEST_TIMING,
      ).next;
  }
}

describe('planResolution', () => {
  const now = T0 + 20 * 60_000;

  it('accepted: unknown → accepted, operator_confirmed_accepted, actor and words recorded, no receipt needed', () => {
    const row = unknownRow();
    const decision = planResolution(
      row,
      {
        outcome: 'accepted',
        reason: 'seen in provider console',
        evidence: 'ticket OPS-7',
        actor: TEST_ACTOR,
        now,
      },
      CTX,
    );
    if (decision.kind !== 'transition') throw new Error('expected a transition');
    expect(decision.plan.record).toEqual({
      seq: row.version + 1,
      at: now,
      from: 'unknown',
      to: 'accepted',
      reason: 'operator_confirmed_accepted',
      attempt: 1,
      detail: 'seen in provider console | evidence: ticket OPS-7',
      actor: TEST_ACTOR,
    });
    expect(decision.plan.next.providerReceiptId).toBeUndefined();
    // Settled: the sealed envelope dropped; still owed a final report (events may still tell).
    expect(decision.plan.next.dueAt).toBeDefined();
    expect(decision.plan.next.envelope).toBeUndefined();
    assertRowInvariants(decision.plan.next);
    // …and a later delivery report may still move it on without a receipt of its own.
    const delivered = planTransition(
      decision.plan.next,
      { to: 'delivered', reason: Reason.deliveryReported, at: now + 1 },
      TEST_TIMING,
    );
    expect(delivered.next.state).toBe('delivered');
  });

  it('not_sent: a deliberate resend due now, counted against the attempt budget', () => {
    const row = unknownRow({ attempts: 2 });
    const decision = planResolution(
      row,
      { outcome: 'not_sent', reason: 'provider support: never received', actor: TEST_ACTOR, now },
      CTX,
    );
    if (decision.kind !== 'transition') throw new Error('expected a transition');
    expect(decision.plan.record).toMatchObject({
      from: 'unknown',
      to: 'retry_scheduled',
      reason: 'operator_confirmed_not_sent',
      attempt: 2,
      detail: 'provider support: never received',
      actor: TEST_ACTOR,
    });
    expect(decision.plan.next.nextAttemptAt).toBe(now);
    expect(decision.plan.next.envelope).toBeDefined();
    // The resend is attempt 3 for the claim.
    const claim = decideClaim(decision.plan.next, { now, workerId: 'w2', timing: TEST_TIMING });
    expect(claim.kind === 'claim' && claim.plan.next.attempts).toBe(3);
    assertRowInvariants(decision.plan.next);
  });

  it('not_sent past the deadline ends the row failed (deadline_exceeded), the operator still named', () => {
    const row = unknownRow({ deadline: T0 + 15 * 60_000 });
    const decision = planResolution(
      row,
      { outcome: 'not_sent', reason: 'never sent', actor: TEST_ACTOR, now },
      CTX,
    );
    if (decision.kind !== 'transition') throw new Error('expected a transition');
    expect(decision.plan.record).toMatchObject({
      to: 'failed',
      reason: 'deadline_exceeded',
      detail: 'operator_confirmed_not_sent: never sent',
      actor: TEST_ACTOR,
    });
  });

  it('not_sent with the attempt budget spent ends failed (attempts_exhausted)', () => {
    const row = unknownRow({ attempts: POLICY.maxAttempts });
    const decision = planResolution(row, { outcome: 'not_sent', reason: 'x', actor: TEST_ACTOR, now }, CTX);
    expect(decision.kind === 'transition' && decision.plan.record).toMatchObject({
      to: 'failed',
      reason: 'attempts_exhausted',
    });
  });

  it('refuses every state but unknown, whatever the outcome', () => {
    for (const state of INTENT_STATES.filter((s) => s !== 'unknown')) {
      for (const outcome of ['accepted', 'not_sent'] as const) {
        expect(planResolution(rowIn(state), { outcome, reason: 'r', actor: TEST_ACTOR, now }, CTX)).toEqual({
          kind: 'not_unknown',
          state,
        });
      }
    }
  });

  it('property: from any unknown row, only legal moves, actor stamped, the row stays well-formed', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: POLICY.maxAttempts }),
        fc.integer({ min: 0, max: 48 * 3_600_000 }),
        fc.integer({ min: 0, max: 48 * 3_600_000 }),
        fc.constantFrom('accepted' as const, 'not_sent' as const),
        fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
        (attempts, deadlineOffset, waited, outcome, evidence) => {
          const row = unknownRow({ attempts, deadline: T0 + 60_000 + deadlineOffset });
          const last = row.transitions[row.transitions.length - 1]?.at as number;
          const at = last + waited;
          const decision = planResolution(
            row,
            { outcome, reason: 'why', evidence, actor: TEST_ACTOR, now: at },
            CTX,
          );
          if (decision.kind !== 'transition') throw new Error('expected a transition');
          const { record, next } = decision.plan;
          expect(canTransition('unknown', record.to)).toBe(true);
          expect(record.actor).toBe(TEST_ACTOR);
          expect(record.detail).toContain(operatorDetail('why', evidence));
          if (outcome === 'accepted') expect(next.state).toBe('accepted');
          else if (next.state === 'retry_scheduled') {
            // A resend only within both budgets.
            expect(at).toBeLessThan(row.deadline);
            expect(row.attempts).toBeLessThan(POLICY.maxAttempts);
          } else {
            expect(next.state).toBe('failed');
            expect(at >= row.deadline || row.attempts >= POLICY.maxAttempts).toBe(true);
          }
          assertRowInvariants(next);
        },
      ),
    );
  });
});

describe('planCancel', () => {
  const request = { reason: 'appointment cancelled', actor: TEST_ACTOR, now: T0 + 60_000 };

  it('ends reserved and retry_scheduled rows failed (cancelled), with the caller and reason', () => {
    for (const state of ['reserved', 'retry_scheduled'] as const) {
      const row = rowIn(state);
      const decision = planCancel(row, request, TEST_TIMING);
      if (decision.kind !== 'cancel') throw new Error(`expected a cancel from ${state}`);
      expect(decision.plan.record).toMatchObject({
        from: state,
        to: 'failed',
        reason: 'cancelled',
        detail: 'appointment cancelled',
        actor: TEST_ACTOR,
      });
      // Nothing left to send with, nothing left for the reconciler, nothing a worker may claim.
      expect(decision.plan.next.envelope).toBeUndefined();
      expect(decision.plan.next.dueAt).toBeUndefined();
      expect(
        decideClaim(decision.plan.next, { now: request.now, workerId: 'w', timing: TEST_TIMING }).kind,
      ).toBe('leave');
      assertRowInvariants(decision.plan.next);
      expect(isCancelled(decision)).toBe(true);
    }
  });

  it('says sending and unknown cannot be called back, and leaves settled rows alone', () => {
    expect(planCancel(rowIn('sending'), request, TEST_TIMING)).toEqual({
      kind: 'in_flight',
      state: 'sending',
    });
    expect(planCancel(rowIn('unknown'), request, TEST_TIMING)).toEqual({
      kind: 'in_flight',
      state: 'unknown',
    });
    for (const state of ['accepted', 'delivered', 'failed', 'suppressed'] as const) {
      const decision = planCancel(rowIn(state), request, TEST_TIMING);
      expect(decision).toEqual({ kind: 'settled', state });
      expect(isCancelled(decision)).toBe(false);
    }
  });

  it('is idempotent: a cancelled row answers already_cancelled and plans nothing', () => {
    const first = planCancel(rowIn('reserved'), request, TEST_TIMING);
    if (first.kind !== 'cancel') throw new Error('expected a cancel');
    const again = planCancel(first.plan.next, { ...request, now: request.now + 1000 }, TEST_TIMING);
    expect(again).toEqual({ kind: 'already_cancelled' });
    expect(isCancelled(again)).toBe(true);
  });

  it('property: in every state, a cancel plans a write exactly when a send is still only intended', () => {
    fc.assert(
      fc.property(fc.constantFrom(...INTENT_STATES), (state) => {
        const decision = planCancel(rowIn(state), request, TEST_TIMING);
        expect(decision.kind === 'cancel').toBe(state === 'reserved' || state === 'retry_scheduled');
        if (decision.kind === 'cancel') expect(canTransition(state, 'failed')).toBe(true);
      }),
    );
  });
});
