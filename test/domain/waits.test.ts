import { describe, expect, it } from 'vitest';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { describeNextStep, nextStepAt, nextStepOf } from '../../lambdas/domain/next-step.ts';
import { decideReconcile } from '../../lambdas/domain/reconcile.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { factsOf, planFact, planTransition } from '../../lambdas/domain/transition.ts';
import {
  checkRetryAt,
  currentWait,
  MAX_WAIT_RECORDS_PER_ROW,
  planDeadlineExceeded,
  planWait,
  type Wait,
  waitDetail,
  waitOf,
} from '../../lambdas/domain/waits.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

/**
 * No row waits in silence (docs/architecture.md §4 "No silent waits"): the wait records, their
 * bounds, the check's backoff, the deadline's explanation and what happens next, on the domain.
 */

const POLICY = { baseMs: 1000, capMs: 60_000, maxAttempts: 4 };
const held = (until: number, reason = 'provider_throttled'): Wait => ({
  kind: 'channel_held',
  provider: 'twilio',
  reason,
  until,
});
const check = (code: string): Wait => ({
  kind: 'provider_check_unavailable',
  provider: 'infrai',
  check: 'suppression_list',
  code,
});

function waited(row: Intent, wait: Wait, at: number, wakeAt = at + 5_000): Intent {
  const plan = planWait(row, wait, { at, wakeAt }, TEST_TIMING);
  if (!plan) throw new Error('nothing recorded');
  return plan.next;
}

describe('wait records', () => {
  it('a hold is recorded once (reason, provider, until when), with the row due a lease after it ends', () => {
    const row = newIntent({ channel: 'sms' });
    const until = T0 + 600_000;
    const once = waited(row, held(until), T0 + 10, until);
    expect(once.state).toBe('reserved');
    expect(once.transitions.at(-1)).toEqual({
      seq: 2,
      at: T0 + 10,
      from: 'reserved',
      to: 'reserved',
      reason: 'channel_held',
      detail: `twilio held the channel: provider_throttled until ${new Date(until).toISOString()}`,
    });
    expect(once.dueAt).toBe(until + TEST_TIMING.leaseMs);
    // The same hold deferring the row again: nothing to record.
    expect(planWait(once, held(until), { at: T0 + 20, wakeAt: until }, TEST_TIMING)).toBeUndefined();
    // A later hold (the gate closed again, or extended) is news.
    expect(
      planWait(once, held(until + 60_000), { at: T0 + 30, wakeAt: until + 60_000 }, TEST_TIMING),
    ).toBeDefined();
    expect(waitOf(once.transitions.at(-1) as never)).toEqual(held(until));
  });

  it('a check is recorded once per distinct cause in the row’s state, and again after the row moved', () => {
    let row = newIntent();
    row = waited(row, check('infrai_http_500'), T0 + 1);
    expect(
      planWait(row, check('infrai_http_500'), { at: T0 + 2, wakeAt: T0 + 9 }, TEST_TIMING),
    ).toBeUndefined();
    row = waited(row, check('infrai_unreachable'), T0 + 3);
    expect(row.transitions.filter((t) => t.reason === 'provider_check_unavailable')).toHaveLength(2);
    expect(currentWait(row)?.wait).toEqual(check('infrai_unreachable'));
    // A claim and a retryable answer: a new state, where the same cause is news again.
    const claim = decideClaim(row, { now: T0 + 10, workerId: 'w', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error(claim.why);
    const retry = planOutcome(
      claim.plan.next,
      { kind: 'retryable', code: 'http_503', throttled: false },
      { now: T0 + 20, provider: 'infrai', policy: POLICY, random: () => 0.5, timing: TEST_TIMING },
    ).next;
    expect(currentWait(retry)).toBeUndefined();
    expect(
      planWait(retry, check('infrai_http_500'), { at: T0 + 30, wakeAt: T0 + 99 }, TEST_TIMING),
    ).toBeDefined();
  });

  it(`a row takes at most ${MAX_WAIT_RECORDS_PER_ROW} wait records; they are no facts`, () => {
    let row = newIntent();
    for (let i = 0; i < MAX_WAIT_RECORDS_PER_ROW; i++) row = waited(row, held(T0 + 1000 * (i + 1)), T0 + i);
    expect(
      planWait(row, held(T0 + 99_000), { at: T0 + 50, wakeAt: T0 + 99_000 }, TEST_TIMING),
    ).toBeUndefined();
    const failed = planDeadlineExceeded(row, row.deadline, TEST_TIMING).next;
    expect(factsOf(failed)).toEqual([]);
    const fact = planFact(failed, { reason: Reason.deliveryReported, at: row.deadline + 1 }).next;
    expect(factsOf(fact)).toHaveLength(1);
  });

  it('only claimable rows wait; a pending escalation keeps the row due now', () => {
    const sending = decideClaim(newIntent(), { now: T0, workerId: 'w', timing: TEST_TIMING });
    if (sending.kind !== 'claim') throw new Error(sending.why);
    expect(
      planWait(sending.plan.next, held(T0 + 9), { at: T0, wakeAt: T0 + 9 }, TEST_TIMING),
    ).toBeUndefined();
    const pending: Intent = { ...newIntent(), escalationPending: true, dueAt: T0 };
    expect(waited(pending, held(T0 + 600_000), T0 + 1).dueAt).toBe(T0);
  });

  it('details carry codes only: anything else is dropped from a cause', () => {
    const detail = waitDetail(check('bad code <script>@example.com'));
    expect(detail).toBe('infrai suppression_list not answered: badcodescriptexample.com');
  });
});

describe('the pre-send check backs off with the retry policy, until the deadline', () => {
  it('asks again at least the base apart, the waits growing with how long the row has waited', () => {
    let row = newIntent({ deadline: T0 + 3_600_000 });
    let now = T0;
    const delays: number[] = [];
    for (let i = 0; i < 12; i++) {
      const at = checkRetryAt(row, now, POLICY, () => 0.5);
      if (i === 0) row = waited(row, check('infrai_http_500'), now, at);
      delays.push(at - now);
      now = at;
    }
    expect(delays[0]).toBe(POLICY.baseMs);
    expect(delays.every((d) => d >= POLICY.baseMs && d <= POLICY.capMs)).toBe(true);
    expect(delays.at(-1)).toBeGreaterThan(4 * POLICY.baseMs);
    // Never decreasing at a fixed jitter: a doubling of the wait raises the ceiling.
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] as number);
  });

  it('never past the deadline', () => {
    const row = newIntent({ deadline: T0 + 2_000 });
    expect(checkRetryAt(row, T0 + 1_500, POLICY, () => 0.99)).toBe(T0 + 2_000);
  });
});

