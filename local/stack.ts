/**
 * The local stack of DESIGN §7: the unchanged Lambda handlers behind a local API Gateway,
 * local SQS event sources and a reconciler timer, against DynamoDB Local, local-aws-sqs,
 * aws-ses-v2-local and the Twilio simulator (each started only when no endpoint is given).
 *
 * The runtime (lambdas/wiring.ts) reads its configuration from `process.env` once per process
 * and builds its SDK clients from the standard `AWS_ENDPOINT_URL_<SERVICE>` variables, so this
 * module's job is to put the right values there before the first handler runs. That is also
 * why one process can host one stack: the runtime it builds is cached for the process.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';
import { ensureLedgerTable } from '../lambdas/adapters/dynamodb/ledger-table.ts';
import { CHANNELS, type Channel } from '../lambdas/domain/channel.ts';
import { deriveNoticeId } from '../lambdas/domain/identity.ts';
import { readConfig } from '../lambdas/edge/config.ts';
import { describeCrashPoint, installCrashPoints, readCrashPoint } from './crash-points.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb/server.ts';
import { type HttpApiHandler, startHttpGateway } from './http-gateway.ts';
import { LOCAL_ACCOUNT_ID, lambdaContext } from './lambda-context.ts';
import { loadLocalSecrets } from './local-secrets.ts';
import { startPeriodicTask } from './periodic-task.ts';
import { startSchedulerStandIn } from './scheduler/server.ts';
import { startSesLocal } from './ses/server.ts';
import { type SmsSimulator, startSmsSimulator } from './sms-simulator/server.ts';
import { type SqsEventSource, type SqsHandler, startSqsEventSource } from './sqs-event-source.ts';

export interface LocalStackOptions {
  /** Operational lines (plain text, no payloads); stderr by default. */
  readonly log?: (line: string) => void;
  /** Aborting during start-up stops whatever already started and rejects with an AbortError. */
  readonly signal?: AbortSignal;
}

export interface QueueInfo {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl: string;
}

export type ServiceName = 'dynamodb' | 'sqs' | 'sesv2' | 'twilio';

export interface LocalStack {
  readonly apiUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly tableName: string;
  readonly endpoints: Readonly<Record<ServiceName, string>> & { readonly scheduler?: string };
  /** true: started by this stack; false: an endpoint from the environment. */
  readonly started: Readonly<Record<ServiceName, boolean>>;
  readonly queues: Readonly<Record<Channel, QueueInfo>>;
  /** Present when this stack started the simulator (tests use its fault controls). */
  readonly smsSimulator?: SmsSimulator;
  /** The start-up banner, last line `READY_LINE`. */
  readonly banner: readonly string[];
  /** Graceful and idempotent: HTTP, pollers and reconciler first, then the services. */
  stop(): Promise<void>;
}

export const READY_LINE = 'notice-ledger local stack ready';
/** Written into the data dir on start (endpoints, pids; no secrets), removed on a clean stop. */
export const STACK_STATE_FILE = 'local-stack.json';
const JVM_PID_FILE = 'dynamodb-local.pid';

const DEFAULT_PORT = 3000;
const DEFAULT_DATA_DIR = '.local/data';
const DEFAULT_REGION = 'us-east-1';
/** SQS's own ceiling for VisibilityTimeout. */
const MAX_VISIBILITY_TIMEOUT_S = 43_200;
/** The DLQ keeps what it catches as long as SQS allows: someone has to look at it. */
const DLQ_RETENTION_S = 1_209_600;
const MAX_RECEIVE_COUNT = 5;
const RECONCILER_FIRST_RUN_MS = 1_000;
const SES_FEED_INTERVAL_MS = 500;
const HTTP_DRAIN_MS = 5_000;
const POLLER_DRAIN_MS = 10_000;
const RECONCILER_DRAIN_MS = 10_000;

let startedInThisProcess = false;

