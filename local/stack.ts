/**
 * The local stack (docs/architecture.md §7): the unchanged Lambda handlers behind a local API
 * Gateway, local SQS event sources and a reconciler timer, against DynamoDB Local, local-aws-sqs,
 * the selected providers' simulators and an EventBridge Scheduler stand-in.
 *
 * It is an ordered list of services (local/service.ts): each starts unless the environment
 * already provides it, contributes the variables later services and the functions read, and
 * stops in reverse order. The functions read their configuration from `process.env` once per
 * process (lambdas/wiring/), so this module's job is to put the right values there before the
 * first handler runs; that is also why one process can host one stack.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { ProviderChannel } from '../lambdas/contract/providers.ts';
import { LANE_SETTINGS, NO_PROVIDER } from '../lambdas/contract/settings.ts';
import { CHANNELS, type Channel } from '../lambdas/domain/channel.ts';
import { deriveNoticeId } from '../lambdas/domain/identity.ts';
import { readConfig } from '../lambdas/edge/config.ts';
import { key32 } from '../lambdas/wiring/core.ts';
import { answeringProviders, selectedFallback, selectedProvider } from '../lambdas/wiring/providers.ts';
import { LOCAL_AUDITOR_ROLE, LOCAL_OPERATOR_ROLE } from './callers.ts';
import { readCrashPoint } from './crash-points.ts';
import { type HttpApiHandler, type HttpGateway, startHttpGateway } from './http-gateway.ts';
import { enforceIam, type RolePolicies, readRolePolicies, stopEnforcingIam } from './iam/enforce.ts';
import { loadLocalSecrets } from './local-secrets.ts';
import type { LocalProvider } from './providers/local-provider.ts';
import { localProvider } from './providers/registry.ts';
import { externalService, type LocalService, type RunningService, type StackContext } from './service.ts';
import { archiveBucketService, archiverService, s3Service, ttlService } from './services/archive.ts';
import { dynamodbService, jvmPidOf } from './services/dynamodb.ts';
import { ledgerService } from './services/ledger.ts';
import { outcomeBusService, outcomeConsumersService } from './services/outcomes.ts';
import { createQueueWithDeadLetters, ensureChannelQueue, type QueueInfo } from './services/queues.ts';
import { SCHEDULER_ROLE_ARN, schedulerService } from './services/scheduler.ts';
import { sqsService } from './services/sqs.ts';
import { type LocalSettingName, localDefault } from './settings.ts';

export type { QueueInfo };

export interface LocalStackOptions {
  /** Operational lines (plain text, no payloads); stderr by default. */
  readonly log?: (line: string) => void;
  /** Aborting during start-up stops whatever already started and rejects with an AbortError. */
  readonly signal?: AbortSignal;
  /**
   * The role policies enforced on every AWS call (local/iam/); default: the committed
   * local/iam/role-policies.json. Tests give policies synthesized with a grant left out.
   */
  readonly iamPolicies?: RolePolicies;
}

export interface LocalStack {
  readonly apiUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly tableName: string;
  /** The key table: key records of rows past the hot window (docs/archive.md "Key records"). */
  readonly keyTableName: string;
  /** The write-once archive's bucket, at `endpoints.s3` (docs/archive.md). */
  readonly archiveBucket: string;
  /** Per service (dynamodb, sqs, each provider simulator's service, scheduler): where it is. */
  readonly endpoints: Readonly<Record<string, string>> & { readonly scheduler?: string };
  /** true: started by this stack; false: an endpoint from the environment. */
  readonly started: Readonly<Record<string, boolean>>;
  readonly queues: Readonly<Record<Channel, QueueInfo>>;
  /** Each channel's provider id. */
  readonly providers: Readonly<Record<Channel, string>>;
  /** Simulators this stack started, by provider id (tests use their fault controls). */
  readonly simulators: Readonly<Record<string, unknown>>;
  /** The start-up banner, last line `READY_LINE`. */
  readonly banner: readonly string[];
  /** Graceful and idempotent: HTTP, pollers and reconciler first, then the services. */
  stop(): Promise<void>;
}

export const READY_LINE = 'notice-ledger local stack ready';
/** Written into the data dir on start (endpoints, pids; no secrets), removed on a clean stop. */
export const STACK_STATE_FILE = 'local-stack.json';

