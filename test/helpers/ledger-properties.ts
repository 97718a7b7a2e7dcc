import fc from 'fast-check';
import { expect } from 'vitest';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import { type Intent, inOpenIndex, watchedAtIntake } from '../../lambdas/domain/intent.ts';
import { planCancel, planResolution, type ResolutionOutcome } from '../../lambdas/domain/operator-actions.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import { priorityOf } from '../../lambdas/domain/priority.ts';
import {
  canTransition,
  ESCALATING_FAILURES,
  IllegalTransitionError,
  INTENT_STATES,
  IncompleteTransitionError,
  isTerminal,
  isUnresolved,
  Reason,
} from '../../lambdas/domain/state-machine.ts';
import {
  SuppressionAction,
  type SuppressionRecord,
  SuppressionSource,
  type SuppressionTarget,
  suppressionFactId,
} from '../../lambdas/domain/suppression.ts';
import {
  isUnknownEscalation,
  isWaitRecord,
  planFact,
  planTransition,
  planUnknownEscalation,
  type TransitionPlan,
} from '../../lambdas/domain/transition.ts';
import { MAX_WAIT_RECORDS_PER_ROW, planWait, type Wait } from '../../lambdas/domain/waits.ts';
import type { LedgerStore } from '../../lambdas/ports/ledger-store.port.ts';
import { watchRows } from '../../lambdas/use-cases/watch-rows.ts';
import { newIntent, T0, TEST_TIMING } from './factories.ts';

const outcomeArb: fc.Arbitrary<ProviderOutcome> = fc.oneof(
  fc.record({ kind: fc.constant('accepted' as const), receiptId: fc.stringMatching(/^SM[0-9a-f]{8}$/) }),
  fc.record({
    kind: fc.constant('retryable' as const),
    code: fc.constantFrom('throttled', 'http_503'),
    throttled: fc.boolean(),
    retryAfterMs: fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('rejected' as const),
    code: fc.constant('bad_number'),
    permanent: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('ambiguous' as const), code: fc.constantFrom('timeout', 'reset') }),
);

export type LedgerOp =
  | { op: 'advance'; ms: number }
  | { op: 'claim'; worker: string }
  | { op: 'outcome'; outcome: ProviderOutcome; random: number }
  | { op: 'force'; to: (typeof INTENT_STATES)[number] }
  /** Fail the row with an escalating reason: the marker comes with it. */
  | { op: 'escalate' }
  /** An `unknown` handed to a person (UNKNOWN_POLICY=escalate): it stays unknown, marked. */
  | { op: 'escalateUnknown'; dueInMs: number }
  /** The escalation was published: the marker goes (and a failed row leaves the open index). */
  | { op: 'settle' }
  /** A provider's word after the row finished: a record that changes no state. */
  | { op: 'fact'; reason: 'complaint' | 'delivery_reported' }
  | { op: 'resolve'; outcome: ResolutionOutcome; evidence: boolean }
  | { op: 'cancel' }
  | { op: 'replayStale' }
  /** The row waits without an attempt (docs/architecture.md §4 "No silent waits"): a hold or a check. */
  | { op: 'wait'; kind: 'held' | 'check'; cause: 0 | 1; forMs: number }
  /** Intake's watch fires (docs/table-design.md "Watched rows"): a watched row still open enters the index. */
  | { op: 'watch' };

export const ledgerOpArb: fc.Arbitrary<LedgerOp> = fc.oneof(
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3_600_000 }) }),
  fc.record({ op: fc.constant('claim' as const), worker: fc.constantFrom('w1', 'w2') }),
  fc.record({
    op: fc.constant('outcome' as const),
    outcome: outcomeArb,
    random: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
  }),
  fc.record({ op: fc.constant('force' as const), to: fc.constantFrom(...INTENT_STATES) }),
  fc.record({ op: fc.constant('escalate' as const) }),
  fc.record({ op: fc.constant('escalateUnknown' as const), dueInMs: fc.integer({ min: 0, max: 600_000 }) }),
  fc.record({ op: fc.constant('settle' as const) }),
  fc.record({
    op: fc.constant('wait' as const),
    kind: fc.constantFrom('held' as const, 'check' as const),
    cause: fc.constantFrom(0 as const, 1 as const),
    forMs: fc.integer({ min: 0, max: 3_600_000 }),
  }),
  fc.record({
    op: fc.constant('fact' as const),
    reason: fc.constantFrom('complaint' as const, 'delivery_reported' as const),
  }),
  fc.record({
    op: fc.constant('resolve' as const),
    outcome: fc.constantFrom<ResolutionOutcome>('accepted', 'not_sent'),
    evidence: fc.boolean(),
  }),
  fc.record({ op: fc.constant('cancel' as const) }),
  fc.record({ op: fc.constant('replayStale' as const) }),
  fc.record({ op: fc.constant('watch' as const) }),
);

