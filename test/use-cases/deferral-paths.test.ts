/**
 * No row waits in silence (docs/architecture.md §4 "No silent waits"): every code path that
 * defers a row, sends it back through its queue, delays it or moves its due time without a
 * transition is listed here, and each is walked to show that it leaves a recorded reason on the
 * row or a bounded, measured wait. The list is held to the code: a scan of lambdas/ counts the
 * calls that can delay a row (queue sends, due-time moves, gate admissions and inline sleeps,
 * retry wake-ups, escalation settlements) per file, and a new one fails here until it is listed
 * (and docs/architecture.md says what accounts for it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deferralMetric, Metric } from '../../lambdas/contract/metrics.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { nextStepAt, nextStepOf } from '../../lambdas/domain/next-step.ts';
import { INTENT_STATES, Reason } from '../../lambdas/domain/state-machine.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import type { Admission, SendGate } from '../../lambdas/ports/send-gate.port.ts';
import type { ProviderSuppressionCheck } from '../../lambdas/ports/transport.port.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { resolveChannel } from '../../lambdas/use-cases/operator-actions.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { watchRows } from '../../lambdas/use-cases/watch-rows.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, ScriptedTransport } from '../helpers/fakes.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** The calls that can leave a row waiting, as they appear at a call site. */
const PRIMITIVES = {
  enqueue: /\.enqueue\(/g,
  defer: /\.defer\(/g,
  admit: /\.admit\(/g,
  sleep: /\.sleep\(/g,
  scheduleAttempt: /\.scheduleAttempt\(/g,
  settleEscalation: /\.settleEscalation\(/g,
} as const;
type Primitive = keyof typeof PRIMITIVES;

interface DeferralPath {
  readonly id: string;
  /** Where, and which of its calls are this path's. */
  readonly sites: readonly { readonly file: string; readonly calls: Partial<Record<Primitive, number>> }[];
  /** What the row says, what bounds the wait, what counts it. */
  readonly accountedBy: string;
}

/** Every path, in the order docs/architecture.md §4 "No silent waits" lists them. */
const DEFERRAL_PATHS: readonly DeferralPath[] = [
  {
    id: 'channel hold (a gate admission answered "held")',
    sites: [{ file: 'lambdas/use-cases/provider-call.ts', calls: { admit: 1, enqueue: 1 } }],
    accountedBy:
      'recorded: channel_held on every row it defers, once per hold (provider, reason, until); bounded: the hold, the deadline (due then); measured: Deferred_channel_held',
  },
  {
    id: 'rate budget booked ahead (the same admission, not held)',
    sites: [{ file: 'lambdas/use-cases/budget-send-gate.ts', calls: { admit: 1 } }],
    accountedBy:
      'bounded: the lanes’ booking horizons (§11), the deadline-risk re-check warns rows it would make late; measured: Deferred_rate_budget',
  },
  {
    id: 'inline waits inside a sender invocation (a short hold, a booked token, the linger)',
    sites: [
      { file: 'lambdas/use-cases/shared-send-gate.ts', calls: { sleep: 1 } },
      { file: 'lambdas/use-cases/budget-send-gate.ts', calls: { sleep: 2 } },
    ],
    accountedBy:
      'bounded: maxInlineWaitMs (the gate’s 2 s, RATE_BUDGET_MAX_WAIT_MS), before the claim and its lease',
  },
  {
    id: 'provider pre-send check not answered',
    sites: [{ file: 'lambdas/use-cases/prepare-delivery.ts', calls: { defer: 1, enqueue: 1 } }],
    accountedBy:
      'recorded: provider_check_unavailable once per cause; bounded: the retry policy’s backoff, the deadline (deadline_exceeded, escalated); measured: Deferred_provider_check_unavailable (alarm ProviderCheckUnavailable)',
  },
  {
    id: 'reconciler re-enqueues a row whose message or schedule was lost',
    sites: [{ file: 'lambdas/use-cases/reconcile.ts', calls: { enqueue: 1, defer: 1 } }],
    accountedBy:
      'recorded: the row’s own last record (intake, the retry’s reason, a wait, held_for_send_window until the window opens); bounded: a lease apart (a held row: its window’s opening), the deadline; measured: ReconcilerReenqueued, Open_reserved',
  },
  {
    id: 'reconciler asks an unknown row again later',
    sites: [{ file: 'lambdas/use-cases/reconcile.ts', calls: { defer: 1 } }],
    accountedBy:
      'recorded: the move into unknown (provider_timeout, lease_expired …); bounded: UNKNOWN_GRACE_MS, then the policy (unknown_escalated); measured: Open_unknown, ReconciliationLagSeconds',
  },
  {
    id: 'delivery follow-up waits for a final report',
    sites: [{ file: 'lambdas/use-cases/follow-up.ts', calls: { defer: 2 } }],
    accountedBy:
      'recorded: provider_accepted; bounded: DELIVERY_REPORT_DEADLINE_MS (delivery_unconfirmed); measured: AwaitingReport, OldestAwaitingReportAgeSeconds',
  },
  {
    id: 'an escalation published: the row due at its own next step',
    sites: [{ file: 'lambdas/use-cases/escalate.ts', calls: { settleEscalation: 1 } }],
    accountedBy:
      'recorded: the escalated record (operator_action_required, deadline_at_risk …); bounded: the row’s next step, the deadline; measured: Escalations, EscalationsPending',
  },
  {
    id: 'a retry’s wake-up (SQS delay or a one-time schedule)',
    sites: [
      { file: 'lambdas/use-cases/record-step.ts', calls: { scheduleAttempt: 1 } },
      { file: 'lambdas/adapters/scheduler/retry-scheduler.ts', calls: { enqueue: 1 } },
    ],
    accountedBy:
      'recorded: retry_scheduled with its reason and nextAttemptAt; bounded: the retry policy, MAX_ATTEMPTS, the deadline; measured: Outcome_retry_scheduled',
  },
  {
    id: 'the watch puts a row still owed something into the open index',
    sites: [{ file: 'lambdas/use-cases/watch-rows.ts', calls: { defer: 1 } }],
    accountedBy:
      'recorded: the row’s own last record (intake, claimed, provider_accepted); bounded: INDEX_WATCH_DELAY_MS after intake, then the reconciler’s due time; measured: WatchIndexed, then Open_<state> and AwaitingReport',
  },
  {
    id: 'intake and an operator’s resend (not waits: with a transition, no delay)',
    sites: [
      { file: 'lambdas/use-cases/submit-notice.ts', calls: { enqueue: 1 } },
      { file: 'lambdas/use-cases/submit-batch.ts', calls: { enqueue: 2 } },
      { file: 'lambdas/use-cases/operator-actions.ts', calls: { enqueue: 1 } },
      { file: 'lambdas/use-cases/fallback.ts', calls: { enqueue: 1 } },
    ],
    accountedBy:
      'recorded: intake / operator_confirmed_not_sent / fallback (the row a channel fallback reserves); a lost message is the reconciler’s re-enqueue',
  },
];

/** Where a call site of a primitive can be (definitions and the whole-table adapters excluded). */
const SCANNED = ['lambdas/use-cases', 'lambdas/handlers', 'lambdas/wiring', 'lambdas/adapters/scheduler'];

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function callSites(): Map<string, Partial<Record<Primitive, number>>> {
  const found = new Map<string, Partial<Record<Primitive, number>>>();
  for (const dir of SCANNED) {
    for (const name of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      const file = join(dir, name);
      const text = withoutComments(readFileSync(join(ROOT, file), 'utf8'));
      for (const [primitive, pattern] of Object.entries(PRIMITIVES) as [Primitive, RegExp][]) {
        const count = text.match(pattern)?.length ?? 0;
        if (count > 0) found.set(file, { ...found.get(file), [primitive]: count });
      }
    }
  }
  return found;
}

describe('the list of deferral paths is the code’s', () => {
  it('every call that can leave a row waiting is on a listed path, and every listed call exists', () => {
    const listed = new Map<string, Partial<Record<Primitive, number>>>();
    for (const path of DEFERRAL_PATHS) {
      for (const site of path.sites) {
        const counts = { ...listed.get(site.file) };
        for (const [primitive, n] of Object.entries(site.calls) as [Primitive, number][])
          counts[primitive] = (counts[primitive] ?? 0) + n;
        listed.set(site.file, counts);
      }
    }
    const sorted = (m: Map<string, unknown>) => new Map([...m].sort(([a], [b]) => a.localeCompare(b)));
    expect(sorted(callSites())).toEqual(sorted(listed));
  });

  it('docs/architecture.md lists the same paths', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const start = doc.indexOf('### No silent waits');
    expect(start).toBeGreaterThan(0);
    const section = doc.slice(start, doc.indexOf('\n## ', start));
    for (const path of DEFERRAL_PATHS) {
      for (const site of path.sites) expect(section, path.id).toContain(site.file.replace(/^lambdas\//, ''));
    }
  });
});

// --- each path, walked --------------------------------------------------------------------------

/** A notice on `channels`, its rows reserved and their queue messages sent. */
async function submitted(w: FakeWorld, channel: 'email' | 'sms', deadlineMs = 3_600_000) {
  const result = await submitNotice(
    {
      ...EXAMPLE_REQUEST,
      eventId: `evt_paths_${Math.random().toString(36).slice(2)}`,
      channels: [channel],
      deadline: w.clock.now() + deadlineMs,
    } as never,
    w.deps,
  );
  if (result.kind !== 'recorded') throw new Error(result.kind);
  w.enqueued.length = 0;
  return { noticeId: result.noticeId, channel };
}

/**
 * What every walked path must leave: the row's last record names a reason of the ledger's, and
 * what happens next has a time no later than the deadline (or is a person's call).
 */
function accountedFor(row: Intent | undefined, now: number): { reason: string; next: string } {
  if (!row) throw new Error('no row');
  const last = row.transitions.at(-1);
  expect(Object.values(Reason)).toContain(last?.reason);
  expect(INTENT_STATES).toContain(row.state);
  const step = nextStepOf(row, now, { unknownGraceMs: 600_000, reportDeadlineMs: 72 * 3_600_000 });
  const at = nextStepAt(step);
  if (step.kind !== 'operator' && step.kind !== 'none') {
    expect(at, step.kind).toBeDefined();
    if (step.kind !== 'report' && step.kind !== 'lookup')
      expect(at as number, step.kind).toBeLessThanOrEqual(row.deadline);
  }
  return { reason: last?.reason as string, next: step.kind };
}

class AnsweringGate implements SendGate {
  constructor(private readonly answer: Admission) {}
  async admit(): Promise<Admission> {
    return this.answer;
  }
  async throttled(): Promise<void> {}
  async hold(): Promise<void> {}
}

describe('each path leaves a recorded reason or a bounded, measured wait', () => {
  it('channel hold: channel_held on the row, once; due when the hold ends; counted', async () => {
    const w = fakeWorld();
    const gate = new SharedSendGate({ store: w.store, clock: w.clock, gateCacheMs: 0 });
    const deps = { ...w.deps, gate };
    const ref = await submitted(w, 'sms');
    const until = w.clock.now() + 300_000;
    await w.store.closeGate('sms', until, 'provider_throttled');
    const first = await deliverIntent(ref, deps);
    const second = await deliverIntent(ref, deps);
    expect([first, second]).toEqual([
      { kind: 'deferred', untilMs: until, cause: 'channel_held' },
      { kind: 'deferred', untilMs: until, cause: 'channel_held' },
    ]);
    expect(deferralMetric(first.kind === 'deferred' ? first.cause : 'channel_held')).toBe(
      'Deferred_channel_held',
    );
    const row = await w.store.get(ref.noticeId, 'sms');
    expect(row?.transitions.filter((t) => t.reason === 'channel_held')).toHaveLength(1);
    expect(row?.dueAt).toBe(until + w.deps.timing.leaseMs);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'channel_held', next: 'held' });
  });

  it('rate budget: counted, bounded by what the budget is booked ahead, nothing written', async () => {
    const w = fakeWorld();
    const until = w.clock.now() + 4_000;
    const ref = await submitted(w, 'email');
    const result = await deliverIntent(ref, {
      ...w.deps,
      gate: new AnsweringGate({ kind: 'wait', untilMs: until }),
    });
    expect(result).toEqual({ kind: 'deferred', untilMs: until, cause: 'rate_budget' });
    expect(w.enqueued).toEqual([{ ref, delayMs: 4_000 }]);
    const row = await w.store.get(ref.noticeId, 'email');
    expect(row?.transitions).toHaveLength(1);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'intake', next: 'send' });
  });

  it('inline wait: a short hold is waited out within maxInlineWaitMs, before the claim', async () => {
    const w = fakeWorld();
    const sleeps: number[] = [];
    const gate = new SharedSendGate({
      store: w.store,
      clock: w.clock,
      gateCacheMs: 0,
      maxInlineWaitMs: 2_000,
      sleep: async (ms) => {
        sleeps.push(ms);
        w.clock.advance(ms);
      },
    });
    await w.store.closeGate('email', w.clock.now() + 1_500, 'provider_throttled');
    const ref = await submitted(w, 'email');
    expect(await deliverIntent(ref, { ...w.deps, gate })).toMatchObject({ state: 'accepted' });
    expect(sleeps).toEqual([1_500]);
  });

  it('provider check: provider_check_unavailable once per cause, the due time moved each time, counted', async () => {
    const w = fakeWorld();
    const answers: ProviderSuppressionCheck[] = [
      { kind: 'unavailable', code: 'acme_http_500' },
      { kind: 'unavailable', code: 'acme_http_500' },
      { kind: 'unavailable', code: 'acme_timeout' },
    ];
    const email = Object.assign(new ScriptedTransport('acme'), {
      suppressions: { check: async () => answers.shift() ?? { kind: 'clear' as const } },
    });
    const deps = { ...w.deps, transports: { ...w.deps.transports, email } };
    const ref = await submitted(w, 'email');
    const dueTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await deliverIntent(ref, deps);
      expect(result).toMatchObject({ kind: 'deferred', cause: 'provider_check_unavailable' });
      const row = await w.store.get(ref.noticeId, 'email');
      dueTimes.push(row?.dueAt as number);
      expect(row?.dueAt).toBe((result as { untilMs: number }).untilMs + w.deps.timing.leaseMs);
      w.clock.current = (result as { untilMs: number }).untilMs;
    }
    const row = await w.store.get(ref.noticeId, 'email');
    expect(row?.transitions.map((t) => [t.reason, t.detail])).toEqual([
      ['intake', undefined],
      ['provider_check_unavailable', 'acme suppression_list not answered: acme_http_500'],
      ['provider_check_unavailable', 'acme suppression_list not answered: acme_timeout'],
    ]);
    expect(dueTimes[1]).toBeGreaterThan(dueTimes[0] as number);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'provider_check_unavailable', next: 'check' });
    expect(await deliverIntent(ref, deps)).toMatchObject({ state: 'accepted' });
  });

  it('reconciler re-enqueue: counted, a lease apart, failed at the deadline', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'email', 3 * w.deps.timing.leaseMs);
    w.clock.advance(w.deps.timing.leaseMs);
    const run = await reconcile(w.deps);
    expect(run.reenqueued).toBe(1);
    expect(Metric.reconcilerReenqueued).toBe('ReconcilerReenqueued');
    expect(w.enqueued.map((e) => e.ref)).toEqual([ref]);
    const row = await w.store.get(ref.noticeId, 'email');
    expect(row?.dueAt).toBe(w.clock.now() + w.deps.timing.leaseMs);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'intake', next: 'send' });
    w.clock.current = row?.deadline as number;
    await reconcile(w.deps);
    expect((await w.store.get(ref.noticeId, 'email'))?.transitions.at(-1)).toMatchObject({
      reason: 'deadline_exceeded',
      detail: 'no attempt made before the deadline',
    });
  });

  it('unknown recheck: the move into unknown says why; the grace bounds it, then a person is asked', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'sms');
    w.sms.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent(ref, w.deps);
    const first = await reconcile(w.deps);
    expect(first.actions.recheck).toBe(1);
    expect(accountedFor(await w.store.get(ref.noticeId, 'sms'), w.clock.now())).toEqual({
      reason: 'provider_timeout',
      next: 'lookup',
    });
    w.clock.advance(w.deps.unknownGraceMs);
    await reconcile(w.deps);
    expect(accountedFor(await w.store.get(ref.noticeId, 'sms'), w.clock.now())).toEqual({
      reason: 'unknown_escalated',
      next: 'operator',
    });
  });

  it('follow-up: provider_accepted, waiting for a report until the follow-up’s end', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'email');
    await deliverIntent(ref, w.deps);
    w.clock.advance(w.deps.timing.leaseMs);
    const run = await reconcile(w.deps);
    expect(run.actions.follow_up_wait).toBe(1);
    expect(run.awaitingReport).toBe(1);
    expect(accountedFor(await w.store.get(ref.noticeId, 'email'), w.clock.now())).toEqual({
      reason: 'provider_accepted',
      next: 'report',
    });
  });

  it('an escalation settled: the held row is due at its retry, the hold on record', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'sms');
    w.sms.script.push({ kind: 'operator_action_required', code: 'twilio_20003', retryAfterMs: 600_000 });
    await deliverIntent(ref, w.deps);
    const row = await w.store.get(ref.noticeId, 'sms');
    expect(row?.escalationPending).toBeUndefined();
    expect(row?.dueAt).toBe((row?.nextAttemptAt as number) + w.deps.timing.leaseMs);
    expect(w.escalations.map((e) => e.reason)).toEqual(['operator_action_required']);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'operator_action_required', next: 'retry' });
  });

  it('a retry’s wake-up: retry_scheduled with its reason, at a time before the deadline', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'sms');
    w.sms.script.push({ kind: 'retryable', code: 'twilio_503', throttled: false });
    await deliverIntent(ref, w.deps);
    const row = await w.store.get(ref.noticeId, 'sms');
    expect(w.scheduled).toEqual([{ ref, attempt: 2, at: row?.nextAttemptAt }]);
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'provider_unavailable', next: 'retry' });
  });

  it('a watch: a row the intake left out of the index and whose message was lost is found, then re-enqueued', async () => {
    const watches: IntentRef[] = [];
    const w = fakeWorld({ watch: { delayMs: 300_000, watch: async (refs) => void watches.push(...refs) } });
    const ref = await submitted(w, 'sms');
    expect(watches).toEqual([ref]);
    expect((await w.store.listOpen()).items).toEqual([]);
    w.clock.advance(300_000);
    const [found] = await watchRows([{ ...ref, look: 1 }], w.deps);
    expect(found).toEqual({ kind: 'indexed', state: 'reserved' });
    expect(Metric.watchIndexed).toBe('WatchIndexed');
    const row = await w.store.get(ref.noticeId, 'sms');
    expect(accountedFor(row, w.clock.now())).toEqual({ reason: 'intake', next: 'send' });
    const run = await reconcile(w.deps);
    expect(run.reenqueued).toBe(1);
    expect(w.enqueued.map((e) => e.ref)).toEqual([ref]);
  });

  it('intake and an operator’s resend enqueue with a transition of their own', async () => {
    const w = fakeWorld();
    const ref = await submitted(w, 'sms');
    expect(accountedFor(await w.store.get(ref.noticeId, 'sms'), w.clock.now()).reason).toBe('intake');
    w.sms.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent(ref, w.deps);
    const resolved = await resolveChannel(
      ref.noticeId,
      'sms',
      { outcome: 'not_sent', reason: 'not in the console', actor: 'ops' },
      w.deps,
    );
    expect(resolved.kind).toBe('resolved');
    expect(w.enqueued.at(-1)?.ref).toEqual(ref);
    expect(accountedFor(await w.store.get(ref.noticeId, 'sms'), w.clock.now()).reason).toBe(
      'operator_confirmed_not_sent',
    );
  });
});