/** SQS's own ceiling for VisibilityTimeout. */
const MAX_VISIBILITY_TIMEOUT_S = 43_200;
const HTTP_DRAIN_MS = 5_000;

let startedInThisProcess = false;

/**
 * Starts the stack. `env` is the configuration (docs/configuration.md; local/README.md "Configuration"); its entries are copied
 * into `process.env`, where the functions read them, together with what the services contribute.
 */
export async function startLocalStack(
  env: NodeJS.ProcessEnv = process.env,
  options: LocalStackOptions = {},
): Promise<LocalStack> {
  if (startedInThisProcess) {
    throw new Error(
      'startLocalStack runs once per process: the functions cache their runtimes (queues, table, keys) ' +
        'for the process, so a second stack would silently talk to the first one',
    );
  }
  startedInThisProcess = true;
  const log = options.log ?? ((line: string) => process.stderr.write(`[local] ${line}\n`));
  const running: Running[] = [];
  try {
    return await start(env, log, options, running);
  } catch (error) {
    await stopAll(running, log);
    throw error;
  }
}

/** What the configuration says before anything starts; every problem surfaces here first. */
interface Plan {
  readonly port: number;
  readonly dataDir: string;
  readonly region: string;
  readonly concurrency: number;
  readonly keysGiven: boolean;
  readonly providers: Readonly<Record<Channel, string>>;
  /** Each channel's fallback provider, where SMS_FALLBACK_PROVIDER / EMAIL_FALLBACK_PROVIDER name one. */
  readonly fallbacks: Partial<Record<Channel, string>>;
  /** Simulators to consider: the selected, fallback and retained providers that have a local part. */
  readonly simulated: readonly LocalProvider[];
}

function plan(e: NodeJS.ProcessEnv): Plan {
  const port = parsePort(e.PORT);
  const dataDir = resolve(e.LEDGER_DATA_DIR || localDefault('LEDGER_DATA_DIR'));
  const concurrency = parsePositiveInt(e.LOCAL_SQS_CONCURRENCY, 'LOCAL_SQS_CONCURRENCY');
  // The SDK needs a region and credentials even for local endpoints; none of these reach AWS.
  e.AWS_REGION ||= localDefault('AWS_REGION');
  e.AWS_ACCESS_KEY_ID ||= localDefault('AWS_ACCESS_KEY_ID');
  e.AWS_SECRET_ACCESS_KEY ||= localDefault('AWS_SECRET_ACCESS_KEY');
  // Who calls (./callers.ts): a request without a caller header is the local operator, and the
  // role map knows a local operator and auditor, unless the environment says otherwise.
  e.UNSIGNED_CALLER_PRINCIPAL ||= LOCAL_OPERATOR_ROLE;
  e.OPERATOR_PRINCIPALS ||= LOCAL_OPERATOR_ROLE;
  e.AUDITOR_PRINCIPALS ||= LOCAL_AUDITOR_ROLE;
  // An unknown EMAIL_PROVIDER / SMS_PROVIDER / RETAINED_PROVIDERS stops here, naming the variable.
  const config = readConfig(e);
  // A channel whose provider is `none` is not configured: no simulator, no poller (below).
  const providers = Object.fromEntries(
    CHANNELS.map((channel) => [channel, selectedProvider(channel, e)?.descriptor.id ?? NO_PROVIDER]),
  ) as Record<ProviderChannel, string>;
  // Each channel's fallback (SMS_FALLBACK_PROVIDER …) runs its simulator too, and the sender holds
  // both providers' grants (./iam/enforce.ts).
  const fallbacks = Object.fromEntries(
    CHANNELS.flatMap((channel) => {
      const fallback = selectedFallback(channel, e);
      return fallback ? [[channel, fallback.descriptor.id]] : [];
    }),
  ) as Partial<Record<Channel, string>>;
  const ids = [
    ...new Set([...Object.values(providers), ...Object.values(fallbacks), ...config.RETAINED_PROVIDERS]),
  ].filter((id) => id !== NO_PROVIDER);
  answeringProviders(config, e);
  const simulated = ids.flatMap((id) => localProvider(id) ?? []);
  return {
    port,
    dataDir,
    region: e.AWS_REGION,
    concurrency,
    keysGiven: Boolean(e.FINGERPRINT_KEY || e.ENVELOPE_LOCAL_KEY),
    providers,
    fallbacks,
    simulated,
  };
}

