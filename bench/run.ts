/**
 * `npm run bench [-- --quick]`: queue age under provider throttling and cost per delivered
 * notice, for our dispatcher and a naive baseline, on the local stack.
 *
 *   quick: N = 600 SMS notices, provider capped at R = 20/s   (about 2 minutes on 2 cores)
 *   full:  N = 3000, R = 25/s                                  (about 6 minutes)
 *   --notices N --rate R        override either
 *   --pace-factor F             our senders' rate budget is F × R (default 1: the provider's own rate)
 *   --in-process                run the stack in this process instead of a child process
 *   --skip-cost / --skip-baseline / --skip-priority (also skips deadline risk and priorityEmailBatch)
 *   --only-priority             only the priority scenario (lanes against one lane); writes
 *                               bench/results/priority-latest.json and replaces `priority` in latest.json
 *   --only-deadline-risk        only the deadline-risk scenario: deadline-risk-latest.json and
 *                               `deadlineRisk` in latest.json
 *   --priority-concurrency C    batches in flight per queue of the priority and deadline-risk
 *                               stacks (LOCAL_SQS_CONCURRENCY; default 2): with a rate budget the
 *                               standard and bulk lanes stay capped from the rate (§11)
 *   --priority-burst P[,P]      the burst's priorities, in turn (default bulk; standard,bulk
 *                               saturates both lower lanes): a key and file of its own
 *   --only-priority-email       only the priority scenario through a batching e-mail provider
 *                               (bench/priority-email-run.ts): priority-email-latest.json and
 *                               `priorityEmailBatch` in latest.json
 *   --priority-email-notices N / --priority-email-rate R / --priority-email-batch B /
 *   --priority-email-wait-ms W / --priority-email-concurrency C
 *                               its bulk e-mails, provider calls a second, EMAIL_BATCH_MAX,
 *                               RATE_BUDGET_MAX_WAIT_MS and LOCAL_SQS_CONCURRENCY (defaults
 *                               below); other values write a file of their own only
 *   --priority-email-intake-in-senders  the bulk burst taken in by the senders' own process
 *                               (as `priority` does) instead of a second stack process
 *   --only-failover / --skip-failover   only, or without, the provider failover scenario
 *                               (bench/failover-run.ts): failover-latest.json and `failover` in
 *                               latest.json; --failover-notices N (quick 200, full 1000)
 *   --skip-email / --email-only  leave out, or run only, the email batch comparison below
 *   --email-notices N / --email-single-notices N / --email-rate R / --email-concurrency C
 *                               (defaults 3000 / 300 (quick: 150) / 5 / 5: the deployed e-mail
 *                               event source's maximum concurrency)
 *
 * Email batch sends (bench/email-batch-run.ts): the Resend simulator capped at R requests/s,
 * the same kind of burst sent with batches of 100 (N notices, ideal N/(100 R)) and as single
 * sends (a smaller N: ideal N/R would be 600 s at N = 3000), each on a fresh stack, compared as
 * drain / ideal, calls per accepted email, duplicates, lost and max queue age.
 *
 * Order: cost phases A and B (happy path, delivery reports) → throttle run against our stack →
 * cost phase C (forced retries; its 2-minute schedule must not fire inside another measurement)
 * → stop the stack → the same burst through the naive baseline against a fresh simulator with
 * the same cap. Results: bench/results/latest.json and <mode>-latest.json, one summary line
 * appended to bench/results/history.jsonl, <mode>-queue-age.svg, and a table on stdout, with the
 * agreement against the previous run of the same mode.
 * Everything listens on 127.0.0.1 and is stopped at the end, or on SIGINT/SIGTERM.
 */
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { OPERATOR_SETTINGS } from '../lambdas/contract/settings.ts';
import { type SmsSimulator, startSmsSimulator } from '../local/sms-simulator/server.ts';
import { type BaselineResult, runBaseline } from './baseline/naive-dispatcher.ts';
import {
  type CostInputs,
  type CostLine,
  kindCost,
  NOTICE_KINDS,
  type NoticeKind,
  perMillion,
} from './cost-model.ts';
import { type CostResult, type HappyPathCost, runCostPhases, runRetryPhase } from './cost-run.ts';
import { type DeadlineRiskFigures, runDeadlineRisk } from './deadline-risk-run.ts';
import { type EmailBatchResult, type EmailRunFigures, runEmailBatchBench } from './email-batch-run.ts';
import { type FailoverFigures, runFailover } from './failover-run.ts';
import type { ThrottleFigures } from './lib/figures.ts';
import { type BenchServices, REGION, startBenchServices } from './lib/services.ts';
import { type StackHandle, startStackChild, startStackInProcess } from './lib/stack-process.ts';
import { relativeDifference, round } from './lib/stats.ts';
import { linePlot } from './lib/svg.ts';
import { measureHappyPath } from './measure-happy-path.ts';
import {
  type EmailPriorityFigures,
  type EmailPriorityParameters,
  type EmailPriorityResult,
  runPriorityEmailBatch,
} from './priority-email-run.ts';
import {
  type BurstPriority,
  type PriorityFigures,
  type PriorityVariant,
  priorityStackEnv,
  runPriority,
  warmUp as warmUpStack,
} from './priority-run.ts';
import { type OurThrottleResult, runOurThrottle } from './throttle-run.ts';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const TWILIO_FROM = '+15005550006';
/** The stack's pollers: batches in flight per queue (LOCAL_SQS_CONCURRENCY's default). */
const POLLER_CONCURRENCY = 2;

interface Args {
  readonly mode: 'quick' | 'full';
  readonly notices: number;
  readonly rate: number;
  readonly paceFactor: number;
  readonly skipCost: boolean;
  readonly skipBaseline: boolean;
  readonly skipPriority: boolean;
  readonly onlyPriority: boolean;
  readonly onlyDeadlineRisk: boolean;
  readonly inProcess: boolean;
  readonly skipEmail: boolean;
  readonly emailOnly: boolean;
  readonly emailNotices: number;
  readonly emailSingleNotices: number;
  readonly emailRate: number;
  readonly emailConcurrency: number;
  readonly priorityConcurrency: number;
  readonly priorityBurst: readonly BurstPriority[];
  readonly onlyPriorityEmail: boolean;
  readonly priorityEmail: EmailPriorityParameters;
  readonly onlyFailover: boolean;
  readonly skipFailover: boolean;
  readonly failoverNotices: number;
}