/**
 * Starts the stack. `env` is the configuration (DESIGN §6); its entries are copied into
 * `process.env`, where the runtime reads them, together with the endpoints, queue URLs and
 * keys this function resolves.
 */
export async function startLocalStack(
  env: NodeJS.ProcessEnv = process.env,
  options: LocalStackOptions = {},
): Promise<LocalStack> {
  if (startedInThisProcess) {
    throw new Error(
      'startLocalStack runs once per process: lambdas/wiring.ts caches its runtime (queues, table, keys) ' +
        'for the process, so a second stack would silently talk to the first one',
    );
  }
  startedInThisProcess = true;
  const log = options.log ?? ((line: string) => process.stderr.write(`[local] ${line}\n`));
  const cleanups: (() => Promise<unknown>)[] = [];
  const checkAborted = () => options.signal?.throwIfAborted();

  try {
    return await start(env, log, cleanups, checkAborted, options.signal);
  } catch (error) {
    await runCleanups(cleanups, log);
    throw error;
  }
}

async function start(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  cleanups: (() => Promise<unknown>)[],
  checkAborted: () => void,
  signal: AbortSignal | undefined,
): Promise<LocalStack> {
  if (env !== process.env) {
    for (const [name, value] of Object.entries(env)) if (value !== undefined) process.env[name] = value;
  }
  const e = process.env;
  const port = parsePort(e.PORT);
  const dataDir = resolve(e.LEDGER_DATA_DIR || DEFAULT_DATA_DIR);
  const concurrency = parsePositiveInt(e.LOCAL_SQS_CONCURRENCY, 'LOCAL_SQS_CONCURRENCY', 2);
  // The SDK needs a region and credentials even for local endpoints; none of these reach AWS.
  e.AWS_REGION ||= DEFAULT_REGION;
  e.AWS_ACCESS_KEY_ID ||= 'local';
  e.AWS_SECRET_ACCESS_KEY ||= 'local';
  const region = e.AWS_REGION;

  await mkdir(dataDir, { recursive: true });
  const secrets = await loadLocalSecrets(dataDir);
  e.FINGERPRINT_KEY ||= secrets.fingerprintKey;
  e.ENVELOPE_LOCAL_KEY ||= secrets.envelopeKey;
  // Validate the whole configuration before starting anything, with the runtime's own schema.
  let config = readConfig(e);
  const crashPoint = readCrashPoint(e);
  const sesEvents = readSesEventsMode(e.LOCAL_SES_EVENTS);

  // Bound first: the public URL (Twilio's callbacks) must be known before the runtime is built,
  // and a taken port should fail before a JVM is started.
  const gateway = await startHttpGateway({
    port,
    region,
    log,
    loadHandler: loadHttpApiHandler,
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(`PORT ${port} on 127.0.0.1 is in use; set PORT to another port (0: any free port)`);
  });
  cleanups.push(() => gateway.close(0));
  e.PUBLIC_BASE_URL ||= gateway.url;
  checkAborted();

  // --- services: the ones without an endpoint are started, in parallel -------------------
  const started: Record<ServiceName, boolean> = {
    dynamodb: !e.AWS_ENDPOINT_URL_DYNAMODB,
    sqs: !e.AWS_ENDPOINT_URL_SQS,
    sesv2: !e.AWS_ENDPOINT_URL_SESV2,
    twilio: !e.TWILIO_BASE_URL,
  };
  const dynamoDir = join(dataDir, 'dynamodb');
  let jvm: DynamoDbLocal | undefined;
  let smsSimulator: SmsSimulator | undefined;
  const launches: Promise<void>[] = [];
  if (started.dynamodb) {
    launches.push(
      (async () => {
        await assertNoOrphanJvm(dataDir, dynamoDir);
        jvm = await startDynamoDbLocal({ dataDir: dynamoDir });
        const running = jvm;
        cleanups.push(async () => {
          await running.stop();
          await rm(join(dataDir, JVM_PID_FILE), { force: true });
        });
        await writeFile(join(dataDir, JVM_PID_FILE), `${running.pid}\n`);
        e.AWS_ENDPOINT_URL_DYNAMODB = running.endpoint;
      })(),
    );
  }
  if (started.sqs) {
    launches.push(
      (async () => {
        // In memory by design: the ledger is the source of truth and the reconciler re-enqueues
        // reserved and overdue rows, so queue contents may be lost on restart.
        const server = await createSqsServer({
          port: 0,
          hostname: '127.0.0.1',
          region,
          accountId: LOCAL_ACCOUNT_ID,
        });
        cleanups.push(() => closeServer(server));
        e.AWS_ENDPOINT_URL_SQS = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      })(),
    );
  }
  if (started.sesv2) {
    launches.push(
      (async () => {
        const ses = await startSesLocal();
        cleanups.push(() => ses.close());
        e.AWS_ENDPOINT_URL_SESV2 = ses.endpoint;
      })(),
    );
  }
  if (started.twilio) {
    launches.push(
      (async () => {
        const credentials = {
          accountSid: e.TWILIO_ACCOUNT_SID || secrets.twilio.accountSid,
          authToken: e.TWILIO_AUTH_TOKEN || secrets.twilio.authToken,
          from: e.TWILIO_FROM || secrets.twilio.from,
        };
        const simulator = await startSmsSimulator({
          accountSid: credentials.accountSid,
          authToken: credentials.authToken,
          fromNumbers: [credentials.from],
        });
        smsSimulator = simulator;
        cleanups.push(() => simulator.close());
        e.TWILIO_BASE_URL = simulator.baseUrl;
        e.TWILIO_ACCOUNT_SID = credentials.accountSid;
        e.TWILIO_AUTH_TOKEN = credentials.authToken;
        e.TWILIO_FROM = credentials.from;
      })(),
    );
  }
  const launched = await Promise.allSettled(launches);
  const launchFailure = launched.find((result) => result.status === 'rejected');
  if (launchFailure) throw launchFailure.reason;
  checkAborted();

  const endpoints = {
    dynamodb: required(e.AWS_ENDPOINT_URL_DYNAMODB),
    sqs: required(e.AWS_ENDPOINT_URL_SQS),
    sesv2: required(e.AWS_ENDPOINT_URL_SESV2),
    twilio: required(e.TWILIO_BASE_URL),
    ...(e.AWS_ENDPOINT_URL_SCHEDULER ? { scheduler: e.AWS_ENDPOINT_URL_SCHEDULER } : {}),
  };
  if (!started.twilio && !(e.TWILIO_ACCOUNT_SID && e.TWILIO_AUTH_TOKEN && e.TWILIO_FROM)) {
    log('TWILIO_BASE_URL is set without TWILIO_ACCOUNT_SID/AUTH_TOKEN/FROM: the sms channel cannot send');
  }

  // --- table and queues ---------------------------------------------------------------------
  config = readConfig(e);
  const functionTimeoutMs = config.PROVIDER_TIMEOUT_MS + 5_000;
  // AWS's rule of thumb for an event-source queue: at least six times the function timeout, so
  // a batch still running is not handed to a second worker.
  const visibilityTimeoutS = Math.min(
    MAX_VISIBILITY_TIMEOUT_S,
    Math.max(30, Math.ceil((6 * functionTimeoutMs) / 1000)),
  );
  const ddb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region });
  const sqs = new SQSClient({
    endpoint: endpoints.sqs,
    region,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
  });
  cleanups.push(async () => {
    ddb.destroy();
    sqs.destroy();
  });
  const [, email, sms] = await Promise.all([
    ensureLedgerTable(ddb, config.LEDGER_TABLE_NAME),
    ensureChannelQueue(sqs, 'email', visibilityTimeoutS, log),
    ensureChannelQueue(sqs, 'sms', visibilityTimeoutS, log),
  ]);
  const queues: Record<Channel, QueueInfo> = { email, sms };
  e.EMAIL_QUEUE_URL = email.url;
  e.SMS_QUEUE_URL = sms.url;
  e.EMAIL_QUEUE_ARN = email.arn;
  e.SMS_QUEUE_ARN = sms.arn;
  // No Scheduler emulator exists: start the stand-in (local/scheduler) unless one is given, so the
  // production adapter runs unchanged. Its schedules persist in the data dir, so a retry
  // scheduled before a crash still fires after the restart.
  let schedulerStarted = false;
  if (!e.AWS_ENDPOINT_URL_SCHEDULER) {
    const standIn = await startSchedulerStandIn({
      sqsEndpoint: endpoints.sqs,
      region,
      stateFile: join(dataDir, 'scheduler.json'),
      log,
    });
    cleanups.push(() => standIn.close());
    e.AWS_ENDPOINT_URL_SCHEDULER = standIn.endpoint;
    schedulerStarted = true;
  }
  const allEndpoints = { ...endpoints, scheduler: e.AWS_ENDPOINT_URL_SCHEDULER };
  // With a Scheduler endpoint, exercise the production adapter: it only needs a role to name.
  if (e.AWS_ENDPOINT_URL_SCHEDULER) {
    e.SCHEDULER_ROLE_ARN ||= `arn:aws:iam::${LOCAL_ACCOUNT_ID}:role/notice-ledger-scheduler`;
  }
  checkAborted();

  // --- functions ------------------------------------------------------------------------------
  // Imported only now: modules may read the environment while loading.
  const senders: Record<Channel, SqsHandler> = {
    email: (await import('../lambdas/handlers/send-email.ts')).handler,
    sms: (await import('../lambdas/handlers/send-sms.ts')).handler,
  };
  if (crashPoint) {
    // Before any handler runs: the ports are wrapped on the one runtime they all share.
    const { getRuntime } = await import('../lambdas/wiring.ts');
    installCrashPoints(await getRuntime(), crashPoint);
    log(`CRASH_POINT armed: ${describeCrashPoint(crashPoint)} (this process will SIGKILL itself)`);
  }
  const pollers: SqsEventSource[] = CHANNELS.map((channel) =>
    startSqsEventSource({
      client: sqs,
      queueUrl: queues[channel].url,
      queueArn: queues[channel].arn,
      region,
      functionName: `notice-ledger-send-${channel}`,
      handler: senders[channel],
      functionTimeoutMs,
      concurrency,
      log,
    }),
  );
  cleanups.push(() => Promise.all(pollers.map((poller) => poller.stop(0))));

  const reconciler = startPeriodicTask({
    intervalMs: config.RECONCILE_INTERVAL_MS,
    firstRunAfterMs: RECONCILER_FIRST_RUN_MS,
    run: reconcilerRunner(region, functionTimeoutMs, log),
    onError: (error) => log(`reconciler run failed: ${errorText(error)}`),
  });
  cleanups.push(() => reconciler.stop(0));

  const sesFeed =
    started.sesv2 || sesEvents === 'store' ? await startSesFeed(endpoints.sesv2, region, log) : undefined;
  if (sesFeed) cleanups.push(async () => sesFeed.stop());

  gateway.open();
  const state = {
    pid: process.pid,
    apiUrl: gateway.url,
    dataDir,
    tableName: config.LEDGER_TABLE_NAME,
    endpoints: allEndpoints,
    started,
    queues,
    jvmPid: jvm?.pid,
    startedAt: new Date().toISOString(),
  };
  await writeFile(join(dataDir, STACK_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  cleanups.push(() => rm(join(dataDir, STACK_STATE_FILE), { force: true }));

  const banner = bannerLines({
    apiUrl: gateway.url,
    dataDir,
    dynamoDir,
    tableName: config.LEDGER_TABLE_NAME,
    endpoints: allEndpoints,
    schedulerStarted,
    started,
    queues,
    reconcileIntervalMs: config.RECONCILE_INTERVAL_MS,
    reconcilerPresent: existsSync(fileURLToPath(RECONCILER_MODULE)),
    sesFeed: sesFeed !== undefined,
    visibilityTimeoutS,
    concurrency,
    jvmPid: jvm?.pid,
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Order matters: stop taking work, let work in flight reach the ledger, then take the
      // services away from under nobody.
      const http = gateway.close(HTTP_DRAIN_MS);
      sesFeed?.stop();
      const [, abandoned] = await Promise.all([
        http,
        Promise.all(pollers.map((poller) => poller.stop(POLLER_DRAIN_MS))),
        reconciler.stop(RECONCILER_DRAIN_MS),
      ]);
      const left = abandoned.reduce((sum, n) => sum + n, 0);
      if (left > 0) {
        log(
          `${left} event-source worker(s) still busy after ${POLLER_DRAIN_MS} ms; rows they hold will see their leases expire`,
        );
      }
      await runCleanups(cleanups, log);
    })();
    return stopping;
  };
  signal?.throwIfAborted();

  return {
    apiUrl: gateway.url,
    port: gateway.port,
    dataDir,
    tableName: config.LEDGER_TABLE_NAME,
    endpoints: allEndpoints,
    started,
    queues,
    ...(smsSimulator ? { smsSimulator } : {}),
    banner,
    stop,
  };
}

