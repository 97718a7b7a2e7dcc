/**
 * The `priority` scenario (docs/benchmarks.md, issue 15): a bulk burst of N SMS at a provider
 * capped at R/s, and one critical notice per second for as long as the burst lasts. Measured for
 * the stack with lanes and for one lane (every priority on the channel queue) side by side, both
 * paced by the same shared rate budget (`SMS_SEND_RATE_PER_SECOND` = R), each against a fresh
 * stack and a reset simulator:
 *
 * - criticalP99Seconds: trigger (the POST's start) → the `accepted` record, over the critical notices;
 * - bulkDrainSeconds: the first bulk POST → the last acceptance, against idealSeconds = (N + critical) / R;
 * - providerCallsPerAccepted, duplicates (messages beyond the first per destination), lost.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SmsSimulator } from '../local/sms-simulator/server.ts';
import { acceptedAt, type BenchNotice, benchNotices, postBurst, readLedgerRows } from './lib/notices.ts';
import type { BenchServices } from './lib/services.ts';
import type { StackHandle } from './lib/stack-process.ts';
import { percentile, round } from './lib/stats.ts';

export type PriorityVariant = 'lanes' | 'single';

export interface PriorityFigures {
  readonly variant: PriorityVariant;
  readonly bulkNotices: number;
  readonly criticalNotices: number;
  readonly providerRatePerSecond: number;
  readonly criticalP50Seconds: number;
  readonly criticalP99Seconds: number;
  readonly criticalMaxSeconds: number;
  /** Where a critical notice's time goes: its POST (intake: answered 202) … */
  readonly criticalIntakeP99Seconds: number;
  /** … and from that answer to the `accepted` record (dispatch: queue, token, claim, provider call). */
  readonly criticalDispatchP99Seconds: number;
  readonly bulkP99Seconds: number;
  readonly bulkDrainSeconds: number;
  readonly idealSeconds: number;
  readonly bulkDrainOverIdeal: number;
  readonly providerCallsPerAccepted: number;
  readonly provider429: number;
  readonly duplicates: number;
  readonly lost: number;
  /** Acceptances per second since the first bulk POST (where the drain's time goes). */
  readonly acceptedPerSecond: readonly number[];
  /** First bulk POST → the first acceptance (intake, first poll, first booking). */
  readonly firstAcceptedSeconds: number;
  /** Writes to the rate budget's item (bookings) per accepted send, counted on the wire. */
  readonly budgetWritesPerAccepted: number;
  readonly budgetWriteUnitsPerAccepted: number;
  /** All DynamoDB writes of the run per accepted send (intake, claims, outcomes, bookings, deferrals). */
  readonly dynamoWritesPerAccepted: number;
}

/** What each variant's stack is started with, beside the bench's common environment. */
export function priorityStackEnv(variant: PriorityVariant, rate: number): Record<string, string> {
  return { LOCAL_LANES: variant === 'lanes' ? 'on' : 'off', SMS_SEND_RATE_PER_SECOND: String(rate) };
}

const withPriority = (notices: BenchNotice[], priority: string): BenchNotice[] =>
  notices.map((n) => ({ ...n, body: { ...n.body, priority } }));

/** The burst's priorities, taken in turn (`bulk` alone by default; `standard,bulk` saturates both lower lanes). */
export type BurstPriority = 'standard' | 'bulk';

const inTurn = (notices: BenchNotice[], priorities: readonly BurstPriority[]): BenchNotice[] =>
  notices.map((n, i) => ({ ...n, body: { ...n.body, priority: priorities[i % priorities.length] } }));

