/**
 * Scale simulation (discrete-event, simulated time): one million SMS notices in one hour against
 * a provider capped at R sends/s, our dispatcher versus the naive baseline. `npx tsx bench/simulate.ts`
 * (about 4 minutes; name scenarios to run only those); writes docs/scale-simulation.svg and
 * bench/results/scale-simulation.json.
 *
 * Reused, not copied: our senders gate through the real `SharedSendGate` (one gate item shared by
 * every instance), one per Lambda instance, and decide retries with the real `decideRetry`
 * (lambdas/domain/retry-policy.ts); the baseline decides with bench/baseline/naive-policy.ts, the
 * policy the live baseline runs. The `budget` scenarios pace through the real `BudgetSendGate`
 * over one clock item; the `ours` scenarios through ./sim/per-process-pace.ts, the per-process
 * pace (R / C per instance) the runtime had until issue 20, kept as the comparison that shows
 * why the shared budget replaced it.
 *
 * `--linger-ms N`: the budget gate's `lingerMs` (the first caller of an idle lane waits N ms for
 * the others of its batch before booking); default 0.
 *
 * Modelled around them (stated in docs/benchmarks.md): arrivals, the provider's token bucket
 * and latency, SQS (long poll, DelaySeconds in whole seconds, visibility timeout, redrive to a
 * DLQ), the event-source mapping (C instances, batches of 10 processed in parallel, the batch
 * done when its slowest record is), DynamoDB latency, Scheduler (retries ≥ 60 s, firing within
 * the minute) and the reconciler's re-enqueue of reserved rows older than the lease.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MemoryRateClock } from '../lambdas/adapters/memory/memory-rate-clock.ts';
import type { Channel } from '../lambdas/domain/channel.ts';
import type { ProviderOutcome } from '../lambdas/domain/outcome.ts';
import { budgetRules } from '../lambdas/domain/rate-budget.ts';
import { DEFAULT_RETRY_POLICY, decideRetry } from '../lambdas/domain/retry-policy.ts';
import type { SendGate } from '../lambdas/ports/send-gate.port.ts';
import { BudgetSendGate } from '../lambdas/use-cases/budget-send-gate.ts';
import { RateBudget } from '../lambdas/use-cases/rate-budget.ts';
import { SharedSendGate } from '../lambdas/use-cases/shared-send-gate.ts';
import { NAIVE_POLICY, naiveDecision } from './baseline/naive-policy.ts';
import { round } from './lib/stats.ts';
import { figure } from './lib/svg.ts';
import { exponential, Simulation, seededRandom } from './sim/kernel.ts';
import { PerProcessPaceGate } from './sim/per-process-pace.ts';
import { arrivals, type Bin, Ledger, type Message, Provider, Queue, recordBins } from './sim/world.ts';

/** A gate of the simulation: the real ones, or the model of the old per-process pace (it learns from acceptances). */
type SimGate = SendGate & Partial<Pick<PerProcessPaceGate, 'accepted'>>;

const HOUR_MS = 3_600_000;
/** The per-process pace's inline wait (the runtime's default until issue 20). */
const PER_INSTANCE_INLINE_WAIT_MS = 2_000;

export interface Scenario {
  readonly name: string;
  /**
   * ours: per-instance pace R / C (./sim/per-process-pace.ts: the runtime's until issue 20);
   * budget: the shared rate budget
   * (BudgetSendGate over one clock item, docs/architecture.md §11); naive: the baseline.
   */
  readonly dispatcher: 'ours' | 'budget' | 'naive';
  /** Event-source maximum concurrency: Lambda instances, one batch each. */
  readonly concurrency: number;
  readonly batchSize: number;
  /** Drawn in docs/scale-simulation.svg when present. */
  readonly plot?: { readonly color: string; readonly dashed?: boolean };
}

export interface Setup {
  readonly notices: number;
  /** The arrivals are spread over this long (an hour; `--scale f` shrinks it with the count). */
  readonly loadMs: number;
  readonly spike: { readonly share: number; readonly startMs: number; readonly lengthMs: number };
  readonly providerRatePerSecond: number;
  readonly providerOneWayMs: number;
  readonly providerOneWayJitterMs: number;
  readonly dynamoMs: number;
  readonly dynamoJitterMs: number;
  readonly sqsMs: number;
  readonly leaseMs: number;
  readonly reconcileIntervalMs: number;
  readonly reconcileMaxRows: number;
  readonly binMs: number;
  readonly horizonMs: number;
  readonly seed: number;
}

