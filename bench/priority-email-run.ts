/**
 * The `priorityEmailBatch` scenario (docs/benchmarks.md, issue 20): the priority scenario
 * (./priority-run.ts) through a batching e-mail provider. The Resend simulator takes batch calls
 * of up to B e-mails (`EMAIL_BATCH_MAX`); the channel's shared rate budget allows R provider
 * CALLS a second, whatever their size; the inline wait for a token (`RATE_BUDGET_MAX_WAIT_MS`)
 * is shorter than the bulk lane books ahead, so the gate defers calls booked beyond it. A bulk burst of N e-mails and one critical
 * e-mail a second while it lasts, for `lanes` (`LOCAL_LANES=on`) and `single` (`LOCAL_LANES=off`:
 * one lane, the SAME budget), each on a fresh stack and table, warmed up, in one run. The burst
 * is taken in by a second stack process (see `bulkIntake`), the critical notices by the senders'.
 *
 * Measured as in ./priority-run.ts (trigger = the POST's start; accepted = the row's `accepted`
 * record; duplicates = e-mails beyond the first per intent at the simulator; lost = no `accepted`
 * row or no e-mail), and beside it:
 * - idealSeconds = e-mails ÷ (R × B): every e-mail a B-th of a call (the issue's ideal);
 * - idealCallsSeconds = (ceil(bulk ÷ B) + critical) ÷ R: the calls the load needs at the least,
 *   a critical e-mail riding alone (its lane's invocation holds only critical records);
 * - deferrals: the `deferred` delivery steps the stack logs (rows, by their priority; one
 *   deferral sends back every row of its call);
 * - e-mails per call, batch and single calls, calls and acceptances a second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CHANNEL_SETTINGS } from '../lambdas/contract/settings.ts';
import { type ResendSimulator, startResendSimulator } from '../local/email-simulators/resend.ts';
import { type CpuShares, cpuWindow } from './lib/cpu.ts';
import { acceptedAt, type BenchNotice, benchNotices, postBurst, readLedgerRows } from './lib/notices.ts';
import { type StackHandle, startStackChild } from './lib/stack-process.ts';
import { percentile, round } from './lib/stats.ts';

/**
 * The variable that gives the e-mail channel its shared rate budget (provider calls a second),
 * named once for this scenario: the stack's own name for it (lambdas/contract/settings.ts).
 */
const EMAIL_RATE_BUDGET_VARIABLE = CHANNEL_SETTINGS.email.sendRate;
/** Bulk notices per batch POST (bench/lib/notices.ts postBurst): see the burst below. */
const BULK_NOTICES_PER_REQUEST = 25;

export type EmailPriorityVariant = 'lanes' | 'single';

export interface EmailPriorityParameters {
  readonly bulkEmails: number;
  /** R: provider calls a second, the budget (and the simulator's own cap). */
  readonly callsPerSecond: number;
  /** B: `EMAIL_BATCH_MAX`. */
  readonly batchMax: number;
  /** `RATE_BUDGET_MAX_WAIT_MS`. */
  readonly maxInlineWaitMs: number;
  /** Batches in flight per queue before the lanes' caps (`LOCAL_SQS_CONCURRENCY`). */
  readonly pollerConcurrency: number;
  /**
   * Where the bulk burst is taken in: `own` — a second stack process on the same table and
   * queues whose senders are off (`LOCAL_SENDERS=none`), as in AWS, where the HTTP functions
   * run in instances of their own; `senders` — the senders' own process, as `priority` does.
   */
  readonly bulkIntake: 'own' | 'senders';
}