/** The invariants every stored row must satisfy, whatever happened before. */
export function assertRowInvariants(row: Intent): void {
  const records = row.transitions;
  expect(records[0]).toMatchObject({ seq: 1, from: null, to: 'reserved', reason: 'intake' });
  records.forEach((record, index) => {
    expect(record.seq).toBe(index + 1);
    if (index > 0) {
      const previous = records[index - 1];
      expect(record.from).toBe(previous?.to);
      // A record from = to is a fact on a finished row, an `unknown`'s escalation, or the end of an
      // accepted row's follow-up (delivery_unconfirmed); anything else is a legal move.
      if (isUnknownEscalation(record)) expect(record.reason).toBe(Reason.unknownEscalated);
      else if (isWaitRecord(record)) expect(['reserved', 'retry_scheduled']).toContain(record.to);
      else if (record.from === record.to)
        expect(isTerminal(record.to) || record.reason === Reason.deliveryUnconfirmed).toBe(true);
      else expect(canTransition(record.from as Intent['state'], record.to)).toBe(true);
      expect(record.at).toBeGreaterThanOrEqual(previous?.at ?? 0);
    }
  });
  expect(records.filter(isWaitRecord).length).toBeLessThanOrEqual(MAX_WAIT_RECORDS_PER_ROW);
  expect(row.version).toBe(records.length);
  expect(row.state).toBe(records[records.length - 1]?.to);
  expect(row.leaseOwner !== undefined).toBe(row.state === 'sending');
  expect(row.nextAttemptAt !== undefined).toBe(row.state === 'retry_scheduled');
  expect(row.envelope !== undefined).toBe(isUnresolved(row.state));
  // Escalated: only an `unknown` whose current stretch has exactly one escalation record.
  if (row.escalatedAt !== undefined) {
    expect(row.state).toBe('unknown');
    const stretch = records.slice(records.findLastIndex((r) => r.from !== 'unknown' && r.to === 'unknown'));
    expect(stretch.filter(isUnknownEscalation)).toHaveLength(1);
    expect(row.escalatedAt).toBe(stretch.find(isUnknownEscalation)?.at);
  } else if (row.state === 'unknown') {
    expect(records.at(-1)?.reason).not.toBe(Reason.unknownEscalated);
  }
  // Open index: unresolved rows, accepted rows still owed a final report (until their follow-up
  // ends), and rows whose escalation is not published yet (failed, an escalated `unknown`, or a
  // channel held for a person).
  if (row.escalationPending)
    expect(row.state === 'failed' || row.state === 'retry_scheduled' || row.escalatedAt !== undefined).toBe(
      true,
    );
  const awaitingReport =
    row.state === 'accepted' && !records.some((record) => record.reason === Reason.deliveryUnconfirmed);
  expect(row.dueAt !== undefined).toBe(
    isUnresolved(row.state) || awaitingReport || row.escalationPending === true,
  );
  if (row.dueAt !== undefined && row.state !== 'unknown' && row.state !== 'accepted')
    expect(row.dueAt).toBeLessThanOrEqual(row.deadline);
  // Watched (out of the open index although due): only on the happy path, every record of it a
  // move along reserved → sending → accepted, nothing pending.
  if (row.watched) {
    expect(['reserved', 'sending', 'accepted']).toContain(row.state);
    expect(row.dueAt).toBeDefined();
    expect(row.escalationPending).toBeUndefined();
    expect(inOpenIndex(row)).toBe(false);
    for (const record of records.slice(1)) {
      expect(record.from).not.toBe(record.to);
      expect(['sending', 'accepted']).toContain(record.to);
    }
  } else expect(inOpenIndex(row)).toBe(row.dueAt !== undefined);
  // The acceptance time lives on an accepted row only (the awaiting-report gauge reads it).
  expect(row.acceptedAt !== undefined).toBe(row.state === 'accepted');
  if (row.state === 'accepted' || row.state === 'delivered') {
    // A receipt, or a person's confirmation that the provider holds the message.
    const confirmed = records.some((record) => record.reason === Reason.operatorConfirmedAccepted);
    if (!confirmed) expect(row.providerReceiptId).toBeDefined();
  }
  // People's moves, and only theirs, carry an actor.
  for (const record of records) {
    const byPerson = (
      [Reason.operatorConfirmedAccepted, Reason.operatorConfirmedNotSent, Reason.cancelled] as string[]
    ).includes(record.reason);
    if (byPerson) expect(record.actor).toBe(TEST_ACTOR);
    else if (record.actor !== undefined) expect(record.detail).toMatch(/^operator_confirmed_not_sent: /);
  }
}