// --- queues ------------------------------------------------------------------------------------

/**
 * Creates `notice-ledger-<channel>` and its DLQ when missing. CreateQueue answers the existing
 * URL when the attributes match, so stacks sharing one SQS share the queues; when they differ
 * (another PROVIDER_TIMEOUT_MS, say) the existing queue is used as it is.
 */
async function ensureChannelQueue(
  client: SQSClient,
  channel: Channel,
  visibilityTimeoutS: number,
  log: (line: string) => void,
): Promise<QueueInfo> {
  const name = `notice-ledger-${channel}`;
  const dlqUrl = await createQueue(
    client,
    `${name}-dlq`,
    { MessageRetentionPeriod: String(DLQ_RETENTION_S) },
    log,
  );
  const dlqArn = await queueArn(client, dlqUrl);
  const url = await createQueue(
    client,
    name,
    {
      VisibilityTimeout: String(visibilityTimeoutS),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: MAX_RECEIVE_COUNT }),
    },
    log,
  );
  return { name, url, arn: await queueArn(client, url), dlqUrl };
}

async function createQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
  log: (line: string) => void,
): Promise<string> {
  try {
    const out = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return required(out.QueueUrl);
  } catch (error) {
    if (!(error instanceof QueueNameExists)) throw error;
    log(`queue ${name} exists with other attributes; using it as it is`);
    const out = await client.send(new GetQueueUrlCommand({ QueueName: name }));
    return required(out.QueueUrl);
  }
}