export interface EmailPriorityFigures {
  readonly variant: EmailPriorityVariant;
  readonly bulkEmails: number;
  readonly criticalEmails: number;
  readonly criticalP50Seconds: number;
  readonly criticalP99Seconds: number;
  readonly criticalMaxSeconds: number;
  /** POST → 202 … */
  readonly criticalIntakeP99Seconds: number;
  /** … and 202 → the `accepted` record. */
  readonly criticalDispatchP99Seconds: number;
  readonly bulkP99Seconds: number;
  /** The first bulk POST → the last acceptance (bulk and critical). */
  readonly bulkDrainSeconds: number;
  /** (bulk + critical) ÷ (R × B). */
  readonly idealSeconds: number;
  readonly bulkDrainOverIdeal: number;
  /** (ceil(bulk ÷ B) + critical) ÷ R. */
  readonly idealCallsSeconds: number;
  readonly bulkDrainOverIdealCalls: number;
  /** Send calls the simulator received (429s included) ÷ intents it holds an e-mail for. */
  readonly providerCallsPerAccepted: number;
  readonly providerCalls: number;
  /** Of them `POST /emails/batch`. */
  readonly batchCalls: number;
  /** E-mails created per answered call. */
  readonly emailsPerCall: number;
  /** E-mails created per answered batch call. */
  readonly emailsPerBatchCall: number;
  readonly provider429: number;
  /** `deferred` delivery steps (rows sent back through their lane), by the priority of the row. */
  readonly deferredRows: Readonly<Record<'critical' | 'standard' | 'bulk', number>>;
  /** Deferred rows per accepted e-mail. */
  readonly deferredRowsPerAccepted: number;
  readonly duplicates: number;
  readonly lost: number;
  /** First bulk POST → the last bulk POST answered (intake of the burst, in the stack's process). */
  readonly intakeSeconds: number;
  /** First bulk POST → the first acceptance. */
  readonly firstAcceptedSeconds: number;
  /** Acceptances a second since the first bulk POST. */
  readonly acceptedPerSecond: readonly number[];
  /** Provider calls a second since the first bulk POST (429s included). */
  readonly callsPerSecond: readonly number[];
  /**
   * CPU seconds from the first bulk POST to the end of the measurement: the senders' process,
   * the intake process, DynamoDB Local, the bench's own (local SQS, the Resend simulator), the
   * rest of the machine (other work on it) and idle (Linux only) …
   */
  readonly cpu?: CpuShares;
  /** … and of it, while the burst was taken in (`intakeSeconds`). */
  readonly cpuDuringIntake?: CpuShares;
}

export interface EmailPriorityResult extends EmailPriorityParameters {
  readonly lanes: EmailPriorityFigures;
  readonly single: EmailPriorityFigures;
}

export interface EmailPriorityOptions extends EmailPriorityParameters {
  /** The stack's base environment (services, SMS provider); e-mail settings are added here. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly ddb: DynamoDBClient;
  /** DynamoDB Local's JVM, for the CPU figures. */
  readonly dynamodbPid?: number;
  readonly tag: string;
  readonly log: (line: string) => void;
}

export async function runPriorityEmailBatch(options: EmailPriorityOptions): Promise<EmailPriorityResult> {
  const resend = await startResendSimulator({});
  try {
    const lanes = await oneVariant(resend, options, 'lanes');
    const single = await oneVariant(resend, options, 'single');
    const { baseEnv: _env, ddb: _ddb, dynamodbPid: _pid, tag: _tag, log: _log, ...parameters } = options;
    return { ...parameters, lanes, single };
  } finally {
    await resend.close();
  }
}

/** Deferred steps, read from the stack's JSON log lines. */
class DeferralCounter {
  readonly rows = { critical: 0, standard: 0, bulk: 0 };
  private counting = false;

  start(): void {
    this.counting = true;
  }

  line = (line: string): void => {
    if (!this.counting || !line.includes('"deferred"') || !line.includes('delivery step')) return;
    try {
      const entry = JSON.parse(line) as { priority?: string; result?: { kind?: string } };
      if (entry.result?.kind !== 'deferred') return;
      const lane = entry.priority === 'critical' || entry.priority === 'bulk' ? entry.priority : 'standard';
      this.rows[lane]++;
    } catch {
      // Not a JSON line.
    }
  };

  get total(): number {
    return this.rows.critical + this.rows.standard + this.rows.bulk;
  }
}