function burstPriorities(argv: readonly string[]): readonly BurstPriority[] {
  const i = argv.indexOf('--priority-burst');
  if (i === -1) return ['bulk'];
  const list = String(argv[i + 1] ?? '').split(',');
  if (!list.every((p): p is BurstPriority => p === 'standard' || p === 'bulk'))
    throw new Error('--priority-burst takes standard and/or bulk, comma-separated');
  return list;
}

function parseArgs(argv: readonly string[]): Args {
  const quick = argv.includes('--quick');
  const value = (name: string) => {
    const i = argv.indexOf(name);
    if (i === -1) return undefined;
    const v = Number(argv[i + 1]);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} needs a positive number`);
    return v;
  };
  const known = new Set([
    '--quick',
    '--skip-cost',
    '--skip-baseline',
    '--skip-priority',
    '--only-priority',
    '--only-deadline-risk',
    '--in-process',
    '--notices',
    '--rate',
    '--pace-factor',
    '--in-process',
    '--skip-email',
    '--email-only',
    '--email-notices',
    '--email-single-notices',
    '--email-rate',
    '--email-concurrency',
    '--priority-concurrency',
    '--priority-burst',
    '--only-priority-email',
    '--priority-email-intake-in-senders',
    '--only-failover',
    '--skip-failover',
    '--failover-notices',
    ...PRIORITY_EMAIL_FLAGS,
  ]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!known.has(arg)) throw new Error(`unknown argument: ${arg}`);
    if (
      [
        '--notices',
        '--rate',
        '--pace-factor',
        '--email-notices',
        '--email-single-notices',
        '--email-rate',
        '--email-concurrency',
        '--priority-concurrency',
        '--priority-burst',
        '--failover-notices',
        ...PRIORITY_EMAIL_FLAGS,
      ].includes(arg)
    )
      i++;
  }
  return {
    mode: quick ? 'quick' : 'full',
    notices: Math.round(value('--notices') ?? (quick ? 600 : 3000)),
    rate: value('--rate') ?? (quick ? 20 : 25),
    paceFactor: value('--pace-factor') ?? 1,
    skipCost: argv.includes('--skip-cost'),
    skipBaseline: argv.includes('--skip-baseline'),
    skipPriority: argv.includes('--skip-priority'),
    onlyPriority: argv.includes('--only-priority'),
    onlyDeadlineRisk: argv.includes('--only-deadline-risk'),
    inProcess: argv.includes('--in-process'),
    skipEmail: argv.includes('--skip-email'),
    emailOnly: argv.includes('--email-only'),
    emailNotices: Math.round(value('--email-notices') ?? 3000),
    emailSingleNotices: Math.round(value('--email-single-notices') ?? (quick ? 150 : 300)),
    emailRate: value('--email-rate') ?? 5,
    emailConcurrency: Math.round(value('--email-concurrency') ?? 5),
    priorityConcurrency: Math.round(value('--priority-concurrency') ?? POLLER_CONCURRENCY),
    priorityBurst: burstPriorities(argv),
    onlyPriorityEmail: argv.includes('--only-priority-email'),
    priorityEmail: {
      bulkEmails: Math.round(
        value('--priority-email-notices') ?? PRIORITY_EMAIL[quick ? 'quick' : 'full'].bulkEmails,
      ),
      callsPerSecond: value('--priority-email-rate') ?? PRIORITY_EMAIL.quick.callsPerSecond,
      batchMax: Math.round(value('--priority-email-batch') ?? PRIORITY_EMAIL.quick.batchMax),
      maxInlineWaitMs: Math.round(value('--priority-email-wait-ms') ?? PRIORITY_EMAIL.quick.maxInlineWaitMs),
      pollerConcurrency: Math.round(
        value('--priority-email-concurrency') ?? PRIORITY_EMAIL.quick.pollerConcurrency,
      ),
      bulkIntake: argv.includes('--priority-email-intake-in-senders') ? 'senders' : 'own',
    },
    onlyFailover: argv.includes('--only-failover'),
    skipFailover: argv.includes('--skip-failover'),
    failoverNotices: Math.round(value('--failover-notices') ?? (quick ? 200 : 1000)),
  };
}

const PRIORITY_EMAIL_FLAGS = [
  '--priority-email-notices',
  '--priority-email-rate',
  '--priority-email-batch',
  '--priority-email-wait-ms',
  '--priority-email-concurrency',
];

/**
 * The e-mail priority scenario's parameters (docs/benchmarks.md, "Priority through a batching
 * provider"): R × B = 75 e-mails a second, well under what the local stack sends on 2 shared
 * cores (about 200 alone; 125 a second left it CPU-bound while the burst was taken in); R high
 * enough that the critical e-mails' calls (one a second, each alone) cost the bulk little
 * (R = 25: 1/25 of the calls); B = 3 a real batch (a third of the calls); an inline wait of
 * 500 ms, under the 0.6 s the bulk lane books ahead (5 invocations × 3 calls at 25/s), so that
 * the gate defers (at 250 ms it deferred two rows per accepted e-mail, over and over, and the
 * senders spent half as much CPU again: docs/benchmarks.md); 5 batches per queue, the deployed
 * e-mail event source's maximum concurrency. About 40 s of provider time (quick) or 80 s (full)
 * per variant.
 */
const PRIORITY_EMAIL = {
  quick: {
    bulkEmails: 3000,
    callsPerSecond: 25,
    batchMax: 3,
    maxInlineWaitMs: 500,
    pollerConcurrency: 5,
    bulkIntake: 'own',
  },
  full: {
    bulkEmails: 6000,
    callsPerSecond: 25,
    batchMax: 3,
    maxInlineWaitMs: 500,
    pollerConcurrency: 5,
    bulkIntake: 'own',
  },
} as const satisfies Record<'quick' | 'full', EmailPriorityParameters>;

// --- output: the stack's JSON logs are counted (CloudWatch Logs bytes) and dropped -------------
const writeOut = process.stdout.write.bind(process.stdout);
let stdoutBytes = 0;
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  stdoutBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
  const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
  callback?.();
  return true;
}) as typeof process.stdout.write;
const print = (line = '') => writeOut(`${line}\n`);
// Powertools warns on stderr for every invocation that recorded no metric (a batch of deferrals);
// that is the stack's business, not the bench's output.
const writeErr = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (text.includes('No application metrics to publish')) {
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  }
  return writeErr(chunk as string, ...(rest as []));
}) as typeof process.stderr.write;
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

export interface BenchResults {
  readonly mode: 'quick' | 'full';
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly machine: { readonly cpus: number; readonly node: string };
  readonly setup: Record<string, unknown>;
  readonly throttle: ThrottleFigures & { readonly detail: OurThrottleResult['detail'] };
  readonly baseline?: ThrottleFigures & { readonly detail: BaselineResult['detail'] };
  readonly cost?: {
    readonly dynamoWritesPerChannel: number;
    readonly dynamoReadsPerChannel: number;
    readonly writeCapacityUnitsPerChannel: number;
    readonly readCapacityUnitsPerChannel: number;
    readonly sqsRequestsPerChannel: number;
    readonly schedulerCallsPerRetry: number;
    /**
     * USD per million notices of each kind, provider fees excluded (bench/cost-model.ts), with
     * every line it sums and the lifecycle runs it was computed from beside the stack's counts.
     */
    readonly perMillion?: Record<NoticeKind, number>;
    readonly lines?: Record<NoticeKind, readonly CostLine[]>;
    readonly lifecycle?: CostInputs['lifecycle'];
    readonly detail: CostResult;
  };
  /** Issue 15: lanes and the shared rate budget against today's single lane, one run. */
  readonly priority?: Readonly<Record<PriorityVariant, PriorityFigures>>;
  readonly deadlineRisk?: DeadlineRiskFigures;
  /** Issue 20: the priority scenario through a batching e-mail provider under a shared budget. */
  readonly priorityEmailBatch?: EmailPriorityResult;
  /** Resend at 5 requests/s: batches of 100 against single sends (bench/email-batch-run.ts). */
  readonly emailBatch?: EmailBatchResult;
  /** Issue 24: SMS over two providers, the primary timing out and refusing the account. */
  readonly failover?: FailoverFigures;
  readonly series: {
    readonly throttle: { t: number; unresolved: number; oldestAgeSeconds: number }[];
    readonly baseline?: { t: number; unresolved: number; oldestAgeSeconds: number }[];
    readonly throttleSamples: OurThrottleResult['samples'];
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const tag = started.toString(36);
  log(`mode ${args.mode}: N = ${args.notices}, R = ${args.rate}/s, pace factor ${args.paceFactor}`);

  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()?.();
      } catch (error) {
        log(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(1);
    interrupted = true;
    log(`${signal}: stopping`);
    void cleanup().then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const services: BenchServices = await startBenchServices(log);
    cleanups.push(() => services.stop());
    const ddb = new DynamoDBClient({
      endpoint: services.dynamodb.endpoint,
      region: REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const sqs = new SQSClient({
      endpoint: services.sqsEndpoint,
      region: REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    cleanups.push(async () => {
      ddb.destroy();
      sqs.destroy();
    });
    const simulator: SmsSimulator = await startSmsSimulator({ fromNumbers: [TWILIO_FROM] });
    cleanups.push(() => simulator.close());
    const dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-bench-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));

    const env: Record<string, string> = {
      PORT: '0',
      LEDGER_DATA_DIR: dataDir,
      LEDGER_TABLE_NAME: `bench-${tag}`,
      AWS_ENDPOINT_URL_DYNAMODB: services.proxies.dynamodb.endpoint,
      AWS_ENDPOINT_URL_SQS: services.proxies.sqs.endpoint,
      AWS_ENDPOINT_URL_SESV2: services.ses.endpoint,
      AWS_ENDPOINT_URL_SCHEDULER: services.proxies.scheduler.endpoint,
      TWILIO_BASE_URL: simulator.baseUrl,
      TWILIO_ACCOUNT_SID: simulator.accountSid,
      TWILIO_AUTH_TOKEN: simulator.authToken,
      TWILIO_FROM,
      SMS_SEND_RATE_PER_SECOND: String(args.rate * args.paceFactor),
      LOCAL_SQS_CONCURRENCY: String(POLLER_CONCURRENCY),
      // As deployed (docs/table-design.md "Watched rows"): the watches of the cost phases fire
      // after them, as in AWS after a delivered row's life; their consumer side is priced.
      INDEX_WATCH_DELAY_MS: String(OPERATOR_SETTINGS.INDEX_WATCH_DELAY_MS.deployDefault),
    };
    const startVariantStack = (variant: PriorityVariant) =>
      startStackChild(
        {
          ...env,
          LEDGER_TABLE_NAME: `bench-${tag}-${variant}`,
          LOCAL_SQS_CONCURRENCY: String(args.priorityConcurrency),
          ...priorityStackEnv(variant, args.rate),
        },
        log,
      );
    const runPriorityScenario = async (): Promise<Record<PriorityVariant, PriorityFigures>> => {
      const out: Partial<Record<PriorityVariant, PriorityFigures>> = {};
      for (const variant of ['lanes', 'single'] as const) {
        const variantStack = await startVariantStack(variant);
        try {
          out[variant] = await runPriority({
            variant,
            stack: variantStack,
            services,
            simulator,
            ddb,
            notices: args.notices,
            rate: args.rate,
            tag: `${tag}${variant[0]}`,
            log,
            burstPriorities: args.priorityBurst,
          });
        } finally {
          await variantStack.stop();
        }
      }
      return out as Record<PriorityVariant, PriorityFigures>;
    };
    const runDeadlineRiskScenario = async (): Promise<DeadlineRiskFigures> => {
      const riskStack = await startVariantStack('lanes');
      try {
        await warmUpStack(riskStack, simulator, ddb, `${tag}r`);
        return await runDeadlineRisk({
          stack: riskStack,
          simulator,
          ddb,
          backlog: args.notices,
          notices: args.mode === 'full' ? 500 : Math.max(20, Math.round(args.notices / 6)),
          controlCritical: args.mode === 'full' ? 20 : 10,
          deadlineSeconds: 10,
          rate: args.rate,
          reconcileIntervalSeconds: 60,
          tag: `${tag}r`,
          log,
        });
      } finally {
        await riskStack.stop();
      }
    };
    // One scenario alone: its own results file, and its key in latest.json replaced (with the
    // time and mode of this run beside it; the other keys stay those of the last full run).
    const writeAlone = async (file: string, figures: Record<string, unknown>) => {
      await mkdir(RESULTS_DIR, { recursive: true });
      const record = { startedAt: new Date(started).toISOString(), mode: args.mode, ...figures };
      await writeFile(join(RESULTS_DIR, file), `${JSON.stringify(record, null, 2)}\n`);
      const latest = await readFile(join(RESULTS_DIR, 'latest.json'), 'utf8')
        .then((text) => JSON.parse(text) as Record<string, unknown>)
        .catch((): Record<string, unknown> => ({}));
      for (const [key, value] of Object.entries(figures)) {
        latest[key] = { startedAt: record.startedAt, mode: args.mode, ...(value as object) };
      }
      await writeFile(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(latest, null, 2)}\n`);
    };
    const runFailoverScenario = () =>
      runFailover({
        // Straight to DynamoDB Local and SQS: this run counts no requests.
        baseEnv: {
          ...env,
          AWS_ENDPOINT_URL_DYNAMODB: services.dynamodb.endpoint,
          AWS_ENDPOINT_URL_SQS: services.sqsEndpoint,
        },
        ddb,
        notices: args.failoverNotices,
        tag,
        log,
      });
    if (args.onlyFailover) {
      const failover = await runFailoverScenario();
      await writeAlone('failover-latest.json', { failover });
      printFailover(failover);
      return;
    }
    if (args.onlyDeadlineRisk) {
      const deadlineRisk = await runDeadlineRiskScenario();
      await writeAlone('deadline-risk-latest.json', { deadlineRisk });
      printDeadlineRisk(deadlineRisk);
      return;
    }
    const runPriorityEmail = () =>
      runPriorityEmailBatch({
        ...args.priorityEmail,
        // Straight to DynamoDB Local and SQS, as the e-mail batch runs below.
        baseEnv: {
          ...env,
          AWS_ENDPOINT_URL_DYNAMODB: services.dynamodb.endpoint,
          AWS_ENDPOINT_URL_SQS: services.sqsEndpoint,
        },
        ddb,
        dynamodbPid: services.dynamodb.pid,
        tag,
        log,
      });
    if (args.onlyPriorityEmail) {
      const priorityEmailBatch = await runPriorityEmail();
      const defaults = PRIORITY_EMAIL[args.mode];
      const p = args.priorityEmail;
      const isDefault = (Object.keys(defaults) as (keyof EmailPriorityParameters)[]).every(
        (k) => (defaults as EmailPriorityParameters)[k] === p[k],
      );
      // Other parameters than the mode's: a file of their own, `priorityEmailBatch` stays.
      if (isDefault) await writeAlone('priority-email-latest.json', { priorityEmailBatch });
      else {
        await mkdir(RESULTS_DIR, { recursive: true });
        const file = `priority-email-n${p.bulkEmails}-r${p.callsPerSecond}-b${p.batchMax}-w${p.maxInlineWaitMs}-c${p.pollerConcurrency}${p.bulkIntake === 'own' ? '' : '-intake-in-senders'}-latest.json`;
        const record = { startedAt: new Date(started).toISOString(), mode: args.mode, priorityEmailBatch };
        await writeFile(join(RESULTS_DIR, file), `${JSON.stringify(record, null, 2)}\n`);
      }
      printPriorityEmail(priorityEmailBatch);
      print(`(${round((Date.now() - started) / 1000, 1)} s in all)`);
      return;
    }
    if (args.onlyPriority) {
      const priority = await runPriorityScenario();
      // At another concurrency than the pollers' default: a key (and file) of its own, so the
      // issue's `priority` figures stay those of the default.
      const c = args.priorityConcurrency;
      const burst = args.priorityBurst.join('-');
      const suffix = `${c === POLLER_CONCURRENCY ? '' : `-c${c}`}${burst === 'bulk' ? '' : `-${burst}`}`;
      if (suffix === '') await writeAlone('priority-latest.json', { priority });
      else
        await writeAlone(`priority${suffix}-latest.json`, {
          [`priority${suffix.replace(/-(\w)/g, (_, ch: string) => ch.toUpperCase())}`]: {
            concurrency: c,
            burstPriorities: args.priorityBurst,
            ...priority,
          },
        });
      printPriority(priority);
      return;
    }

    const runEmail = () =>
      runEmailBatchBench({
        // Straight to DynamoDB Local and SQS: these runs count no requests, and the counting
        // proxies (in this process, beside the Resend simulator) would add their latency.
        baseEnv: {
          ...env,
          AWS_ENDPOINT_URL_DYNAMODB: services.dynamodb.endpoint,
          AWS_ENDPOINT_URL_SQS: services.sqsEndpoint,
        },
        ddb,
        rate: args.emailRate,
        batchedNotices: args.emailNotices,
        singleNotices: args.emailSingleNotices,
        burst: true,
        concurrency: args.emailConcurrency,
        tag,
        log,
      });
    if (args.emailOnly) {
      const email = await runEmail();
      await mkdir(RESULTS_DIR, { recursive: true });
      const record = {
        startedAt: new Date(started).toISOString(),
        durationSeconds: round((Date.now() - started) / 1000, 1),
        machine: { cpus: cpus().length, node: process.version },
        emailBatch: email,
      };
      await writeFile(join(RESULTS_DIR, 'email-latest.json'), `${JSON.stringify(record, null, 2)}\n`);
      await appendFile(
        join(RESULTS_DIR, 'history.jsonl'),
        `${JSON.stringify({ startedAt: record.startedAt, mode: 'email-only', email: emailSummary(email) })}\n`,
      );
      print();
      print(
        `notice-ledger bench (email only), ${record.startedAt}, ${record.durationSeconds} s, ${record.machine.cpus} CPUs`,
      );
      printEmailTable(email);
      return;
    }
    const stack: StackHandle = args.inProcess
      ? await startStackInProcess(env, () => stdoutBytes)
      : await startStackChild(env, log);
    let stackStopped = false;
    const stopStack = async () => {
      if (stackStopped) return;
      stackStopped = true;
      await stack.stop();
    };
    cleanups.push(stopStack);
    log(`local stack up at ${stack.apiUrl}`);

    let happy: HappyPathCost | undefined;
    if (!args.skipCost) {
      happy = await runCostPhases({
        stack,
        services,
        simulator,
        ddb,
        notices: 100,
        tag,
        log,
      });
      // Let the SMS pacing bucket refill and the last callbacks land before the burst.
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }

    const ours = await runOurThrottle({
      stack,
      services,
      simulator,
      ddb,
      sqs,
      notices: args.notices,
      rate: args.rate,
      tag: `${tag}t`,
      log,
    });
    let cost: CostResult | undefined;
    let lifecycle: CostInputs['lifecycle'] | undefined;
    if (happy) {
      const retries = await runRetryPhase({ stack, services, simulator, ddb, tag, log });
      cost = { ...happy, retries };
      // Each kind's whole life through the use cases (final report included), with the sizes of
      // its rows, archive lines and key records (bench/measure-happy-path.ts).
      log('cost: each notice kind through its final report (DynamoDB Local, use cases)');
      const life = (channels: ('email' | 'sms')[]) =>
        measureHappyPath(services.dynamodb.endpoint, 100, channels, true);
      lifecycle = {
        sms: await life(['sms']),
        email: await life(['email']),
        emailAndSms: await life(['email', 'sms']),
      };
    }
    await stopStack();

    let baseline: BaselineResult | undefined;
    if (!args.skipBaseline) {
      const fresh = await startSmsSimulator({ fromNumbers: [TWILIO_FROM] });
      cleanups.push(() => fresh.close());
      baseline = await runBaseline({
        sqs,
        simulator: fresh,
        from: TWILIO_FROM,
        notices: args.notices,
        rate: args.rate,
        tag,
        concurrency: POLLER_CONCURRENCY,
        log,
      });
    }

    const priority = args.skipPriority ? undefined : await runPriorityScenario();
    const deadlineRisk = args.skipPriority ? undefined : await runDeadlineRiskScenario();
    const priorityEmailBatch = args.skipPriority ? undefined : await runPriorityEmail();
    const email = args.skipEmail ? undefined : await runEmail();
    const failover = args.skipFailover ? undefined : await runFailoverScenario();

    const results: BenchResults = {
      mode: args.mode,
      startedAt: new Date(started).toISOString(),
      durationSeconds: round((Date.now() - started) / 1000, 1),
      machine: { cpus: cpus().length, node: process.version },
      setup: {
        notices: args.notices,
        providerRatePerSecond: args.rate,
        ourPaceRatePerSecond: args.rate * args.paceFactor,
        providerBucket: `${args.rate} tokens, refilled at ${args.rate}/s; 429 Retry-After = whole seconds to the next token (≥ 1)`,
        channel: 'sms',
        pollers: `${POLLER_CONCURRENCY} batches × 10 records in flight (ours and the baseline)`,
        stack: args.inProcess ? 'in the bench process' : 'child process (node --import tsx local/start.ts)',
        statusCallbacks: 'off during the throttle runs',
        burst:
          'ours: POST /v1/notices/batch, 100 per request, 4 requests in flight; baseline: SendMessageBatch, 10 per request, 4 in flight',
        queueAge: 'oldest notice not yet accepted, from per-notice timestamps on a 250 ms grid',
      },
      throttle: { ...ours.figures, detail: ours.detail },
      ...(priority ? { priority } : {}),
      ...(deadlineRisk ? { deadlineRisk } : {}),
      ...(priorityEmailBatch ? { priorityEmailBatch } : {}),
      ...(email ? { emailBatch: email } : {}),
      ...(failover ? { failover } : {}),
      ...(baseline ? { baseline: { ...baseline.figures, detail: baseline.detail } } : {}),
      ...(cost
        ? {
            cost: {
              dynamoWritesPerChannel: cost.happyPath.all.dynamoWritesPerChannel,
              dynamoReadsPerChannel: cost.happyPath.all.dynamoReadsPerChannel,
              writeCapacityUnitsPerChannel: cost.happyPath.all.writeCapacityUnitsPerChannel,
              readCapacityUnitsPerChannel: cost.happyPath.all.readCapacityUnitsPerChannel,
              sqsRequestsPerChannel: cost.happyPath.all.sqsRequestsPerChannel,
              schedulerCallsPerRetry: cost.retries.schedulerCallsPerLongRetry,
              ...(lifecycle
                ? {
                    perMillion: perMillion({ stack: cost, lifecycle }),
                    lines: Object.fromEntries(
                      NOTICE_KINDS.map((kind) => [kind, kindCost({ stack: cost, lifecycle }, kind).lines]),
                    ) as Record<NoticeKind, readonly CostLine[]>,
                    lifecycle,
                  }
                : {}),
              detail: cost,
            },
          }
        : {}),
      series: {
        throttle: thin(ours.series),
        ...(baseline ? { baseline: thin(baseline.series) } : {}),
        throttleSamples: ours.samples,
      },
    };

    await mkdir(RESULTS_DIR, { recursive: true });
    const previous = await readFile(join(RESULTS_DIR, `${args.mode}-latest.json`), 'utf8')
      .then((text) => JSON.parse(text) as BenchResults)
      .catch(() => undefined);
    const json = `${JSON.stringify(results, null, 2)}\n`;
    await writeFile(join(RESULTS_DIR, 'latest.json'), json);
    await writeFile(join(RESULTS_DIR, `${args.mode}-latest.json`), json);
    await appendFile(join(RESULTS_DIR, 'history.jsonl'), `${JSON.stringify(summaryLine(results))}\n`);
    await writeFile(join(RESULTS_DIR, `${args.mode}-queue-age.svg`), queueAgePlot(results));

    printTable(results);
    if (priority) printPriority(priority);
    if (deadlineRisk) printDeadlineRisk(deadlineRisk);
    if (priorityEmailBatch) printPriorityEmail(priorityEmailBatch);
    if (failover) printFailover(failover);
    if (previous && previous.setup.notices === results.setup.notices) printAgreement(previous, results);
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function printFailover(f: FailoverFigures): void {
  print();
  print(`Provider failover (SMS: twilio → eum), ${f.notices} notices; ${f.faults}`);
  print(
    `  failovers ${f.failovers}, duplicates ${f.duplicates}, lost ${f.lost}, unresolved ${f.unresolved}, ` +
      `calls per accepted ${f.callsPerAccepted}`,
  );
  print(
    `  accepted by twilio ${f.acceptedBy.twilio}, by eum ${f.acceptedBy.eum}; reconciled with twilio: ` +
      `${f.reconciled.accepted} accepted, ${f.reconciled.notSent} not sent; drained in ${f.drainSeconds} s`,
  );
}