async function queueArn(client: SQSClient, url: string): Promise<string> {
  const out = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const name = url.split('/').pop() ?? '';
  return out.Attributes?.QueueArn ?? `arn:aws:sqs:${DEFAULT_REGION}:${LOCAL_ACCOUNT_ID}:${name}`;
}

// --- functions loaded by path ------------------------------------------------------------------

async function loadHttpApiHandler(): Promise<HttpApiHandler> {
  const module = await import('../lambdas/handlers/http-api.ts');
  return module.handler;
}

const RECONCILER_MODULE = new URL('../lambdas/handlers/reconciler.ts', import.meta.url);
const SES_EVENTS_MODULE = new URL('../lambdas/handlers/ses-events.ts', import.meta.url);
const SES_FEEDER_MODULE = new URL('./ses-event-feeder.ts', import.meta.url);

/**
 * Imports a module by URL when its file exists. Imported by URL rather than by a literal
 * specifier so that this file type-checks and runs while those modules are still being
 * written; a module that exists but fails to load is an error, not an absence.
 */
async function importIfPresent(url: URL): Promise<Record<string, unknown> | undefined> {
  if (!existsSync(fileURLToPath(url))) return undefined;
  return (await import(url.href)) as Record<string, unknown>;
}

type ReconcilerHandler = (event: unknown, context: Context) => Promise<unknown>;