async function oneVariant(
  resend: ResendSimulator,
  options: EmailPriorityOptions,
  variant: EmailPriorityVariant,
): Promise<EmailPriorityFigures> {
  const { log, callsPerSecond: rate, batchMax } = options;
  const tag = `${options.tag}p${variant[0]}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-bench-priority-email-'));
  const deferrals = new DeferralCounter();
  let stack: StackHandle | undefined;
  let intake: StackHandle | undefined;
  try {
    resend.reset();
    const env = {
      ...options.baseEnv,
      LEDGER_DATA_DIR: dataDir,
      LEDGER_TABLE_NAME: `bench-${tag}`,
      EMAIL_PROVIDER: 'resend',
      RESEND_BASE_URL: resend.baseUrl,
      RESEND_API_KEY: resend.apiKey,
      RESEND_WEBHOOK_SECRET: resend.webhookSecret,
      RESEND_FROM: 'Clinic <notices@example.com>',
      EMAIL_BATCH_MAX: String(batchMax),
      [EMAIL_RATE_BUDGET_VARIABLE]: String(rate),
      RATE_BUDGET_MAX_WAIT_MS: String(options.maxInlineWaitMs),
      LOCAL_LANES: variant === 'lanes' ? 'on' : 'off',
      LOCAL_SQS_CONCURRENCY: String(options.pollerConcurrency),
    };
    // E-mail only: the SMS sender's pollers (three lanes of idle long polls with lanes) would
    // only take CPU from the e-mail sender on this machine (in AWS, Lambda polls, not the function).
    stack = await startStackChild({ ...env, LOCAL_SENDERS: 'email' }, log, { onStdoutLine: deferrals.line });
    await warmUp(stack, resend, options.ddb, tag);
    if (options.bulkIntake === 'own') {
      // The same data dir (its keys), table and queues; no senders, and no reconciler run
      // after its first (an empty table) within the scenario.
      intake = await startStackChild(
        {
          ...env,
          LOCAL_SENDERS: 'none',
          RECONCILE_INTERVAL_MS: '3600000',
          // The senders' stack's archive store: one S3 store over the data directory.
          ...(stack.endpoints.s3 ? { AWS_ENDPOINT_URL_S3: stack.endpoints.s3 } : {}),
        },
        log,
      );
    }
    resend.reset();
    resend.set({ rateLimitPerSecond: rate, webhooksEnabled: false });
    deferrals.start();
    return await measure(
      { senders: stack, bulkIntake: intake ?? stack },
      resend,
      options,
      variant,
      tag,
      deferrals,
    );
  } finally {
    await intake?.stop();
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const withPriority = (notices: BenchNotice[], priority: string): BenchNotice[] =>
  notices.map((n) => ({ ...n, body: { ...n.body, priority } }));

async function measure(
  stacks: {
    /** Its HTTP API takes the critical notices. */
    readonly senders: StackHandle;
    readonly bulkIntake: StackHandle;
  },
  resend: ResendSimulator,
  options: EmailPriorityOptions,
  variant: EmailPriorityVariant,
  tag: string,
  deferrals: DeferralCounter,
): Promise<EmailPriorityFigures> {
  const { log, callsPerSecond: rate, batchMax: b, bulkEmails: n } = options;
  const idealBulk = n / (rate * b);
  const bulk = withPriority(benchNotices(`${tag}b`, n, ['email']), 'bulk');
  const criticalPool = withPriority(
    benchNotices(`${tag}c`, Math.ceil(3 * idealBulk) + 10, ['email'], 1),
    'critical',
  );
  log(
    `priority e-mail (${variant}): ${n} bulk e-mails (intake: ${options.bulkIntake === 'own' ? 'a process of its own' : "the senders' process"}), Resend at ${rate} calls/s, batches of ≤ ${b}, inline wait ${options.maxInlineWaitMs} ms, one critical a second (ideal ${round(idealBulk, 1)} s)`,
  );
  const criticalTriggers: number[] = [];
  const criticalAnswered: number[] = [];
  const t0 = Date.now();
  const pids = {
    senders: stacks.senders.pid,
    ...(stacks.bulkIntake !== stacks.senders ? { intake: stacks.bulkIntake.pid } : {}),
    dynamodb: options.dynamodbPid,
    bench: process.pid,
  };
  const cpu = cpuWindow(pids);
  const cpuIntake = cpuWindow(pids);
  const callSamples: { at: number; calls: number }[] = [{ at: t0, calls: 0 }];
  const sampler = setInterval(
    () => callSamples.push({ at: Date.now(), calls: resend.counters.sendCalls }),
    250,
  );
  let bulkDone = false;
  const critical = (async () => {
    for (const notice of criticalPool) {
      if (bulkDone) break;
      const startedAt = Date.now();
      criticalTriggers.push(startedAt);
      const response = await fetch(`${stacks.senders.apiUrl}/v1/notices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(notice.body),
      }).catch((error: unknown) => {
        let alive = false;
        try {
          process.kill(stacks.senders.pid as number, 0);
          alive = true;
        } catch {}
        throw new Error(
          `the senders' stack (pid ${stacks.senders.pid}, ${alive ? 'alive' : 'gone'}) at ${stacks.senders.apiUrl} did not answer; its stderr:\n${stacks.senders.stderrTail().slice(-2000)}`,
          { cause: error },
        );
      });
      if (response.status !== 202) log(`  critical notice answered ${response.status}`);
      await response.arrayBuffer();
      criticalAnswered.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + 1000 - Date.now())));
    }
  })();
  // One batch POST at a time: the intake process is one event loop, more requests in flight
  // only wait in it. 25 notices a request: on a 2-core machine that also runs the senders and
  // DynamoDB Local under the burst, a request of 100 took longer than the gateway's 30 s
  // integration limit (503); 25 still keep intake well ahead of R × B.
  // Should the burst fail, the critical loop stops too and the burst's error is the one told.
  const posted = await postBurst(stacks.bulkIntake.apiUrl, bulk, 1, BULK_NOTICES_PER_REQUEST).catch(
    async (error: unknown) => {
      bulkDone = true;
      await critical.catch(() => undefined);
      throw error;
    },
  );
  const intakeSeconds = (Math.max(...posted.batches.map((x) => x.finishedAt)) - t0) / 1000;
  const cpuDuringIntake = cpuIntake.end();

  const intentOf = (notice: BenchNotice) => `${notice.noticeId}-email`;
  const bulkIntents = bulk.map(intentOf);
  const timeoutMs = Math.max(90_000, 3 * idealBulk * 1000 + 30_000);
  let lastReport = Date.now();
  while (Date.now() < t0 + timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const sent = new Set(resend.emails().map((e) => e.headers['X-Notice-Intent']));
    if (bulkIntents.every((i) => sent.has(i))) break;
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(
        `  t=${Math.round((Date.now() - t0) / 1000)} s: ${resend.counters.emailsCreated} e-mails in ${resend.counters.sendCalls} calls, ${deferrals.total} rows deferred`,
      );
    }
  }
  bulkDone = true;
  await critical;
  const criticalSent = criticalPool.slice(0, criticalTriggers.length);
  const all = [...bulk, ...criticalSent];
  const ids = all.map((x) => x.noticeId);
  let rows = await readLedgerRows(options.ddb, stacks.senders.tableName, ids, 'email');
  while (Date.now() < t0 + timeoutMs && !ids.every((id) => acceptedAt(rows.get(id)) !== undefined)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    rows = await readLedgerRows(options.ddb, stacks.senders.tableName, ids, 'email');
  }
  clearInterval(sampler);
  const cpuShares = cpu.end();

  const perIntent = new Map<string, number>();
  let batchEmails = 0;
  for (const email of resend.emails()) {
    const intent = email.headers['X-Notice-Intent'];
    if (intent) perIntent.set(intent, (perIntent.get(intent) ?? 0) + 1);
    if (email.via === 'batch') batchEmails++;
  }
  const latency = (notice: BenchNotice, from: number) => {
    const at = acceptedAt(rows.get(notice.noticeId));
    return at !== undefined && (perIntent.get(intentOf(notice)) ?? 0) > 0 ? (at - from) / 1000 : Number.NaN;
  };
  const criticalLatencies = criticalSent.map((c, i) => latency(c, criticalTriggers[i] as number));
  const bulkLatencies = bulk.map((x, i) => latency(x, posted.triggers[i] as number));
  const criticalIntake = criticalSent.map(
    (_, i) => ((criticalAnswered[i] as number) - (criticalTriggers[i] as number)) / 1000,
  );
  const criticalDispatch = criticalSent.map((c, i) => latency(c, criticalAnswered[i] as number));
  const accepted = all
    .map((x) => acceptedAt(rows.get(x.noticeId)))
    .filter((x): x is number => x !== undefined);
  const lost = [...criticalLatencies, ...bulkLatencies].filter((x) => !Number.isFinite(x)).length;
  let duplicates = 0;
  for (const count of perIntent.values()) duplicates += Math.max(0, count - 1);
  const start = Math.min(...posted.triggers);
  const drain = (Math.max(...accepted) - start) / 1000;
  const ideal = (n + criticalSent.length) / (rate * b);
  const idealCalls = (Math.ceil(n / b) + criticalSent.length) / rate;
  const c = resend.counters;
  const answered = Math.max(1, c.sendCalls - c.rateLimited - c.faultsInjected);
  return {
    variant,
    bulkEmails: n,
    criticalEmails: criticalSent.length,
    criticalP50Seconds: round(percentile(criticalLatencies, 50)),
    criticalP99Seconds: round(percentile(criticalLatencies, 99)),
    criticalMaxSeconds: round(Math.max(...criticalLatencies.filter(Number.isFinite))),
    criticalIntakeP99Seconds: round(percentile(criticalIntake, 99)),
    criticalDispatchP99Seconds: round(percentile(criticalDispatch, 99)),
    bulkP99Seconds: round(percentile(bulkLatencies, 99)),
    bulkDrainSeconds: round(drain),
    idealSeconds: round(ideal),
    bulkDrainOverIdeal: round(drain / ideal, 3),
    idealCallsSeconds: round(idealCalls),
    bulkDrainOverIdealCalls: round(drain / idealCalls, 3),
    providerCallsPerAccepted: round(c.sendCalls / Math.max(1, perIntent.size), 4),
    providerCalls: c.sendCalls,
    batchCalls: c.batchCalls,
    emailsPerCall: round(c.emailsCreated / answered, 2),
    emailsPerBatchCall: round(batchEmails / Math.max(1, c.batchCalls - c.rateLimited), 2),
    provider429: c.rateLimited,
    deferredRows: { ...deferrals.rows },
    deferredRowsPerAccepted: round(deferrals.total / Math.max(1, perIntent.size), 3),
    duplicates,
    lost,
    intakeSeconds: round(intakeSeconds),
    firstAcceptedSeconds: round((Math.min(...accepted) - start) / 1000),
    acceptedPerSecond: perSecond(accepted, start),
    callsPerSecond: callsPerSecondOf(callSamples, start),
    ...(cpuShares ? { cpu: cpuShares } : {}),
    ...(cpuDuringIntake ? { cpuDuringIntake } : {}),
  };
}