/** Every 4th point (1 s) is enough for the JSON and the plot. */
function thin<T>(points: readonly T[]): T[] {
  return points.filter((_, i) => i % 4 === 0);
}

function summaryLine(r: BenchResults) {
  const pick = (f: ThrottleFigures | undefined) =>
    f && {
      drainOverIdeal: f.drainOverIdeal,
      providerCallsPerAccepted: f.providerCallsPerAccepted,
      duplicates: f.duplicates,
      lost: f.lost,
      p99: f.p99TriggerToAcceptedSeconds,
      maxQueueAgeSeconds: f.maxQueueAgeSeconds,
    };
  return {
    startedAt: r.startedAt,
    mode: r.mode,
    notices: r.setup.notices,
    rate: r.setup.providerRatePerSecond,
    pace: r.setup.ourPaceRatePerSecond,
    ours: pick(r.throttle),
    baseline: pick(r.baseline),
    writesPerChannel: r.cost?.dynamoWritesPerChannel,
    wcuPerChannel: r.cost?.writeCapacityUnitsPerChannel,
    ...(r.emailBatch ? { email: emailSummary(r.emailBatch) } : {}),
  };
}

function queueAgePlot(r: BenchResults): string {
  const series = [
    {
      name: 'our dispatcher',
      color: '#1f77b4',
      points: r.series.throttle.map((p) => [p.t, p.oldestAgeSeconds] as const),
    },
    ...(r.series.baseline
      ? [
          {
            name: 'naive baseline',
            color: '#d62728',
            points: r.series.baseline.map((p) => [p.t, p.oldestAgeSeconds] as const),
          },
        ]
      : []),
  ];
  return linePlot({
    title: `Oldest unresolved notice, local stack (${r.setup.notices} SMS, provider ${r.setup.providerRatePerSecond}/s)`,
    xLabel: 'seconds since the burst',
    yLabel: 'queue age (s)',
    series,
  });
}