function reconcilerRunner(
  region: string,
  timeoutMs: number,
  log: (line: string) => void,
): () => Promise<void> {
  let reportedMissing = false;
  return async () => {
    const module = await importIfPresent(RECONCILER_MODULE);
    if (typeof module?.handler !== 'function') {
      if (!reportedMissing) log('lambdas/handlers/reconciler.ts has no handler yet: reconciliation skipped');
      reportedMissing = true;
      return;
    }
    const handler = module.handler as ReconcilerHandler;
    const now = new Date();
    // The event EventBridge Scheduler sends to a function target.
    await handler(
      {
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.scheduler',
        account: LOCAL_ACCOUNT_ID,
        time: now.toISOString(),
        region,
        resources: [
          `arn:aws:scheduler:${region}:${LOCAL_ACCOUNT_ID}:schedule/default/notice-ledger-reconciler`,
        ],
        detail: {},
      },
      lambdaContext('notice-ledger-reconciler', timeoutMs, region),
    );
  };
}

interface SesFeed {
  stop(): void;
}

/**
 * aws-ses-v2-local publishes no events; the feeder (local/ses-event-feeder.ts) turns its store
 * into SES-shaped EventBridge events for the ses-events function. For an emulator this stack
 * started, and for an external endpoint only when `LOCAL_SES_EVENTS=store` says it serves
 * aws-ses-v2-local's `/store` (the emulator itself, or a proxy in front of it): an arbitrary
 * endpoint may have no `/store` to read.
 */