export const SETUP: Setup = {
  notices: 1_000_000,
  loadMs: HOUR_MS,
  // 70 % spread over the hour (≈ 194/s), 30 % from a batch job in 5 minutes (+1000/s).
  spike: { share: 0.3, startMs: 10 * 60_000, lengthMs: 5 * 60_000 },
  // Three short codes at 100 MPS each: above the hour's mean (278/s), far below the spike.
  providerRatePerSecond: 300,
  providerOneWayMs: 50,
  providerOneWayJitterMs: 15,
  dynamoMs: 4,
  dynamoJitterMs: 2,
  sqsMs: 8,
  leaseMs: 60_000,
  reconcileIntervalMs: 60_000,
  reconcileMaxRows: 1000,
  binMs: 10_000,
  horizonMs: 3 * HOUR_MS,
  seed: 20_260_101,
};

export const SCENARIOS: readonly Scenario[] = [
  { name: 'ours (10 × 10)', dispatcher: 'ours', concurrency: 10, batchSize: 10, plot: { color: '#1f77b4' } },
  {
    name: 'naive (10 × 10)',
    dispatcher: 'naive',
    concurrency: 10,
    batchSize: 10,
    plot: { color: '#d62728' },
  },
  // The same code with more instances: an event-source mapping allowed to scale out on the
  // backlog (naive), or a maximum concurrency set too high for the provider's rate (ours: each
  // instance then paces at R/200 = 1.5/s, and a batch of 10 no longer fits the 2 s inline wait).
  { name: 'naive (50 × 10)', dispatcher: 'naive', concurrency: 50, batchSize: 10 },
  { name: 'ours (50 × 10)', dispatcher: 'ours', concurrency: 50, batchSize: 10 },
  {
    name: 'naive (200 × 10)',
    dispatcher: 'naive',
    concurrency: 200,
    batchSize: 10,
    plot: { color: '#d62728', dashed: true },
  },
  {
    name: 'ours (200 × 10)',
    dispatcher: 'ours',
    concurrency: 200,
    batchSize: 10,
    plot: { color: '#1f77b4', dashed: true },
  },
  // The shared rate budget: the rate holds across instances, whatever their number.
  {
    name: 'budget (10 × 10)',
    dispatcher: 'budget',
    concurrency: 10,
    batchSize: 10,
    plot: { color: '#2ca02c' },
  },
  { name: 'budget (50 × 10)', dispatcher: 'budget', concurrency: 50, batchSize: 10 },
  {
    name: 'budget (200 × 10)',
    dispatcher: 'budget',
    concurrency: 200,
    batchSize: 10,
    plot: { color: '#2ca02c', dashed: true },
  },
];

/**
 * The same load with `factor` of the notices in `factor` of the time (rates, concurrency and
 * the provider unchanged): queue ages scale with the factor, the per-notice ratios do not.
 */
export function scaled(setup: Setup, factor: number): Setup {
  if (factor === 1) return setup;
  return {
    ...setup,
    notices: Math.round(setup.notices * factor),
    loadMs: setup.loadMs * factor,
    spike: {
      ...setup.spike,
      startMs: setup.spike.startMs * factor,
      lengthMs: setup.spike.lengthMs * factor,
    },
    horizonMs: setup.horizonMs * factor,
  };
}

/**
 * The provider-bound queue age: the oldest any notice gets when every token is used the moment
 * it exists (a FIFO served at exactly R from the first arrival), plus one provider round trip.
 */