const TARGETS: Record<string, (ours: ThrottleFigures) => boolean> = {
  'drain ≤ 1.15 × N/R': (f) => f.drainOverIdeal <= 1.15,
  'provider calls per accepted ≤ 1.10': (f) => f.providerCallsPerAccepted <= 1.1,
  'no duplicates, none lost': (f) => f.duplicates === 0 && f.lost === 0,
};

function printTable(r: BenchResults): void {
  const rows: [string, (f: ThrottleFigures) => string][] = [
    ['notices', (f) => String(f.notices)],
    ['provider rate (/s)', (f) => String(f.providerRatePerSecond)],
    ['drain (s)', (f) => f.drainSeconds.toFixed(1)],
    ['ideal N/R (s)', (f) => f.idealSeconds.toFixed(1)],
    ['drain / ideal', (f) => f.drainOverIdeal.toFixed(3)],
    ['provider calls / accepted', (f) => f.providerCallsPerAccepted.toFixed(3)],
    ['429 answers', (f) => String(f.providerRateLimited)],
    ['duplicates', (f) => String(f.duplicates)],
    ['lost', (f) => String(f.lost)],
    ['p50 trigger→accepted (s)', (f) => f.p50TriggerToAcceptedSeconds.toFixed(2)],
    ['p99 trigger→accepted (s)', (f) => f.p99TriggerToAcceptedSeconds.toFixed(2)],
    ['max queue age (s)', (f) => f.maxQueueAgeSeconds.toFixed(2)],
  ];
  print();
  print(`notice-ledger bench (${r.mode}), ${r.startedAt}, ${r.durationSeconds} s, ${r.machine.cpus} CPUs`);
  print();
  print(`${'throttle run'.padEnd(28)}${'ours'.padStart(12)}${r.baseline ? 'baseline'.padStart(12) : ''}`);
  for (const [label, fmt] of rows) {
    print(
      `${label.padEnd(28)}${fmt(r.throttle).padStart(12)}${r.baseline ? fmt(r.baseline).padStart(12) : ''}`,
    );
  }
  if (r.cost) {
    const c = r.cost;
    print();
    const one = c.detail.happyPath.singleSms;
    const row = (name: string, both: number, single: number | undefined) =>
      print(`${name.padEnd(28)}${String(both).padStart(12)}${String(single ?? '–').padStart(12)}`);
    print(
      `${'happy-path cost per channel'.padEnd(28)}${'email + sms'.padStart(12)}${'sms only'.padStart(12)}`,
    );
    row('DynamoDB writes', c.dynamoWritesPerChannel, one?.dynamoWritesPerChannel);
    row('DynamoDB reads', c.dynamoReadsPerChannel, one?.dynamoReadsPerChannel);
    row('write capacity units', c.writeCapacityUnitsPerChannel, one?.writeCapacityUnitsPerChannel);
    row('read capacity units', c.readCapacityUnitsPerChannel, one?.readCapacityUnitsPerChannel);
    row('SQS requests', c.sqsRequestsPerChannel, one?.sqsRequestsPerChannel);
    print(`${'Scheduler calls / retry≥60s'.padEnd(28)}${String(c.schedulerCallsPerRetry).padStart(12)}`);
    print(
      `${'SQS sends / retry<60s'.padEnd(28)}${String(c.detail.retries.sqsSendsPerShortRetry).padStart(12)}`,
    );
  }
  if (r.emailBatch) printEmailTable(r.emailBatch);
  print();
  for (const [name, check] of Object.entries(TARGETS))
    print(`${check(r.throttle) ? 'met ' : 'MISS'}  ${name}`);
  if (r.cost) {
    print(`${r.cost.dynamoWritesPerChannel <= 3 ? 'met ' : 'MISS'}  DynamoDB writes per channel ≤ 3`);
  }
  if (r.baseline) {
    const worse =
      r.baseline.maxQueueAgeSeconds > r.throttle.maxQueueAgeSeconds ||
      r.baseline.providerCallsPerAccepted > r.throttle.providerCallsPerAccepted;
    print(`${worse ? 'met ' : 'MISS'}  baseline worse on queue age or wasted calls`);
  }
}