/** An IAM principal as API Gateway reports it: the actor stamped on people's records. */
export const TEST_ACTOR = 'arn:aws:sts::123456789012:assumed-role/NoticeLedgerOperator/ada';

/**
 * Drives one row through a random sequence of operations, legal and illegal, through the
 * real planning functions and the given store; checks after every step that illegal moves
 * and stale writes change nothing and that history only ever grows at its end.
 */
export async function runLedgerSequence(
  store: LedgerStore,
  ops: LedgerOp[],
  /** Reserved as intake reserves after its watch: out of the open index while on the happy path. */
  watched = false,
): Promise<void> {
  let now = Date.parse('2026-11-30T10:00:00Z');
  const fresh = newIntent({ createdAt: now, deadline: now + 6 * 3_600_000 });
  const seed = watched ? watchedAtIntake(fresh, 60_000) : fresh;
  expect(seed.watched).toBe(watched ? true : undefined);
  expect((await store.reserve(seed)).kind).toBe('created');
  let stalePlan: TransitionPlan | undefined;
  for (const step of ops) {
    const before = await store.get(seed.noticeId, seed.channel);
    if (!before) throw new Error('row vanished');
    let plan: TransitionPlan | undefined;
    switch (step.op) {
      case 'advance':
        now += step.ms;
        break;
      case 'claim': {
        const decision = decideClaim(before, { now, workerId: step.worker, timing: TEST_TIMING });
        if (decision.kind === 'claim') plan = decision.plan;
        break;
      }
      case 'outcome':
        if (before.state === 'sending') {
          plan = planOutcome(before, step.outcome, {
            now,
            provider: 'test',
            policy: { baseMs: 1000, capMs: 600_000, maxAttempts: 5 },
            random: () => step.random,
            timing: TEST_TIMING,
          });
        }
        break;
      case 'force':
        try {
          plan = planTransition(
            before,
            {
              to: step.to,
              reason: Reason.providerAccepted,
              at: now,
              set: step.to === 'accepted' || step.to === 'delivered' ? { providerReceiptId: 'SMforced' } : {},
            },
            TEST_TIMING,
          );
        } catch (error) {
          if (error instanceof IncompleteTransitionError) {
            expect(['sending', 'retry_scheduled', 'accepted', 'delivered']).toContain(step.to);
          } else {
            expect(error).toBeInstanceOf(IllegalTransitionError);
            expect(canTransition(before.state, step.to)).toBe(false);
          }
        }
        break;
      case 'escalate':
        if (canTransition(before.state, 'failed')) {
          plan = planTransition(
            before,
            { to: 'failed', reason: Reason.attemptsExhausted, at: now },
            TEST_TIMING,
          );
          expect(ESCALATING_FAILURES.has(plan.record.reason)).toBe(true);
          expect(plan.next).toMatchObject({
            escalationPending: true,
            dueAt: Math.min(plan.record.at, before.deadline),
          });
        }
        break;
      case 'escalateUnknown':
        if (before.state === 'unknown' && before.escalatedAt === undefined) {
          plan = planUnknownEscalation(before, { at: now, detail: 'no answer', dueAt: now + step.dueInMs });
          expect(plan.next).toMatchObject({
            state: 'unknown',
            escalationPending: true,
            escalatedAt: plan.record.at,
          });
        } else {
          expect(() => planUnknownEscalation(before, { at: now, dueAt: now })).toThrow(
            IllegalTransitionError,
          );
        }
        break;
      case 'settle': {
        const keepOpen = before.state !== 'failed';
        const settled = await store.settleEscalation(before.noticeId, before.channel, before.version, {
          keepOpen,
        });
        expect(settled).toBe(before.escalationPending === true);
        const after = await store.get(seed.noticeId, seed.channel);
        if (settled) {
          expect(after).toEqual({
            ...before,
            escalationPending: undefined,
            dueAt: keepOpen ? before.dueAt : undefined,
          });
        } else expect(after).toEqual(before);
        break;
      }
      case 'fact':
        if (isTerminal(before.state)) {
          plan = planFact(before, { reason: step.reason, at: now, detail: 'test' });
          expect(plan.next).toEqual({
            ...before,
            version: before.version + 1,
            transitions: plan.next.transitions,
          });
        } else {
          expect(() => planFact(before, { reason: step.reason, at: now })).toThrow(IllegalTransitionError);
        }
        break;
      case 'resolve': {
        const decision = planResolution(
          before,
          {
            outcome: step.outcome,
            reason: 'checked the provider console',
            evidence: step.evidence ? 'ticket OPS-1' : undefined,
            actor: TEST_ACTOR,
            now,
          },
          {
            timing: TEST_TIMING,
            policy: { baseMs: 1000, capMs: 600_000, maxAttempts: 5 },
            random: () => 0.5,
          },
        );
        if (decision.kind === 'transition') plan = decision.plan;
        else expect(before.state).not.toBe('unknown');
        break;
      }
      case 'cancel': {
        const decision = planCancel(
          before,
          { reason: 'appointment cancelled', actor: TEST_ACTOR, now },
          TEST_TIMING,
        );
        if (decision.kind === 'cancel') plan = decision.plan;
        else expect(['reserved', 'retry_scheduled']).not.toContain(before.state);
        break;
      }
      case 'wait': {
        const wait: Wait =
          step.kind === 'held'
            ? {
                kind: 'channel_held',
                provider: 'test',
                reason: 'provider_throttled',
                until: now + step.forMs,
              }
            : {
                kind: 'provider_check_unavailable',
                provider: 'test',
                check: 'suppression_list',
                code: `c${step.cause}`,
              };
        plan = planWait(before, wait, { at: now, wakeAt: now + step.forMs }, TEST_TIMING);
        if (plan) {
          // A wait keeps the state and every field but the due time (kept while an escalation is owed).
          expect(['reserved', 'retry_scheduled']).toContain(before.state);
          expect(plan.next).toEqual({
            ...before,
            version: before.version + 1,
            dueAt: before.escalationPending ? before.dueAt : plan.next.dueAt,
            // Off the happy path: a watched row enters the open index with its wait.
            watched: undefined,
            transitions: plan.next.transitions,
          });
          expect(plan.next.dueAt as number).toBeLessThanOrEqual(before.deadline);
        }
        break;
      }
      case 'watch': {
        const [outcome] = await watchRows([{ noticeId: seed.noticeId, channel: seed.channel, look: 2 }], {
          store,
        });
        const after = await store.get(seed.noticeId, seed.channel);
        if (before.watched) {
          expect(outcome).toEqual({ kind: 'indexed', state: before.state });
          expect(after).toEqual({ ...before, watched: undefined });
        } else {
          expect(outcome?.kind).toBe(before.dueAt === undefined ? 'settled' : 'in_index');
          expect(after).toEqual(before);
        }
        break;
      }
      case 'replayStale':
        if (stalePlan) {
          const result = await store.apply(stalePlan);
          expect(result.kind).toBe('stale');
          expect(await store.get(seed.noticeId, seed.channel)).toEqual(before);
        }
        break;
    }
    if (plan) {
      const result = await store.apply(plan);
      expect(result.kind).toBe('applied');
      stalePlan = plan;
    }
    const after = await store.get(seed.noticeId, seed.channel);
    if (!after) throw new Error('row vanished');
    assertRowInvariants(after);
    // Once in the open index, a row never leaves it for a watch again.
    if (!before.watched) expect(after.watched).toBeUndefined();
    // Append-only: what was recorded before is still recorded, unchanged, in order.
    expect(after.transitions.slice(0, before.transitions.length)).toEqual(before.transitions);
    expect(after.transitions.length - before.transitions.length).toBe(plan ? 1 : 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Suppression history: one model, run on the memory store and on DynamoDB Local
// ---------------------------------------------------------------------------------------------

/** Few distinct values, so that repeated facts and equal times occur often. */
export const suppressionRecordArb: fc.Arbitrary<SuppressionRecord> = fc.record({
  action: fc.constantFrom(SuppressionAction.suppress, SuppressionAction.lift),
  reason: fc.constantFrom('hard_bounce', 'complaint', 'patient_request', 'lifted_by_operator'),
  source: fc.constantFrom(SuppressionSource.provider, SuppressionSource.operator),
  actor: fc.constantFrom('ses', 'twilio', 'ops-1'),
  at: fc.integer({ min: 0, max: 6 }).map((step) => T0 + step * 1000),
  code: fc.option(fc.constantFrom('30005', 'Permanent:General'), { nil: undefined }),
});

/**
 * Appends `records` one by one and checks, after each, the store against a model: a fact already
 * recorded is not appended again; the effective state is the latest record by time, of equal
 * times the later appended; the history is every distinct fact, by time then fact id.
 */
export async function runSuppressionSequence(
  store: LedgerStore,
  target: SuppressionTarget,
  records: readonly SuppressionRecord[],
): Promise<void> {
  const facts = new Map<string, SuppressionRecord>();
  let latest: SuppressionRecord | undefined;
  for (const record of records) {
    const id = suppressionFactId(record);
    const repeated = facts.has(id);
    const result = await store.appendSuppression(target, record);
    expect(result.appended).toBe(!repeated);
    if (!repeated) {
      facts.set(id, record);
      if (latest === undefined || record.at >= latest.at) latest = record;
    }
    const state = await store.getSuppression(target.channel, target.fingerprint);
    expect(state).toEqual({ ...target, latest: strip(latest as SuppressionRecord) });
    expect(result.state).toEqual(state);
    const history = await store.getSuppressionHistory(target.channel, target.fingerprint);
    const expected = [...facts.entries()]
      .sort(([ia, a], [ib, b]) => a.at - b.at || (ia < ib ? -1 : ia > ib ? 1 : 0))
      .map(([, r]) => strip(r));
    expect(history?.records.map(strip)).toEqual(expected);
    expect(history?.truncated).toBe(false);
  }
}

/** `code: undefined` and a missing `code` are the same record. */
function strip(record: SuppressionRecord): SuppressionRecord {
  const { code, ...rest } = record;
  return code === undefined ? rest : { ...rest, code };
}

/**
 * A row keeps its priority through a store: stored and read back; a row without one is
 * standard. Run on the memory store (fast tier) and on DynamoDB Local (integration tier).
 */
export async function assertPriorityKept(store: LedgerStore): Promise<void> {
  const critical = { ...newIntent({ channel: 'sms' }), priority: 'critical' as const };
  const plain = newIntent({ channel: 'sms' });
  await store.reserve(critical);
  await store.reserve(plain);
  const read = await store.get(critical.noticeId, 'sms');
  expect(read?.priority).toBe('critical');
  const old = await store.get(plain.noticeId, 'sms');
  expect(old?.priority).toBeUndefined();
  expect(old && priorityOf(old)).toBe('standard');
}

/**
 * The submitter a row records (docs/api.md "Callers"), read back as written, and `reserveNotice`'s
 * `visible`: a recorded channel the caller may not see stops the request, nothing written.
 */
export async function assertSubmitterKept(store: LedgerStore): Promise<void> {
  const A = 'arn:aws:iam::111111111111:role/lab-system';
  const B = 'arn:aws:iam::222222222222:role/billing-service';
  const eventId = `evt_submitter_${Date.now()}_${Math.random().toString(36).slice(2)}`;
  const email = { ...newIntent({ eventId, channel: 'email' }), submitter: A };
  const sms = newIntent({ eventId, channel: 'sms' });
  await store.reserve(email);
  expect((await store.get(email.noticeId, 'email'))?.submitter).toBe(A);
  // Another partition, and a federated user: read back whole too.
  const gov = { ...newIntent({ channel: 'sms' }), submitter: 'arn:aws-us-gov:iam::111111111111:role/lab' };
  const federated = {
    ...newIntent({ channel: 'sms' }),
    submitter: 'arn:aws:sts::111111111111:federated-user/bob',
  };
  for (const row of [gov, federated]) {
    await store.reserve(row);
    expect((await store.get(row.noticeId, 'sms'))?.submitter).toBe(row.submitter);
  }

  const asB = (row: Intent) => ({ ...row, submitter: B });
  const Bs = (row: Intent) => row.submitter === B;
  // Two channels (a transaction), then the one recorded alone (a plain put).
  expect((await store.reserveNotice([asB(email), asB(sms)], Bs)).map((r) => r.kind)).toEqual([
    'duplicate',
    'skipped',
  ]);
  expect((await store.reserveNotice([asB(email)], Bs)).map((r) => r.kind)).toEqual(['duplicate']);
  expect(await store.get(sms.noticeId, 'sms')).toBeUndefined();
  expect(await store.getNotice(email.noticeId)).toEqual([email]);
  // Its own submitter adds the channel.
  const own = { ...sms, submitter: A };
  const mine = (row: Intent) => row.submitter === A;
  expect((await store.reserveNotice([email, own], mine)).map((r) => r.kind)).toEqual([
    'duplicate',
    'created',
  ]);
  expect((await store.get(sms.noticeId, 'sms'))?.submitter).toBe(A);
}