export function providerBoundQueueAgeSeconds(setup: Setup, createdAt: Float64Array): number {
  const spacing = 1000 / setup.providerRatePerSecond;
  let free = Number.NEGATIVE_INFINITY;
  let worst = 0;
  for (const at of createdAt) {
    const start = Math.max(at, free);
    free = start + spacing;
    worst = Math.max(worst, start - at);
  }
  return round((worst + 2 * setup.providerOneWayMs) / 1000, 0);
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly summary: {
    readonly accepted: number;
    readonly lost: number;
    readonly drainMinutes: number;
    readonly maxQueueAgeSeconds: number;
    /** The same load at exactly R (providerBoundQueueAgeSeconds): what no dispatcher can beat. */
    readonly providerBoundQueueAgeSeconds: number;
    readonly p50TriggerToAcceptedSeconds: number;
    readonly p99TriggerToAcceptedSeconds: number;
    readonly providerCalls: number;
    readonly providerCallsPerAccepted: number;
    readonly provider429: number;
    readonly sqsRequests: number;
    readonly dynamoReads: number;
    readonly dynamoWrites: number;
    readonly schedulerCalls: number;
    readonly gateDeferrals: number;
    readonly reconcilerReenqueues: number;
    readonly senderInvocations: number;
    /** Sum of sender invocation durations (what Lambda bills), seconds. */
    readonly senderBusySeconds: number;
    readonly events: number;
    readonly wallSeconds: number;
  };
  readonly bins: Bin[];
}

const OPEN = 0;
const SENDING = 1;
const RETRY = 2;
const DONE = 3;