const PRIORITY_TARGETS: Record<string, (f: PriorityFigures) => boolean> = {
  'critical p99 ≤ 2 s': (f) => f.criticalP99Seconds <= 2,
  'bulk drain ≤ 1.05 × (N + critical)/R': (f) => f.bulkDrainOverIdeal <= 1.05,
  'no duplicates, none lost': (f) => f.duplicates === 0 && f.lost === 0,
};

function printPriority(p: Readonly<Record<PriorityVariant, PriorityFigures>>): void {
  const rows: [string, (f: PriorityFigures) => string][] = [
    ['bulk / critical notices', (f) => `${f.bulkNotices} / ${f.criticalNotices}`],
    ['critical p50 (s)', (f) => f.criticalP50Seconds.toFixed(2)],
    ['critical p99 (s)', (f) => f.criticalP99Seconds.toFixed(2)],
    ['critical max (s)', (f) => f.criticalMaxSeconds.toFixed(2)],
    ['  p99 of POST → 202 (s)', (f) => f.criticalIntakeP99Seconds.toFixed(2)],
    ['  p99 of 202 → accepted (s)', (f) => f.criticalDispatchP99Seconds.toFixed(2)],
    ['bulk p99 (s)', (f) => f.bulkP99Seconds.toFixed(2)],
    ['drain (s)', (f) => f.bulkDrainSeconds.toFixed(1)],
    ['ideal (N + critical)/R (s)', (f) => f.idealSeconds.toFixed(1)],
    ['drain / ideal', (f) => f.bulkDrainOverIdeal.toFixed(3)],
    ['provider calls / accepted', (f) => f.providerCallsPerAccepted.toFixed(3)],
    ['budget writes / accepted', (f) => f.budgetWritesPerAccepted.toFixed(3)],
    ['DynamoDB writes / accepted', (f) => f.dynamoWritesPerAccepted.toFixed(3)],
    ['429 answers', (f) => String(f.provider429)],
    ['duplicates', (f) => String(f.duplicates)],
    ['lost', (f) => String(f.lost)],
  ];
  print();
  print(`${'priority'.padEnd(28)}${'lanes'.padStart(12)}${'one lane'.padStart(12)}`);
  for (const [label, fmt] of rows)
    print(`${label.padEnd(28)}${fmt(p.lanes).padStart(12)}${fmt(p.single).padStart(12)}`);
  for (const [name, check] of Object.entries(PRIORITY_TARGETS))
    print(`${check(p.lanes) ? 'met ' : 'MISS'}  ${name}`);
}

