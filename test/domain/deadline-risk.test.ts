import { describe, expect, it } from 'vitest';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import { estimateSendAt, isDeadlineAtRisk, planDeadlineRisk } from '../../lambdas/domain/deadline-risk.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

/** How the sender records an outcome in these tests. */
const OUTCOME_CONTEXT = {
  provider: 'twilio',
  policy: { baseMs: 1000, capMs: 60_000, maxAttempts: 4 },
  random: () => 0.5,
  timing: TEST_TIMING,
};

describe('deadline risk: the estimate of when a channel is sent', () => {
  const options = { leadMs: 0, pipelineMs: 100 };

  it('counts the references ahead of its lane at the rate', () => {
    const backlog = { ratePerSecond: 25, ahead: { critical: 5, standard: 3_005, bulk: 13_005 } };
    expect(estimateSendAt(backlog, 'critical', 0, options)).toBe(200 + 100);
    expect(estimateSendAt(backlog, 'standard', 0, options)).toBe(120_200 + 100);
    expect(estimateSendAt(backlog, 'bulk', 0, options)).toBe(520_200 + 100);
  });

  it('adds what the budget has booked beyond the lane lead, and the items ahead in the same batch', () => {
    const backlog = { ratePerSecond: 10, ahead: {}, clockMs: 3_000 };
    expect(estimateSendAt(backlog, 'bulk', 1_000, { ...options, aheadExtra: 4 })).toBe(
      1_000 + 2_000 + 400 + 100,
    );
    expect(estimateSendAt(backlog, 'critical', 1_000, { leadMs: 500, pipelineMs: 0 })).toBe(2_500);
    // A clock in the past books nothing ahead.
    expect(estimateSendAt({ ...backlog, clockMs: 0 }, 'bulk', 1_000, { leadMs: 0, pipelineMs: 0 })).toBe(
      1_000,
    );
  });

  it('is at risk only when the estimate passes the deadline', () => {
    expect(isDeadlineAtRisk(10_001, 10_000)).toBe(true);
    expect(isDeadlineAtRisk(10_000, 10_000)).toBe(false);
  });
});

describe('deadline risk: the warning on the row', () => {
  it('one record state → state with the estimate and the durable marker, due now; at most once', () => {
    const row = newIntent({ channel: 'sms', createdAt: T0, deadline: T0 + 10_000 });
    const plan = planDeadlineRisk(row, { at: T0, estimatedSendAt: T0 + 120_000 });
    expect(plan?.record).toMatchObject({
      from: 'reserved',
      to: 'reserved',
      reason: 'deadline_at_risk',
      seq: 2,
    });
    expect(plan?.record.detail).toBe(`estimatedSendAt ${new Date(T0 + 120_000).toISOString()}`);
    expect(plan?.next).toMatchObject({ state: 'reserved', version: 2, escalationPending: true, dueAt: T0 });
    expect(plan && planDeadlineRisk(plan.next, { at: T0 + 1, estimatedSendAt: T0 + 1 })).toBeUndefined();
  });

  it('the warning survives the claim and a retry while unresolved, and goes when the row settles', () => {
    const row = newIntent({ channel: 'sms', createdAt: T0, deadline: T0 + 3_600_000 });
    const warned = planDeadlineRisk(row, { at: T0, estimatedSendAt: T0 + 4_000_000 })?.next;
    if (!warned) throw new Error('no plan');
    const claim = decideClaim(warned, { now: T0 + 1, workerId: 'w', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error(claim.why);
    expect(claim.plan.next.escalationPending).toBe(true);
    const accepted = planOutcome(
      claim.plan.next,
      { kind: 'accepted', receiptId: 'SM1' },
      { ...OUTCOME_CONTEXT, now: T0 + 2 },
    );
    expect(accepted.next.escalationPending).toBeUndefined();
  });

  it("an operator hold's pending marker still goes with the row's next move; with a warning too, the hold is what is published first", () => {
    const claimOf = (row: Intent, now: number) => {
      const claim = decideClaim(row, { now, workerId: 'w', timing: TEST_TIMING });
      if (claim.kind !== 'claim') throw new Error(claim.why);
      return claim.plan.next;
    };
    const row = newIntent({ channel: 'sms', createdAt: T0, deadline: T0 + 3_600_000 });
    const held = planOutcome(
      claimOf(row, T0 + 1),
      { kind: 'operator_action_required', code: 'spend_limit', retryAfterMs: 1_000 },
      { ...OUTCOME_CONTEXT, now: T0 + 2 },
    ).next;
    expect(held.escalationPending).toBe(true);
    expect(claimOf(held, T0 + 5_000).escalationPending).toBeUndefined();

    const warned = planDeadlineRisk(row, { at: T0, estimatedSendAt: T0 + 4_000_000 })?.next as Intent;
    const warnedAndHeld = planOutcome(
      claimOf(warned, T0 + 1),
      { kind: 'operator_action_required', code: 'spend_limit', retryAfterMs: 1_000 },
      { ...OUTCOME_CONTEXT, now: T0 + 2 },
    ).next;
    expect(warnedAndHeld.transitions.at(-1)?.reason).toBe('operator_action_required');
    expect(warnedAndHeld.escalationPending).toBe(true);
  });
});