export async function runScenario(
  setup: Setup,
  scenario: Scenario,
  options: { readonly lingerMs?: number } = {},
): Promise<ScenarioResult> {
  const wall = Date.now();
  const sim = new Simulation();
  const random = seededRandom(setup.seed);
  const latencyRandom = seededRandom(setup.seed + 1);
  const createdAt = arrivals(random, setup.notices, setup.loadMs, setup.spike);
  const ledger = new Ledger(createdAt);
  const provider = new Provider(
    sim,
    {
      ratePerSecond: setup.providerRatePerSecond,
      oneWayMs: setup.providerOneWayMs,
      oneWayJitterMs: setup.providerOneWayJitterMs,
    },
    latencyRandom,
  );
  const queue = new Queue(sim, {
    visibilityTimeoutMs:
      scenario.dispatcher === 'naive' ? NAIVE_POLICY.visibilityTimeoutSeconds * 1000 : 90_000,
    maxReceiveCount: scenario.dispatcher === 'naive' ? NAIVE_POLICY.maxReceiveCount : 5,
    requestMs: setup.sqsMs,
  });
  queue.onDeadLetter = (message) => ledger.resolve(message.notice, sim.now, 'failed');
  const counts = {
    dynamoReads: 0,
    dynamoWrites: 0,
    sqs: 0,
    scheduler: 0,
    deferrals: 0,
    reenqueues: 0,
    invocations: 0,
    lambdaMs: 0,
  };
  const dynamo = async (kind: 'read' | 'write') => {
    if (kind === 'read') counts.dynamoReads++;
    else counts.dynamoWrites++;
    await sim.sleep(setup.dynamoMs + exponential(latencyRandom, setup.dynamoJitterMs));
  };

  // Ledger rows (ours): state, attempts, next attempt, reconciler due time.
  const state = new Uint8Array(setup.notices);
  const attempts = new Uint8Array(setup.notices);
  const nextAttemptAt = new Float64Array(setup.notices);
  const dueAt = new Float64Array(setup.notices);

  // --- intake: reserve (ours) and enqueue, one notice at a time as they arrive ---------------
  let arrived = 0;
  const arrive = () => {
    const i = arrived++;
    if (scenario.dispatcher !== 'naive') {
      counts.dynamoWrites++;
      dueAt[i] = (createdAt[i] as number) + setup.leaseMs;
    }
    counts.sqs++;
    queue.send(i);
    if (arrived < setup.notices) sim.at(createdAt[arrived] as number, arrive);
  };
  sim.at(createdAt[0] as number, arrive);

  const done = () => ledger.resolved >= setup.notices;
  const bins: Bin[] = [];
  recordBins(sim, provider, ledger, setup.binMs, bins, done);

  // --- our dispatcher: deliverIntent's primary course, with the real gate and retry policy ----
  const gateItem = { until: 0 };
  const gateStore = {
    readHold: async () => {
      await dynamo('read');
      return gateItem.until > 0 ? { untilMs: gateItem.until, reason: 'provider_throttled' } : undefined;
    },
    closeGate: async (_channel: string, untilMs: number) => {
      await dynamo('write');
      if (untilMs <= gateItem.until) return false;
      gateItem.until = untilMs;
      return true;
    },
  };
  const clock = { now: () => sim.now };

  // The shared rate budget: one clock item, each operation one DynamoDB write.
  const rateClockItem = new MemoryRateClock();
  const rateClock = {
    advance: async (channel: Channel, byUs: number) => {
      await dynamo('write');
      return rateClockItem.advance(channel, byUs);
    },
    restart: async (channel: Channel, toUs: number, ifAtOrBeforeUs: number) => {
      await dynamo('write');
      return rateClockItem.restart(channel, toUs, ifAtOrBeforeUs);
    },
    replace: async (channel: Channel, toUs: number, ifEqualsUs: number) => {
      await dynamo('write');
      return rateClockItem.replace(channel, toUs, ifEqualsUs);
    },
    read: (channel: Channel) => rateClockItem.read(channel),
  };

  const ourRecord = async (gate: SimGate, message: Message): Promise<boolean> => {
    const i = message.notice;
    await dynamo('read'); // the row, consistent
    const claimable = () =>
      state[i] === OPEN || (state[i] === RETRY && (nextAttemptAt[i] as number) <= sim.now);
    if (!claimable()) return true;
    await dynamo('read'); // suppression
    const admission = await gate.admit('sms');
    if (admission.kind === 'wait') {
      counts.deferrals++;
      counts.sqs++;
      await sim.sleep(setup.sqsMs);
      queue.send(i, Math.max(0, admission.untilMs - sim.now));
      return true;
    }
    if (!claimable()) return true; // the conditional claim lost a race
    state[i] = SENDING;
    attempts[i] = (attempts[i] as number) + 1;
    await dynamo('write'); // claim
    const answer = await provider.call();
    const outcome: ProviderOutcome =
      answer.kind === 'accepted'
        ? { kind: 'accepted', receiptId: 'SM' }
        : { kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: answer.retryAfterMs };
    if (outcome.kind === 'retryable') {
      await gate.throttled('sms', sim.now + (outcome.retryAfterMs ?? 1000)).catch(() => undefined);
    } else {
      gate.accepted?.('sms');
    }
    const now = sim.now;
    if (outcome.kind === 'accepted') {
      state[i] = DONE;
      ledger.resolve(i, now, 'accepted');
      await dynamo('write'); // outcome
      return true;
    }
    const decision = decideRetry({
      attempt: attempts[i] as number,
      now,
      deadline: (createdAt[i] as number) + 86_400_000,
      retryAfterMs: outcome.kind === 'retryable' ? outcome.retryAfterMs : undefined,
      policy: DEFAULT_RETRY_POLICY,
      random,
    });
    if (decision.kind === 'give_up') {
      state[i] = DONE;
      ledger.resolve(i, now, 'failed');
      await dynamo('write');
      return true;
    }
    state[i] = RETRY;
    nextAttemptAt[i] = decision.at;
    dueAt[i] = decision.at + setup.leaseMs;
    await dynamo('write'); // outcome: retry_scheduled
    if (decision.delayMs < 60_000) {
      counts.sqs++;
      await sim.sleep(setup.sqsMs);
      queue.send(i, decision.delayMs);
    } else {
      counts.scheduler++;
      await sim.sleep(20);
      // Scheduler fires with one-minute precision.
      queue.sendAt(i, decision.at + random() * 60_000);
    }
    return true;
  };

  // The reconciler: reserved / overdue rows past their due time are re-enqueued, oldest first.
  const reconcile = () => {
    let taken = 0;
    for (let i = 0; i < arrived && taken < setup.reconcileMaxRows; i++) {
      if ((state[i] === OPEN || state[i] === RETRY) && (dueAt[i] as number) <= sim.now) {
        taken++;
        counts.reenqueues++;
        counts.dynamoReads++;
        counts.dynamoWrites++;
        counts.sqs++;
        queue.send(i);
        dueAt[i] = sim.now + setup.leaseMs;
      }
    }
    if (!done()) sim.at(sim.now + setup.reconcileIntervalMs, reconcile);
  };
  if (scenario.dispatcher !== 'naive') sim.at(setup.reconcileIntervalMs, reconcile);

  // --- the naive dispatcher: in-place fixed-backoff retries, then SQS redelivery -------------
  const naiveRecord = async (message: Message): Promise<boolean> => {
    for (let attempt = 1; ; attempt++) {
      const answer = await provider.call();
      const outcome: ProviderOutcome =
        answer.kind === 'accepted'
          ? { kind: 'accepted', receiptId: 'SM' }
          : { kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: answer.retryAfterMs };
      const decision = naiveDecision(outcome, attempt);
      if (decision.kind === 'done') {
        ledger.resolve(message.notice, sim.now, 'accepted');
        return true;
      }
      if (decision.kind === 'drop') {
        ledger.resolve(message.notice, sim.now, 'failed');
        return true;
      }
      if (decision.kind === 'fail') return false;
      await sim.sleep(decision.afterMs);
    }
  };

  // --- the event-source mapping: C instances, one batch each, records in parallel ------------
  const instance = async (index: number) => {
    const holds = new SharedSendGate({ store: gateStore, clock, sleep: sim.sleep });
    const gate: SimGate =
      scenario.dispatcher === 'budget'
        ? new BudgetSendGate({
            holds,
            budget: new RateBudget(rateClock, { sms: budgetRules(setup.providerRatePerSecond) }),
            clock,
            sleep: sim.sleep,
            lingerMs: options.lingerMs ?? 0,
          })
        : new PerProcessPaceGate({
            holds,
            clock,
            ratePerSecond: setup.providerRatePerSecond / scenario.concurrency,
            maxInlineWaitMs: PER_INSTANCE_INLINE_WAIT_MS,
            sleep: sim.sleep,
          });
    void index;
    for (;;) {
      counts.sqs++;
      const batch = await queue.receive(scenario.batchSize);
      // Billed duration: from the batch's arrival to the end of the delete (the long poll is the
      // event-source mapping's, not the function's).
      const invokedAt = sim.now;
      counts.invocations++;
      const results = await Promise.all(
        batch.map((m) => (scenario.dispatcher === 'naive' ? naiveRecord(m) : ourRecord(gate, m))),
      );
      const failed = batch.filter((_, k) => !results[k]);
      for (const m of failed) queue.fail(m);
      if (failed.length < batch.length) {
        counts.sqs++; // DeleteMessageBatch
        await sim.sleep(setup.sqsMs);
      }
      counts.lambdaMs += sim.now - invokedAt;
    }
  };
  for (let k = 0; k < scenario.concurrency; k++) void instance(k);

  await sim.run(setup.horizonMs, done);

  const latencies = new Float64Array(setup.notices);
  let n = 0;
  for (let i = 0; i < setup.notices; i++) {
    if (ledger.outcome[i] === 1) latencies[n++] = (ledger.resolvedAt[i] as number) - (createdAt[i] as number);
  }
  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) =>
    n === 0 ? Number.NaN : (sorted[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)] as number) / 1000;
  let lastResolved = 0;
  for (let i = 0; i < setup.notices; i++) {
    const t = ledger.resolvedAt[i] as number;
    if (t > lastResolved) lastResolved = t;
  }
  return {
    scenario,
    summary: {
      accepted: ledger.accepted,
      lost: setup.notices - ledger.accepted,
      drainMinutes: round(lastResolved / 60_000, 1),
      maxQueueAgeSeconds: round(Math.max(0, ...bins.map((b) => b.oldestUnresolvedSeconds)), 0),
      providerBoundQueueAgeSeconds: providerBoundQueueAgeSeconds(setup, createdAt),
      p50TriggerToAcceptedSeconds: round(pct(50), 1),
      p99TriggerToAcceptedSeconds: round(pct(99), 1),
      providerCalls: provider.calls,
      providerCallsPerAccepted: round(provider.calls / Math.max(1, ledger.accepted), 3),
      provider429: provider.throttled,
      sqsRequests: counts.sqs,
      dynamoReads: counts.dynamoReads,
      dynamoWrites: counts.dynamoWrites,
      schedulerCalls: counts.scheduler,
      gateDeferrals: counts.deferrals,
      reconcilerReenqueues: counts.reenqueues,
      senderInvocations: counts.invocations,
      senderBusySeconds: round(counts.lambdaMs / 1000, 0),
      events: sim.events,
      wallSeconds: round((Date.now() - wall) / 1000, 1),
    },
    bins,
  };
}