describe('a row that reaches its deadline says why', () => {
  it('the hold it waited on, in the deadline_exceeded record (the sender and the reconciler alike)', () => {
    const row = waited(newIntent({ deadline: T0 + 300_000 }), held(T0 + 600_000), T0 + 5, T0 + 600_000);
    expect(row.dueAt).toBe(T0 + 300_000);
    const action = decideReconcile(row, {
      now: T0 + 300_000,
      timing: TEST_TIMING,
      unknownGraceMs: 60_000,
      unknownPolicy: 'escalate',
      recheckMs: 60_000,
      policy: POLICY,
      random: () => 0.5,
    });
    if (action.kind !== 'transition') throw new Error(action.kind);
    expect(action.plan.record).toMatchObject({
      to: 'failed',
      reason: 'deadline_exceeded',
      detail: `no attempt made; waited on channel_held: twilio held the channel: provider_throttled until ${new Date(T0 + 600_000).toISOString()}`,
    });
    expect(action.plan.next.escalationPending).toBe(true);
  });

  it('no attempt, or the last move, when it recorded no wait', () => {
    expect(planDeadlineExceeded(newIntent(), T0, TEST_TIMING).record.detail).toBe(
      'no attempt made before the deadline',
    );
  });
});

describe('what happens next, derived from the row', () => {
  const now = T0 + 1_000;
  it('per state: send, held, check, retry, outcome, lookup, operator, report, none', () => {
    const reserved = newIntent({ deadline: T0 + 3_600_000 });
    expect(nextStepOf(reserved, now)).toEqual({ kind: 'send', deadline: T0 + 3_600_000 });
    const isHeld = waited(reserved, held(T0 + 600_000), T0 + 10, T0 + 600_000);
    expect(nextStepOf(isHeld, now)).toEqual({
      kind: 'held',
      until: T0 + 600_000,
      provider: 'twilio',
      reason: 'provider_throttled',
    });
    // Once the hold is over, it waits to be sent again.
    expect(nextStepOf(isHeld, T0 + 600_001).kind).toBe('send');
    const checking = waited(reserved, check('infrai_http_500'), T0 + 10);
    expect(describeNextStep(nextStepOf(checking, now), 'reserved')).toBe(
      "waiting for infrai's suppression_list check (infrai_http_500): asked again with backoff until the deadline 2026-11-30T11:00:00.000Z",
    );
    const claim = decideClaim(reserved, { now, workerId: 'w', timing: TEST_TIMING });
    if (claim.kind !== 'claim') throw new Error(claim.why);
    expect(nextStepOf(claim.plan.next, now)).toEqual({
      kind: 'outcome',
      leaseEnds: now + TEST_TIMING.leaseMs,
    });
    const retry = planOutcome(
      claim.plan.next,
      { kind: 'retryable', code: 'http_429', throttled: true, retryAfterMs: 30_000 },
      { now, provider: 'twilio', policy: POLICY, random: () => 0.5, timing: TEST_TIMING },
    ).next;
    expect(describeNextStep(nextStepOf(retry, now), retry.state)).toBe(
      `retry at ${new Date(now + 30_000).toISOString()} (after provider_throttled)`,
    );
    const unknown = planOutcome(
      claim.plan.next,
      { kind: 'ambiguous', code: 'timeout' },
      { now, provider: 'twilio', policy: POLICY, random: () => 0.5, timing: TEST_TIMING },
    ).next;
    expect(nextStepOf(unknown, now, { unknownGraceMs: 600_000 })).toEqual({
      kind: 'lookup',
      decidedAt: now + 600_000,
    });
    expect(nextStepOf({ ...unknown, escalatedAt: now }, now)).toEqual({
      kind: 'operator',
      reason: 'unknown_escalated',
    });
    const accepted = planOutcome(
      claim.plan.next,
      { kind: 'accepted', receiptId: 'SM1' },
      { now, provider: 'twilio', policy: POLICY, random: () => 0.5, timing: TEST_TIMING },
    ).next;
    const report = nextStepOf(accepted, now, { reportDeadlineMs: 72 * 3_600_000 });
    expect(report).toEqual({ kind: 'report', until: now + 72 * 3_600_000 });
    expect(nextStepAt(report)).toBe(now + 72 * 3_600_000);
    const escalated = planDeadlineExceeded(reserved, reserved.deadline, TEST_TIMING).next;
    expect(describeNextStep(nextStepOf(escalated, now), 'failed')).toBe(
      "escalated: an operator's call (deadline_exceeded)",
    );
    const rejected = planTransition(
      reserved,
      { to: 'failed', reason: Reason.providerRejected, at: now },
      TEST_TIMING,
    ).next;
    expect(describeNextStep(nextStepOf(rejected, now), 'failed')).toBe('nothing: failed');
  });
});