async function start(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  options: LocalStackOptions,
  running: Running[],
): Promise<LocalStack> {
  const { signal } = options;
  if (env !== process.env) {
    for (const [name, value] of Object.entries(env)) if (value !== undefined) process.env[name] = value;
  }
  const e = process.env;
  const p = plan(e);
  const crashPoint = readCrashPoint(e);
  await mkdir(p.dataDir, { recursive: true });
  const secrets = await loadLocalSecrets(
    p.dataDir,
    Object.fromEntries(p.simulated.flatMap((s) => (s.credentials ? [[s.id, s.credentials]] : []))),
  );
  e.FINGERPRINT_KEY ||= secrets.fingerprintKey;
  e.ENVELOPE_LOCAL_KEY ||= secrets.envelopeKey;
  key32(e.FINGERPRINT_KEY, 'FINGERPRINT_KEY');
  key32(e.ENVELOPE_LOCAL_KEY, 'ENVELOPE_LOCAL_KEY');
  const context: StackContext = { env: e, dataDir: p.dataDir, region: p.region, log, signal };

  const run = async (stage: readonly LocalService[]): Promise<void> => {
    signal?.throwIfAborted();
    // A stage's services start side by side; each failure is reported once all have settled.
    const results = await Promise.allSettled(
      stage.map(async (service) => {
        const provided = service.external?.(e);
        return provided ? externalService(provided) : await service.start(context);
      }),
    );
    // Recorded in the stage's order (the banner's), every started one (so that it is stopped).
    results.forEach((r, i) => {
      const { name, label } = stage[i] as LocalService;
      if (r.status === 'fulfilled') running.push({ name, ...(label ? { label } : {}), service: r.value });
    });
    const failure = results.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    for (const r of results) if (r.status === 'fulfilled') Object.assign(e, r.value.env ?? {});
  };

  // Bound first: the public URL (webhook callbacks) must be known before the functions are
  // built, and a taken port should fail before a JVM is started.
  const gateway = await bindGateway(p.port, p.region, log);
  running.push({ name: 'gateway', service: { stop: () => gateway.close(0) } });
  e.PUBLIC_BASE_URL ||= gateway.url;

  const simulators: Record<string, unknown> = {};
  const simulatorServices: LocalService[] = p.simulated.map((provider) => ({
    name: provider.service,
    label: provider.label,
    external: (env) => (provider.external(env) ? provider.endpoint(env) : undefined),
    start: async (ctx) => {
      const started = await provider.start(ctx, secrets.providers[provider.id] ?? {});
      simulators[provider.id] = started.simulator;
      return started;
    },
  }));
  await run([dynamodbService, sqsService, s3Service, ...simulatorServices]);
  const startedHere = (name: string) => running.some((r) => r.name === name && !r.service.external);
  await run([ledgerService({ keysGiven: p.keysGiven })]);
  // The archive bucket, and TTL (which DynamoDB Local does not run) on the ledger table.
  await run([archiveBucketService, ttlService]);
  const config = readConfig(e);
  // Local function timeout: one provider call and the ledger writes around it.
  const functionTimeoutMs = config.PROVIDER_TIMEOUT_MS + 5_000;
  const queues = await ensureQueues(e, p.region, functionTimeoutMs, log);
  // Before any client a role's calls go through is built: the functions' (through the wiring),
  // the event sources', the Scheduler stand-in's. Each role's policy takes the stack's values
  // (queue ARNs, the scheduler role, …) at its first call.
  const iam = enforceIam({
    policies: options.iamPolicies ?? readRolePolicies(),
    place: { region: p.region, env: e },
    providers: p.providers,
    fallbacks: p.fallbacks,
    log,
  });
  running.push({
    name: 'iam',
    label: 'IAM',
    service: { describe: iam.describe, stop: async () => stopEnforcingIam() },
  });
  await run([schedulerService(iam), outcomeBusService(iam)]);
  if (e.AWS_ENDPOINT_URL_SCHEDULER) e.SCHEDULER_ROLE_ARN ||= SCHEDULER_ROLE_ARN;

  // Imported only now: handler modules may read the environment while loading.
  const { functionsService, dispatchHttp } = await import('./services/functions.ts');
  await run([
    functionsService({
      queues: () => queues.info,
      lanes: () => queues.lanes,
      watch: () => queues.watch,
      functionTimeoutMs,
      concurrency: p.concurrency,
      reconcileIntervalMs: config.RECONCILE_INTERVAL_MS,
      crashPoint,
      senders: parseSenders(e.LOCAL_SENDERS),
      feeds: p.simulated.map((provider) => ({ provider, started: startedHere(provider.service) })),
      iam,
    }),
  ]);
  // The ledger stream's consumers: outcome events and their webhooks (docs/outcome-events.md), the archive.
  await run([outcomeConsumersService(iam, functionTimeoutMs), archiverService(iam, crashPoint)]);
  gateway.serve(dispatchHttp);
  signal?.throwIfAborted();

  const byName = new Map<string, RunningService>(running.map((r) => [r.name, r.service]));
  const endpoint = (name: string) => byName.get(name)?.endpoint;
  const endpoints: Record<string, string> = {
    dynamodb: required(e.AWS_ENDPOINT_URL_DYNAMODB),
    sqs: required(e.AWS_ENDPOINT_URL_SQS),
    s3: required(e.AWS_ENDPOINT_URL_S3),
    ...Object.fromEntries(
      p.simulated.map((s) => [s.service, required(endpoint(s.service) ?? s.endpoint(e))]),
    ),
    ...(e.AWS_ENDPOINT_URL_SCHEDULER ? { scheduler: e.AWS_ENDPOINT_URL_SCHEDULER } : {}),
  };
  const started: Record<string, boolean> = {
    dynamodb: startedHere('dynamodb'),
    sqs: startedHere('sqs'),
    s3: startedHere('s3'),
    ...Object.fromEntries(p.simulated.map((s) => [s.service, startedHere(s.service)])),
  };
  const tableName = config.LEDGER_TABLE_NAME;
  const jvmPid = jvmPidOf(byName.get('dynamodb'));
  await writeFile(
    join(p.dataDir, STACK_STATE_FILE),
    `${JSON.stringify(
      {
        pid: process.pid,
        apiUrl: gateway.url,
        dataDir: p.dataDir,
        tableName,
        keyTableName: required(e.KEY_TABLE_NAME),
        archiveBucket: required(e.ARCHIVE_BUCKET),
        endpoints,
        started,
        providers: p.providers,
        queues: queues.info,
        jvmPid,
        startedAt: new Date().toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  running.push({
    name: 'state-file',
    service: { stop: () => rm(join(p.dataDir, STACK_STATE_FILE), { force: true }) },
  });

  const banner = bannerLines({
    apiUrl: gateway.url,
    dataDir: p.dataDir,
    tableName,
    services: running,
    queues: queues.info,
    lanes: queues.lanes.length > 0,
    visibilityTimeoutS: queues.visibilityTimeoutS,
    concurrency: p.concurrency,
    providers: p.providers,
    fallbacks: p.fallbacks,
    jvmPid,
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Order matters: stop taking work, let work in flight reach the ledger, then take the
      // services away from under nobody.
      await gateway.close(HTTP_DRAIN_MS);
      await stopAll(running, log);
    })();
    return stopping;
  };

  return {
    apiUrl: gateway.url,
    port: gateway.port,
    dataDir: p.dataDir,
    tableName,
    keyTableName: required(e.KEY_TABLE_NAME),
    archiveBucket: required(e.ARCHIVE_BUCKET),
    endpoints,
    started,
    queues: queues.info,
    providers: p.providers,
    simulators,
    banner,
    stop,
  };
}

/** The gateway binds first and serves (`serve`) once the functions are up; until then: 503. */
async function bindGateway(
  port: number,
  region: string,
  log: (line: string) => void,
): Promise<HttpGateway & { serve(handler: HttpApiHandler): void }> {
  let handler: HttpApiHandler | undefined;
  const gateway = await startHttpGateway({
    port,
    region,
    log,
    loadHandler: async () => {
      if (!handler) throw new Error('the functions are not up yet');
      return handler;
    },
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(`PORT ${port} on 127.0.0.1 is in use; set PORT to another port (0: any free port)`);
  });
  return Object.assign(gateway, {
    serve(next: HttpApiHandler) {
      handler = next;
      gateway.open();
    },
  });
}

/**
 * `notice-ledger-<channel>` and its DLQ, created when missing (stacks sharing one SQS share the
 * queues). AWS's rule of thumb for an event-source queue: a visibility timeout of at least six
 * times the function timeout, so a batch still running is not handed to a second worker.
 */
async function ensureQueues(
  e: NodeJS.ProcessEnv,
  region: string,
  functionTimeoutMs: number,
  log: (line: string) => void,
): Promise<{
  info: Record<Channel, QueueInfo>;
  lanes: readonly (QueueInfo & { readonly channel: Channel; readonly lane: 'critical' | 'bulk' })[];
  watch: QueueInfo;
  visibilityTimeoutS: number;
}> {
  const visibilityTimeoutS = Math.min(
    MAX_VISIBILITY_TIMEOUT_S,
    Math.max(30, Math.ceil((6 * functionTimeoutMs) / 1000)),
  );
  const sqs = new SQSClient({
    endpoint: e.AWS_ENDPOINT_URL_SQS,
    region,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
  });
  try {
    const [email, sms] = await Promise.all(
      CHANNELS.map((channel) => ensureChannelQueue(sqs, channel, visibilityTimeoutS, log)),
    );
    const info = { email, sms } as Record<Channel, QueueInfo>;
    e.EMAIL_QUEUE_URL = info.email.url;
    e.SMS_QUEUE_URL = info.sms.url;
    e.EMAIL_QUEUE_ARN = info.email.arn;
    e.SMS_QUEUE_ARN = info.sms.arn;
    // As the CDK stack has them (docs/architecture.md §11): the critical and bulk lanes get
    // queues (and pollers) of their own; LOCAL_LANES=off puts every priority on the channel
    // queue (one lane, the `priority` benchmark's baseline).
    const lanes: (QueueInfo & { channel: Channel; lane: 'critical' | 'bulk' })[] = [];
    if (e.LOCAL_LANES !== 'off') {
      for (const channel of CHANNELS) {
        for (const lane of ['critical', 'bulk'] as const) {
          const queue = await ensureChannelQueue(sqs, channel, visibilityTimeoutS, log, lane);
          e[LANE_SETTINGS[channel].queueUrls[lane]] = queue.url;
          e[LANE_SETTINGS[channel].queueArns[lane]] = queue.arn;
          lanes.push({ ...queue, channel, lane });
        }
      }
    }
    // Intake's watches (docs/table-design.md "Watched rows"), consumed by the watch function.
    const watch = await createQueueWithDeadLetters(
      sqs,
      'notice-ledger-watch',
      { VisibilityTimeout: String(visibilityTimeoutS) },
      log,
    );
    e.WATCH_QUEUE_URL = watch.url;
    e.WATCH_QUEUE_ARN = watch.arn;
    return { info, lanes, watch, visibilityTimeoutS };
  } finally {
    sqs.destroy();
  }
}

async function stopAll(running: Running[], log: (line: string) => void): Promise<void> {
  // Last started, first stopped; each failure is reported and does not stop the others.
  while (running.length > 0) {
    const next = running.pop();
    try {
      await next?.service.stop();
    } catch (error) {
      log(`shutdown of ${next?.name} failed: ${errorText(error)}`);
    }
  }
}

// --- banner ------------------------------------------------------------------------------------

/**
 * The README's first notice, with a fresh event id and a deadline a week ahead, on the channels
 * this stack sends (a channel whose provider is `none` would be refused).
 */
export function exampleNotice(
  now = Date.now(),
  channels: readonly Channel[] = CHANNELS,
): { body: Record<string, unknown>; noticeId: string } {
  const eventId = `evt_local_${now.toString(36)}`;
  const body = {
    eventId,
    eventType: 'lab-result-ready',
    recipient: {
      id: 'pat_1042',
      ...(channels.includes('email') ? { email: 'success@simulator.amazonses.com' } : {}),
      ...(channels.includes('sms') ? { phone: '+15551234567' } : {}),
    },
    channels: [...channels],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
    deadline: new Date(now + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  return { body, noticeId: deriveNoticeId(body.eventType, eventId, body.recipient.id) };
}

/** A started service, in start order (stopped in reverse). */
interface Running {
  readonly name: string;
  readonly label?: string;
  readonly service: RunningService;
}

const LABELS: Readonly<Record<string, string>> = {
  dynamodb: 'DynamoDB',
  sqs: 'SQS',
  ledger: 'Ledger',
  scheduler: 'Scheduler',
  functions: 'Functions',
  outcomes: 'Outcomes',
  'outcome-consumers': 'Outcome λs',
};

interface BannerInput {
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly tableName: string;
  readonly services: readonly Running[];
  readonly queues: Record<Channel, QueueInfo>;
  /** The critical and bulk lanes have queues of their own. */
  readonly lanes: boolean;
  readonly visibilityTimeoutS: number;
  readonly concurrency: number;
  readonly providers: Readonly<Record<Channel, string>>;
  readonly fallbacks: Partial<Record<Channel, string>>;
  readonly jvmPid: number | undefined;
}

function bannerLines(input: BannerInput): string[] {
  const example = exampleNotice(
    Date.now(),
    CHANNELS.filter((channel) => input.providers[channel] !== NO_PROVIDER),
  );
  const pgid = processGroupId();
  const lines = [
    '',
    'notice-ledger local stack',
    `  API          ${input.apiUrl}`,
    `  Providers    ${CHANNELS.map((c) => `${c}: ${input.providers[c]}${input.fallbacks[c] ? ` (fallback ${input.fallbacks[c]})` : ''}`).join(', ')}`,
    ...input.services
      .filter((s) => s.label || LABELS[s.name] || s.service.describe)
      .map(({ name, label, service }) =>
        `  ${(label ?? LABELS[name] ?? name).padEnd(12)} ${service.endpoint ? `${service.endpoint}  ` : ''}${service.describe ?? ''}`.trimEnd(),
      ),
    `  Queues       ${input.queues.email.name}, ${input.queues.sms.name}${input.lanes ? ' and their critical and bulk lanes' : ' (one lane: LOCAL_LANES=off)'}, notice-ledger-watch (+ -dlq), visibility ${input.visibilityTimeoutS} s, ${input.concurrency} batches per queue`,
    `  Data dir     ${input.dataDir}`,
    ...(pgid !== undefined
      ? [
          `  Processes    pid ${process.pid}${input.jvmPid ? `, DynamoDB Local pid ${input.jvmPid}` : ''}; \`kill -9 -${pgid}\` stops the whole process group`,
        ]
      : []),
    '',
    'Send a first notice:',
    `  curl -sS -X POST ${input.apiUrl}/v1/notices -H 'content-type: application/json' -d '${JSON.stringify(example.body)}'`,
    'Read its timeline:',
    `  curl -sS ${input.apiUrl}/v1/notices/${example.noticeId}`,
    "Or in a browser: what is unresolved, and each notice's timeline:",
    `  ${input.apiUrl}/console`,
    '',
    READY_LINE,
  ];
  return lines;
}