export function plot(setup: Setup, results: readonly ScenarioResult[]): string {
  const drawn = results.filter((r) => r.scenario.plot);
  const series = (pick: (b: Bin) => number) =>
    drawn.map((r) => ({
      name: r.scenario.name,
      color: r.scenario.plot?.color ?? '#333',
      dashed: r.scenario.plot?.dashed ?? false,
      points: r.bins.map((b) => [b.minute, pick(b)] as const),
    }));
  return figure({
    title: `1 M SMS in one hour (30 % in a 5-min spike) against a provider capped at ${setup.providerRatePerSecond}/s`,
    xLabel: 'minutes',
    panels: [
      { yLabel: 'oldest unresolved (min)', series: series((b) => b.oldestUnresolvedSeconds / 60) },
      {
        yLabel: 'provider calls / s',
        series: series((b) => b.providerCallsPerSecond),
        references: [
          { y: setup.providerRatePerSecond, label: `provider cap ${setup.providerRatePerSecond}/s` },
        ],
      },
      { yLabel: 'unresolved notices', series: series((b) => b.unresolved) },
    ],
    note: 'bench/simulate.ts: our senders run the real SharedSendGate, BudgetSendGate and decideRetry, the naive ones bench/baseline/naive-policy.ts. (instances × batch); 10 s bins.',
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flagValue = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const factor = Number(flagValue('--scale') ?? 1);
  if (!(factor > 0 && factor <= 1)) throw new Error('--scale takes a factor in (0, 1]');
  const lingerMs = Number(flagValue('--linger-ms') ?? 0);
  if (!(lingerMs >= 0)) throw new Error('--linger-ms takes a number of milliseconds ≥ 0');
  const flagged = new Set(
    ['--scale', '--linger-ms'].flatMap((flag) => {
      const at = args.indexOf(flag);
      return at >= 0 ? [at, at + 1] : [];
    }),
  );
  const only = args.filter((_, k) => !flagged.has(k));
  const setup = scaled(SETUP, factor);
  const scenarios =
    only.length > 0 ? SCENARIOS.filter((s) => only.some((o) => s.name.includes(o))) : SCENARIOS;
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    process.stderr.write(`[simulate] ${scenario.name} …\n`);
    const result = await runScenario(setup, scenario, { lingerMs });
    process.stderr.write(`[simulate]   ${JSON.stringify(result.summary)}\n`);
    results.push(result);
  }
  const root = fileURLToPath(new URL('../', import.meta.url));
  await mkdir(`${root}bench/results`, { recursive: true });
  // A partial or scaled run prints its table and writes nothing.
  const complete = only.length === 0 && factor === 1 && lingerMs === 0;
  if (complete)
    await writeFile(
      `${root}bench/results/scale-simulation.json`,
      `${JSON.stringify(
        {
          setup: SETUP,
          naivePolicy: NAIVE_POLICY,
          retryPolicy: DEFAULT_RETRY_POLICY,
          results: results.map((r) => ({
            scenario: r.scenario,
            summary: r.summary,
            // Minute resolution is enough for the JSON; the SVG has the 10 s bins.
            perMinute: r.bins.filter((_, k) => k % 6 === 5),
          })),
        },
        null,
        2,
      )}\n`,
    );
  if (complete) await writeFile(`${root}docs/scale-simulation.svg`, plot(SETUP, results));

  const header = [
    'scenario',
    'drain min',
    'max age s',
    'bound s',
    'p50 s',
    'p99 s',
    'calls/acc',
    '429s',
    'lost',
    'defer/n',
    'ddb w/acc',
    'λ busy s',
  ];
  process.stdout.write(`${header.map((h, k) => (k === 0 ? h.padEnd(18) : h.padStart(11))).join('')}\n`);
  for (const r of results) {
    const s = r.summary;
    const cells = [
      s.drainMinutes,
      s.maxQueueAgeSeconds,
      s.providerBoundQueueAgeSeconds,
      s.p50TriggerToAcceptedSeconds,
      s.p99TriggerToAcceptedSeconds,
      s.providerCallsPerAccepted,
      s.provider429,
      s.lost,
      round(s.gateDeferrals / setup.notices, 3),
      round(s.dynamoWrites / Math.max(1, s.accepted), 3),
      s.senderBusySeconds,
    ].map((v) => String(v).padStart(11));
    process.stdout.write(`${r.scenario.name.padEnd(18)}${cells.join('')}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `[simulate] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