export async function runPriority(options: {
  readonly variant: PriorityVariant;
  readonly stack: StackHandle;
  readonly services: BenchServices;
  readonly simulator: SmsSimulator;
  readonly ddb: DynamoDBClient;
  readonly notices: number;
  readonly rate: number;
  readonly tag: string;
  readonly log: (line: string) => void;
  /** @default ['bulk'] */
  readonly burstPriorities?: readonly BurstPriority[];
}): Promise<PriorityFigures> {
  const { stack, simulator, notices: n, rate, log } = options;
  await warmUp(stack, simulator, options.ddb, options.tag);
  simulator.reset();
  simulator.faults.set({ rateLimitPerSecond: rate, callbacksEnabled: false, deliveryFailures: [] });
  const burstPriorities = options.burstPriorities ?? ['bulk'];
  const bulk = inTurn(benchNotices(`${options.tag}b`, n), burstPriorities);
  // One a second for at most three times the ideal drain; the run stops posting once bulk is done.
  const criticalPool = withPriority(
    benchNotices(`${options.tag}c`, Math.ceil((3 * n) / rate), ['sms'], 1),
    'critical',
  );
  const criticalTriggers: number[] = [];
  const criticalAnswered: number[] = [];
  log(
    `priority (${options.variant}): ${n} ${burstPriorities.join('/')} SMS at ${rate}/s, one critical a second during the burst`,
  );

  const t0 = Date.now();
  let bulkDone = false;
  const bulkIds = bulk.map((b) => b.noticeId);
  const critical = (async () => {
    for (const notice of criticalPool) {
      if (bulkDone) break;
      const startedAt = Date.now();
      criticalTriggers.push(startedAt);
      const response = await fetch(`${stack.apiUrl}/v1/notices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(notice.body),
      });
      if (response.status !== 202) log(`  critical notice answered ${response.status}`);
      await response.arrayBuffer();
      criticalAnswered.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 1000 - Date.now())));
    }
  })();
  const { triggers: bulkTriggers } = await postBurst(stack.apiUrl, bulk);

  const timeoutMs = Math.max(90_000, (3 * n * 1000) / rate + 30_000);
  const bulkPhones = new Set(bulk.map((b) => b.phone));
  while (Date.now() < t0 + timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sent = new Set(simulator.messages().map((m) => m.to));
    if ([...bulkPhones].every((p) => sent.has(p))) break;
  }
  bulkDone = true;
  await critical;
  const criticalSent = criticalPool.slice(0, criticalTriggers.length);
  const allIds = [...bulkIds, ...criticalSent.map((c) => c.noticeId)];
  let rows = await readLedgerRows(options.ddb, stack.tableName, allIds, 'sms');
  while (Date.now() < t0 + timeoutMs && !allIds.every((id) => acceptedAt(rows.get(id)) !== undefined)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    rows = await readLedgerRows(options.ddb, stack.tableName, allIds, 'sms');
  }

  const requests = options.services.proxies.dynamodb.between(t0, Date.now());
  const isWrite = (op: string) => /Put|Update|Delete|Write/.test(op);
  const budgetWrites = requests.filter((r) => r.target === 'budget' && isWrite(r.operation));
  const allWrites = requests.filter((r) => isWrite(r.operation)).reduce((sum, r) => sum + (r.share ?? 1), 0);
  const messages = simulator.messages();
  const perPhone = new Map<string, number>();
  for (const m of messages) perPhone.set(m.to, (perPhone.get(m.to) ?? 0) + 1);
  const latency = (notice: BenchNotice, trigger: number) => {
    const at = acceptedAt(rows.get(notice.noticeId));
    return at !== undefined && (perPhone.get(notice.phone) ?? 0) > 0 ? (at - trigger) / 1000 : Number.NaN;
  };
  const criticalLatencies = criticalSent.map((c, i) => latency(c, criticalTriggers[i] as number));
  const bulkLatencies = bulk.map((b, i) => latency(b, bulkTriggers[i] as number));
  const criticalIntake = criticalSent.map(
    (_, i) => ((criticalAnswered[i] as number) - (criticalTriggers[i] as number)) / 1000,
  );
  const criticalDispatch = criticalSent.map((c, i) => latency(c, criticalAnswered[i] as number));
  const all = [...bulk, ...criticalSent];
  const accepted = all
    .map((x) => acceptedAt(rows.get(x.noticeId)))
    .filter((x): x is number => x !== undefined);
  const lost = [...criticalLatencies, ...bulkLatencies].filter((x) => !Number.isFinite(x)).length;
  const start = Math.min(...bulkTriggers);
  const drain = (Math.max(...accepted) - start) / 1000;
  const ideal = (n + criticalSent.length) / rate;
  let duplicates = 0;
  for (const count of perPhone.values()) duplicates += Math.max(0, count - 1);
  return {
    variant: options.variant,
    bulkNotices: n,
    criticalNotices: criticalSent.length,
    providerRatePerSecond: rate,
    criticalP50Seconds: round(percentile(criticalLatencies, 50)),
    criticalP99Seconds: round(percentile(criticalLatencies, 99)),
    criticalMaxSeconds: round(Math.max(...criticalLatencies.filter(Number.isFinite))),
    criticalIntakeP99Seconds: round(percentile(criticalIntake, 99)),
    criticalDispatchP99Seconds: round(percentile(criticalDispatch, 99)),
    bulkP99Seconds: round(percentile(bulkLatencies, 99)),
    bulkDrainSeconds: round(drain),
    idealSeconds: round(ideal),
    bulkDrainOverIdeal: round(drain / ideal, 3),
    providerCallsPerAccepted: round(simulator.faults.counters.createCalls / Math.max(1, perPhone.size), 3),
    provider429: simulator.faults.counters.rateLimited,
    duplicates,
    lost,
    acceptedPerSecond: perSecond(accepted, start),
    budgetWritesPerAccepted: round(budgetWrites.length / Math.max(1, perPhone.size), 3),
    budgetWriteUnitsPerAccepted: round(
      budgetWrites.reduce((sum, r) => sum + (r.capacityUnits ?? 1), 0) / Math.max(1, perPhone.size),
      3,
    ),
    dynamoWritesPerAccepted: round(allWrites / Math.max(1, perPhone.size), 3),
    firstAcceptedSeconds: round((Math.min(...accepted) - start) / 1000),
  };
}

/**
 * A fresh stack's first requests pay for connections, data keys and lazily built clients; the
 * scenario measures dispatch, so each stack first sends a few notices of its own (another block
 * of numbers) and waits for them.
 */
export async function warmUp(
  stack: StackHandle,
  simulator: SmsSimulator,
  ddb: DynamoDBClient,
  tag: string,
): Promise<void> {
  simulator.reset();
  const notices = benchNotices(`${tag}w`, 5, ['sms'], 2);
  await postBurst(stack.apiUrl, notices);
  const ids = notices.map((x) => x.noticeId);
  for (let i = 0; i < 60; i++) {
    const rows = await readLedgerRows(ddb, stack.tableName, ids, 'sms');
    if (ids.every((id) => acceptedAt(rows.get(id)) !== undefined)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // Let the provider's bucket refill before the burst.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
}

function perSecond(times: readonly number[], start: number): number[] {
  const out: number[] = [];
  for (const t of times) {
    const k = Math.floor((t - start) / 1000);
    while (out.length <= k) out.push(0);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