async function startSesFeed(
  endpoint: string,
  region: string,
  log: (line: string) => void,
): Promise<SesFeed | undefined> {
  const feeder = await importIfPresent(SES_FEEDER_MODULE);
  const events = await importIfPresent(SES_EVENTS_MODULE);
  if (typeof feeder?.startSesEventFeeder !== 'function' || typeof events?.handler !== 'function') {
    log('SES event feed not available (local/ses-event-feeder.ts or lambdas/handlers/ses-events.ts missing)');
    return undefined;
  }
  const handler = events.handler as (
    event: EventBridgeEvent<string, unknown>,
    context: Context,
  ) => Promise<unknown>;
  const start = feeder.startSesEventFeeder as (options: {
    endpoint: string;
    deliver: (event: EventBridgeEvent<string, unknown>) => Promise<unknown>;
    intervalMs?: number;
    onError?: (error: unknown) => void;
  }) => SesFeed;
  let lastReport = 0;
  return start({
    endpoint,
    intervalMs: SES_FEED_INTERVAL_MS,
    deliver: (event) => handler(event, lambdaContext('notice-ledger-ses-events', 30_000, region)),
    onError: (error) => {
      // It retries every interval; one line per half minute is enough to notice.
      if (Date.now() - lastReport < 30_000) return;
      lastReport = Date.now();
      log(`SES event feed failed: ${errorText(error)}`);
    },
  });
}

// --- banner ------------------------------------------------------------------------------------

interface BannerInput {
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly dynamoDir: string;
  readonly tableName: string;
  readonly endpoints: LocalStack['endpoints'];
  readonly schedulerStarted: boolean;
  readonly started: Record<ServiceName, boolean>;
  readonly queues: Record<Channel, QueueInfo>;
  readonly reconcileIntervalMs: number;
  readonly reconcilerPresent: boolean;
  readonly sesFeed: boolean;
  readonly visibilityTimeoutS: number;
  readonly concurrency: number;
  readonly jvmPid: number | undefined;
}