const PRIORITY_EMAIL_TARGETS: Record<string, (f: EmailPriorityFigures) => boolean> = {
  'critical p99 ≤ 2 s': (f) => f.criticalP99Seconds <= 2,
  'drain ≤ 1.05 × e-mails/(R × B)': (f) => f.bulkDrainOverIdeal <= 1.05,
  'drain ≤ 1.05 × calls needed/R': (f) => f.bulkDrainOverIdealCalls <= 1.05,
  'no duplicates, none lost': (f) => f.duplicates === 0 && f.lost === 0,
};

function printPriorityEmail(p: EmailPriorityResult): void {
  const deferred = (f: EmailPriorityFigures) =>
    `${f.deferredRows.critical}/${f.deferredRows.standard}/${f.deferredRows.bulk}`;
  const rows: [string, (f: EmailPriorityFigures) => string][] = [
    ['bulk / critical e-mails', (f) => `${f.bulkEmails} / ${f.criticalEmails}`],
    ['critical p50 (s)', (f) => f.criticalP50Seconds.toFixed(2)],
    ['critical p99 (s)', (f) => f.criticalP99Seconds.toFixed(2)],
    ['critical max (s)', (f) => f.criticalMaxSeconds.toFixed(2)],
    ['  p99 of POST → 202 (s)', (f) => f.criticalIntakeP99Seconds.toFixed(2)],
    ['  p99 of 202 → accepted (s)', (f) => f.criticalDispatchP99Seconds.toFixed(2)],
    ['bulk p99 (s)', (f) => f.bulkP99Seconds.toFixed(2)],
    ['intake of the burst (s)', (f) => f.intakeSeconds.toFixed(1)],
    ['first acceptance (s)', (f) => f.firstAcceptedSeconds.toFixed(2)],
    ['drain (s)', (f) => f.bulkDrainSeconds.toFixed(1)],
    ['ideal e-mails/(R × B) (s)', (f) => f.idealSeconds.toFixed(1)],
    ['drain / ideal', (f) => f.bulkDrainOverIdeal.toFixed(3)],
    ['ideal calls/R (s)', (f) => f.idealCallsSeconds.toFixed(1)],
    ['drain / ideal calls', (f) => f.bulkDrainOverIdealCalls.toFixed(3)],
    ['provider calls (batch)', (f) => `${f.providerCalls} (${f.batchCalls})`],
    ['e-mails per call (batch)', (f) => `${f.emailsPerCall.toFixed(2)} (${f.emailsPerBatchCall.toFixed(2)})`],
    ['provider calls / accepted', (f) => f.providerCallsPerAccepted.toFixed(4)],
    ['deferred rows (crit/std/bulk)', deferred],
    ['deferred rows / accepted', (f) => f.deferredRowsPerAccepted.toFixed(3)],
    ['429 answers', (f) => String(f.provider429)],
    ['duplicates', (f) => String(f.duplicates)],
    ['lost', (f) => String(f.lost)],
    [
      'CPU s: senders / intake',
      (f) => (f.cpu ? `${f.cpu.processes.senders} / ${f.cpu.processes.intake ?? '–'}` : '–'),
    ],
    [
      '  DynamoDB Local / bench',
      (f) => (f.cpu ? `${f.cpu.processes.dynamodb} / ${f.cpu.processes.bench}` : '–'),
    ],
    [
      '  others / idle (of cap.)',
      (f) => (f.cpu ? `${f.cpu.others} / ${f.cpu.idle} (${f.cpu.capacity})` : '–'),
    ],
    [
      '  idle during intake',
      (f) => (f.cpuDuringIntake ? `${f.cpuDuringIntake.idle} (${f.cpuDuringIntake.capacity})` : '–'),
    ],
  ];
  print();
  print(
    `priority e-mail: R = ${p.callsPerSecond} calls/s, batches ≤ ${p.batchMax}, inline wait ${p.maxInlineWaitMs} ms, ${p.pollerConcurrency} batches per queue, bulk taken in by ${p.bulkIntake === 'own' ? 'a process of its own' : "the senders' process"}`,
  );
  print(`${''.padEnd(28)}${'lanes'.padStart(14)}${'one lane'.padStart(14)}`);
  for (const [label, fmt] of rows)
    print(`${label.padEnd(28)}${fmt(p.lanes).padStart(14)}${fmt(p.single).padStart(14)}`);
  for (const [name, check] of Object.entries(PRIORITY_EMAIL_TARGETS))
    print(`${check(p.lanes) ? 'met ' : 'MISS'}  ${name}`);
}