/** Linux only (from /proc); elsewhere the banner leaves the line out. */
function processGroupId(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the parenthesised command name: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgid = Number.parseInt(fields[2] ?? '', 10);
    return Number.isInteger(pgid) ? pgid : undefined;
  } catch {
    return undefined;
  }
}

// --- helpers -----------------------------------------------------------------------------------

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return Number(localDefault('PORT'));
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`PORT must be 0–65535, got "${value}"`);
  return port;
}

function parsePositiveInt(value: string | undefined, name: LocalSettingName): number {
  if (value === undefined || value === '') return Number(localDefault(name));
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return n;
}

/** `LOCAL_SENDERS`: the channels whose senders consume their queue (`email,sms`, `none`; default both). */
function parseSenders(value: string | undefined): Channel[] {
  if (value === undefined || value.trim() === '') return [...CHANNELS];
  if (value.trim() === 'none') return [];
  const names = value.split(',').map((v) => v.trim());
  for (const name of names) {
    if (!(CHANNELS as readonly string[]).includes(name)) {
      throw new Error(
        `LOCAL_SENDERS must name channels (${CHANNELS.join(', ')}) or be "none"; got "${value}"`,
      );
    }
  }
  return names as Channel[];
}

function required(value: string | undefined): string {
  if (!value) throw new Error('internal: a required value was not resolved');
  return value;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