/** The example of DESIGN §6, with a fresh event id and a deadline a week ahead. */
export function exampleNotice(now = Date.now()): { body: Record<string, unknown>; noticeId: string } {
  const eventId = `evt_local_${now.toString(36)}`;
  const body = {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: 'success@simulator.amazonses.com', phone: '+15551234567' },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
    deadline: new Date(now + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  return { body, noticeId: deriveNoticeId(body.eventType, eventId, body.recipient.id) };
}

function bannerLines(input: BannerInput): string[] {
  const origin = (service: ServiceName, what: string) =>
    input.started[service] ? `started (${what})` : 'external (from the environment)';
  const example = exampleNotice();
  const pgid = processGroupId();
  const lines = [
    '',
    'notice-ledger local stack',
    `  API          ${input.apiUrl}`,
    `  DynamoDB     ${input.endpoints.dynamodb}  ${origin('dynamodb', `DynamoDB Local, data in ${input.dynamoDir}`)}; table ${input.tableName}`,
    `  SQS          ${input.endpoints.sqs}  ${origin('sqs', 'local-aws-sqs, in memory')}; queues ${input.queues.email.name}, ${input.queues.sms.name} (+ -dlq), visibility ${input.visibilityTimeoutS} s, ${input.concurrency} batches per queue`,
    `  SES v2       ${input.endpoints.sesv2}  ${origin('sesv2', `aws-ses-v2-local; sent mail: ${input.endpoints.sesv2}/store`)}${input.sesFeed ? '; events fed to ses-events' : ''}`,
    `  Twilio       ${input.endpoints.twilio}  ${origin('twilio', `SMS simulator; messages: ${input.endpoints.twilio}/__messages`)}`,
    `  Scheduler    ${input.endpoints.scheduler}  ${input.schedulerStarted ? `started (local EventBridge Scheduler stand-in, schedules in ${input.dataDir}/scheduler.json)` : 'external'}`,
    `  Reconciler   ${input.reconcilerPresent ? `every ${input.reconcileIntervalMs} ms` : 'not present yet (lambdas/handlers/reconciler.ts): skipped'}`,
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

/**
 * A JVM left behind by a parent that was SIGKILLed alone keeps serving the data dir; a second
 * one on the same files would corrupt or shadow it. Refuse, and say which pid to stop.
 * Linux only (reads /proc); elsewhere nothing is checked.
 */
async function assertNoOrphanJvm(dataDir: string, dynamoDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number.parseInt(await readFile(join(dataDir, JVM_PID_FILE), 'utf8'), 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
  } catch {
    return;
  }
  if (cmdline.includes('DynamoDBLocal.jar') && cmdline.includes(dynamoDir)) {
    throw new Error(
      `DynamoDB Local (pid ${pid}) from an earlier run still serves ${dynamoDir}; stop it first: kill ${pid}`,
    );
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    // Long polls in progress would otherwise hold close() for their full wait.
    server.closeAllConnections();
  });
}

async function runCleanups(cleanups: (() => Promise<unknown>)[], log: (line: string) => void): Promise<void> {
  // Last started, first stopped; each failure is reported and does not stop the others.
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop();
    try {
      await cleanup?.();
    } catch (error) {
      log(`shutdown step failed: ${errorText(error)}`);
    }
  }
}

/**
 * `LOCAL_SES_EVENTS`: `store` feeds SES events from the `/store` of an external SES endpoint
 * (tests that keep the emulator outside a stack they kill); unset: only for the stack's own.
 */
function readSesEventsMode(value: string | undefined): 'store' | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (value.trim() === 'store') return 'store';
  throw new Error(`LOCAL_SES_EVENTS must be "store" or unset, got "${value}"`);
}

function parsePort(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`PORT must be 0–65535, got "${value}"`);
  return port;
}

function parsePositiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return n;
}

function required(value: string | undefined): string {
  if (!value) throw new Error('internal: a required value was not resolved');
  return value;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