function printDeadlineRisk(d: DeadlineRiskFigures): void {
  print();
  print(
    `deadline risk: ${d.notices} notices, deadline ${d.deadlineSeconds} s, behind ${d.backlog} at ${d.providerRatePerSecond}/s (+ ${d.controlCritical} critical controls)`,
  );
  print(`  missed / made it           ${d.missed} / ${d.madeIt}`);
  print(`  warned (published)         ${d.warned} (${d.warnedPublished})`);
  print(`  warning delay p50 / max    ${d.p50WarningDelaySeconds} s / ${d.maxWarningDelaySeconds} s`);
  print(`  controls made it / warned  ${d.controlMadeIt} / ${d.controlWarned}`);
  const within =
    d.missedUnwarned === 0 && (d.warned === 0 || d.maxWarningDelaySeconds <= d.reconcileIntervalSeconds);
  print(
    `${within ? 'met ' : 'MISS'}  every channel that missed was warned within one reconciler interval of intake`,
  );
  print(`${d.warnedButMadeIt === 0 ? 'met ' : 'MISS'}  none warned that made it`);
}

function emailSummary(e: EmailBatchResult) {
  const pick = (f: EmailRunFigures) => ({
    notices: f.notices,
    drainSeconds: f.drainSeconds,
    drainOverIdeal: f.drainOverIdeal,
    providerCallsPerAccepted: f.providerCallsPerAccepted,
    duplicates: f.duplicates,
    lost: f.lost,
    maxQueueAgeSeconds: f.maxQueueAgeSeconds,
  });
  return {
    rate: e.providerRatePerSecond,
    single: pick(e.single),
    batched: pick(e.batched),
    ...(e.batchedBurst ? { batchedBurst: pick(e.batchedBurst) } : {}),
  };
}