/**
 * Standard e-mails of the stack's own first (WARM_UP_EMAILS, two batch POSTs), so that
 * connections and data keys are made and DynamoDB Local's JVM has run intake and dispatch:
 * with five, the variant that ran first on a fresh JVM took its burst in 1.5–2.5 times slower
 * than the second (whichever it was) and lost its first seconds to it.
 */
const WARM_UP_EMAILS = 200;

async function warmUp(stack: StackHandle, resend: ResendSimulator, ddb: DynamoDBClient, tag: string) {
  const notices = benchNotices(`${tag}w`, WARM_UP_EMAILS, ['email'], 2);
  await postBurst(stack.apiUrl, notices);
  const ids = notices.map((x) => x.noticeId);
  for (let i = 0; i < 120; i++) {
    const rows = await readLedgerRows(ddb, stack.tableName, ids, 'email');
    if (ids.every((id) => acceptedAt(rows.get(id)) !== undefined)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (resend.counters.emailsCreated < notices.length) throw new Error('the warm-up e-mails were not sent');
  // Let the budget's clock fall idle before the burst.
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

/** Calls a second from the counter's samples (the last sample at or before each second's end). */
function callsPerSecondOf(samples: readonly { at: number; calls: number }[], start: number): number[] {
  const out: number[] = [];
  let previous = 0;
  const end = samples.at(-1)?.at ?? start;
  for (let k = 0; start + k * 1000 <= end; k++) {
    const bound = start + (k + 1) * 1000;
    const upTo = samples.filter((s) => s.at <= bound).at(-1)?.calls ?? previous;
    out.push(upTo - previous);
    previous = upTo;
  }
  return out;
}