/** The issue-12 target: batched drain ≤ 1.2 × N/(R × 100). */
const EMAIL_BATCH_TARGET = 1.2;

function printEmailTable(e: EmailBatchResult): void {
  const columns: [string, EmailRunFigures][] = [
    ['single', e.single],
    ['batch 100', e.batched],
    ...(e.batchedBurst ? ([['batch burst', e.batchedBurst]] as [string, EmailRunFigures][]) : []),
  ];
  const rows: [string, (f: EmailRunFigures) => string][] = [
    ['clock from', (f) => (f.clock === 'queued' ? '1st call' : '1st POST')],
    ['notices (email)', (f) => String(f.notices)],
    ['emails per call asked', (f) => String(f.batchMax)],
    ['drain (s)', (f) => f.drainSeconds.toFixed(1)],
    ['ideal N/(R × batch) (s)', (f) => f.idealSeconds.toFixed(1)],
    ['drain / ideal', (f) => f.drainOverIdeal.toFixed(3)],
    ['intake (s)', (f) => f.intakeSeconds.toFixed(1)],
    ['provider calls', (f) => String(f.providerCalls)],
    ['  of them batch calls', (f) => String(f.batchCalls)],
    ['  of them 429 answers', (f) => String(f.providerRateLimited)],
    ['emails per answered call', (f) => f.emailsPerCall.toFixed(1)],
    ['provider calls / accepted', (f) => f.providerCallsPerAccepted.toFixed(4)],
    ['duplicates', (f) => String(f.duplicates)],
    ['lost', (f) => String(f.lost)],
    ['p99 trigger→accepted (s)', (f) => f.p99TriggerToAcceptedSeconds.toFixed(2)],
    ['max queue age (s)', (f) => f.maxQueueAgeSeconds.toFixed(2)],
  ];
  print();
  print(
    `${`email, Resend at ${e.providerRatePerSecond} req/s`.padEnd(28)}${columns.map(([name]) => name.padStart(13)).join('')}`,
  );
  for (const [label, fmt] of rows)
    print(`${label.padEnd(28)}${columns.map(([, f]) => fmt(f).padStart(13)).join('')}`);
  const b = e.batched;
  print();
  print(
    `${b.drainOverIdeal <= EMAIL_BATCH_TARGET ? 'met ' : 'MISS'}  batched drain (queued) ≤ ${EMAIL_BATCH_TARGET} × N/(R × 100) (${b.drainSeconds.toFixed(1)} s vs ${(EMAIL_BATCH_TARGET * b.idealSeconds).toFixed(1)} s)`,
  );
  const clean = columns.every(([, f]) => f.duplicates === 0 && f.lost === 0);
  print(`${clean ? 'met ' : 'MISS'}  email: no duplicates, none lost (every run)`);
}

function printAgreement(previous: BenchResults, current: BenchResults): void {
  const ratios: [string, (r: BenchResults) => number | undefined][] = [
    ['ours drain/ideal', (r) => r.throttle.drainOverIdeal],
    ['ours calls/accepted', (r) => r.throttle.providerCallsPerAccepted],
    ['baseline drain/ideal', (r) => r.baseline?.drainOverIdeal],
    ['baseline calls/accepted', (r) => r.baseline?.providerCallsPerAccepted],
    ['writes/channel', (r) => r.cost?.dynamoWritesPerChannel],
    ['WCU/channel', (r) => r.cost?.writeCapacityUnitsPerChannel],
  ];
  print();
  print(`repeatability vs the previous ${current.mode} run (${previous.startedAt}):`);
  for (const [name, get] of ratios) {
    const a = get(previous);
    const b = get(current);
    if (a === undefined || b === undefined) continue;
    const diff = relativeDifference(a, b);
    print(
      `  ${name.padEnd(26)}${String(a).padStart(8)} → ${String(b).padEnd(8)} ${(diff * 100).toFixed(1)} %${diff <= 0.1 ? '' : '  (> 10 %)'}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
