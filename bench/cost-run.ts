/**
 * Request counts per channel on the happy path, from the requests the unchanged stack makes
 * (counting proxies in front of DynamoDB Local, local-aws-sqs and the Scheduler stand-in; see
 * lib/counting-proxy.ts), with DynamoDB Local's ConsumedCapacity for the capacity units.
 *
 * Phases, each over its own set of notices, each measured from its first POST until its last
 * row reached the state it waits for:
 *  A. happy path, email + SMS, provider unthrottled, no delivery reports: intake → accepted;
 *  A2. the same for SMS-only notices (single-channel intake is a plain put, not a transaction);
 *  A3. the same for e-mail-only notices;
 *  B. SMS with Twilio status callbacks on: what the delivery reports add per SMS;
 *  C. forced retries: one 503 without Retry-After (short backoff → SQS DelaySeconds) and one
 *     503 with Retry-After 120 s (→ one EventBridge Scheduler CreateSchedule).
 *
 * Attribution: a DynamoDB request belongs to the channel its key names (intent `C#sms`,
 * suppression `S#sms#…`, gate `G#sms`); an SQS request to the queue it names. Requests that
 * name no channel (the reconciler's index queries and state BatchGets) are reported apart:
 * they cost per reconciler run (once a minute), not per notice.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SmsSimulator } from '../local/sms-simulator/server.ts';
import type { CountedRequest } from './lib/counting-proxy.ts';
import { type BenchNotice, benchNotices, postBurst, readLedgerRows } from './lib/notices.ts';
import type { BenchServices } from './lib/services.ts';
import type { StackHandle } from './lib/stack-process.ts';
import { round } from './lib/stats.ts';
import { countByOperation } from './throttle-run.ts';

/** The watch queue (local/stack.ts): intake's delayed watches, one per row. */
const WATCH_QUEUE = 'notice-ledger-watch';

const DYNAMO_WRITES = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);

export interface ChannelCost {
  readonly channels: number;
  readonly dynamoWritesPerChannel: number;
  readonly dynamoReadsPerChannel: number;
  readonly writeCapacityUnitsPerChannel: number;
  readonly readCapacityUnitsPerChannel: number;
  readonly sqsRequestsPerChannel: number;
  /** Per channel: `SendMessageBatch`, `ReceiveMessage` (returning messages), `DeleteMessageBatch`. */
  readonly sqsBreakdownPerChannel: Record<string, number>;
  /** Sender invocations per channel (1 / average batch size). */
  readonly senderInvocationsPerChannel: number;
  readonly dynamoBreakdownPerChannel: Record<string, number>;
}

export type HappyPathCost = Omit<CostResult, 'retries'>;

export interface CostResult {
  readonly happyPath: {
    readonly email: ChannelCost;
    readonly sms: ChannelCost;
    readonly all: ChannelCost;
    /**
     * SMS-only notices, no delivery reports: a single-channel notice reserves with a plain put,
     * while a notice for both channels reserves them in one transaction (double write units).
     */
    readonly singleSms: ChannelCost;
    /** E-mail-only notices, no delivery reports (the SES emulator publishes no events here). */
    readonly singleEmail?: ChannelCost;
    /**
     * SendMessageBatch requests to the watch queue per channel (docs/table-design.md "Watched
     * rows"), by phase: both channels, SMS only, e-mail only. The watches fire after the phase
     * (INDEX_WATCH_DELAY_MS as deployed, 5 min): their receive, delete and row read are priced
     * from these (bench/cost-model.ts).
     */
    readonly watchSendsPerChannel?: { readonly all: number; readonly sms: number; readonly email: number };
    readonly seconds: number;
    /** Requests naming no channel during the phase (reconciler), and empty long polls. */
    readonly unattributed: Record<string, number>;
    /** stdout bytes (Powertools JSON logs + EMF metrics) per channel: CloudWatch Logs ingestion. */
    readonly logBytesPerChannel: number;
  };
  readonly deliveryReports: {
    readonly sms: number;
    /** Status callbacks Twilio (the simulator) made per SMS: API Gateway requests + Lambda invocations. */
    readonly callbacksPerSms: number;
    readonly dynamoWritesPerSms: number;
    readonly dynamoReadsPerSms: number;
    readonly writeCapacityUnitsPerSms: number;
    readonly readCapacityUnitsPerSms: number;
    readonly logBytesPerSms: number;
  };
  readonly retries: {
    /** CreateSchedule calls per retry whose wait is ≥ 60 s. */
    readonly schedulerCallsPerLongRetry: number;
    /** Scheduler calls per retry under a minute (they ride on SQS DelaySeconds). */
    readonly schedulerCallsPerShortRetry: number;
    /** SendMessageBatch calls per short retry. */
    readonly sqsSendsPerShortRetry: number;
    readonly detail: Record<string, number>;
  };
}

async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  stepMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function channelCost(records: readonly CountedRequest[], channels: number): ChannelCost {
  const per = (x: number) => round(x / channels, 3);
  const dynamo = records.filter((r) => r.service === 'dynamodb');
  const writes = dynamo.filter((r) => DYNAMO_WRITES.has(r.operation));
  const reads = dynamo.filter((r) => !DYNAMO_WRITES.has(r.operation));
  const sum = (rs: readonly CountedRequest[]) => rs.reduce((a, r) => a + (r.capacityUnits ?? 0), 0);
  const count = (rs: readonly CountedRequest[]) => rs.reduce((a, r) => a + (r.share ?? 1), 0);
  const sqs = records.filter((r) => r.service === 'sqs');
  // An empty long poll is the poller idling, paid per minute of wall time, not per message.
  const sqsWork = sqs.filter((r) => r.operation !== 'ReceiveMessage' || (r.messages ?? 0) > 0);
  const sqsBreakdown: Record<string, number> = {};
  for (const r of sqsWork) sqsBreakdown[r.operation] = (sqsBreakdown[r.operation] ?? 0) + 1;
  const dynamoBreakdown: Record<string, number> = {};
  for (const r of dynamo) {
    const key = `${r.operation}:${r.target ?? '?'}`;
    dynamoBreakdown[key] = (dynamoBreakdown[key] ?? 0) + (r.share ?? 1);
  }
  const deletes = sqsBreakdown.DeleteMessageBatch ?? 0;
  return {
    channels,
    dynamoWritesPerChannel: per(count(writes)),
    dynamoReadsPerChannel: per(count(reads)),
    writeCapacityUnitsPerChannel: per(sum(writes)),
    readCapacityUnitsPerChannel: per(sum(reads)),
    sqsRequestsPerChannel: per(sqsWork.length),
    sqsBreakdownPerChannel: Object.fromEntries(Object.entries(sqsBreakdown).map(([k, v]) => [k, per(v)])),
    // Every invocation that succeeded ends in one DeleteMessageBatch (the local event source).
    senderInvocationsPerChannel: per(deletes),
    dynamoBreakdownPerChannel: Object.fromEntries(
      Object.entries(dynamoBreakdown)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, per(v)]),
    ),
  };
}

function records(services: BenchServices, since: number, until: number): CountedRequest[] {
  return [
    ...services.proxies.dynamodb.between(since, until),
    ...services.proxies.sqs.between(since, until),
    ...services.proxies.scheduler.between(since, until),
  ];
}

/**
 * Posts the notices, waits until every row of `channels` is in `state`, and lets the pollers'
 * last DeleteMessageBatch land inside the window: the requests and stdout bytes of the phase.
 */
async function measurePhase(
  options: { readonly stack: StackHandle; readonly services: BenchServices; readonly ddb: DynamoDBClient },
  notices: readonly BenchNotice[],
  channels: readonly ('email' | 'sms')[],
  state: 'accepted' | 'delivered',
  what: string,
): Promise<{ readonly window: CountedRequest[]; readonly logBytes: number; readonly seconds: number }> {
  const { stack, services, ddb } = options;
  const bytesBefore = stack.stdoutBytes();
  const start = Date.now();
  await postBurst(stack.apiUrl, notices);
  const ids = notices.map((x) => x.noticeId);
  await waitFor(
    async () => {
      const byChannel = await Promise.all(channels.map((c) => readLedgerRows(ddb, stack.tableName, ids, c)));
      return byChannel.every(
        (rows) => [...rows.values()].filter((r) => r.state === state).length === ids.length,
      );
    },
    120_000,
    `${what} to be ${state}`,
    500,
  );
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const end = Date.now();
  return {
    window: records(services, start, end),
    logBytes: stack.stdoutBytes() - bytesBefore,
    seconds: (end - start) / 1000,
  };
}

export async function runCostPhases(options: {
  readonly stack: StackHandle;
  readonly services: BenchServices;
  readonly simulator: SmsSimulator;
  readonly ddb: DynamoDBClient;
  readonly notices: number;
  readonly tag: string;
  readonly log: (line: string) => void;
}): Promise<HappyPathCost> {
  const { services, simulator, log } = options;
  services.proxies.dynamodb.consumedCapacity = true;
  try {
    // --- A: happy path, both channels -------------------------------------------------------
    simulator.reset();
    simulator.faults.set({ callbacksEnabled: false, deliveryFailures: [] });
    const a = benchNotices(`${options.tag}a`, options.notices, ['email', 'sms'], 5);
    log(`cost A: happy path, ${a.length} notices × (email, sms)`);
    const phaseA = await measurePhase(options, a, ['email', 'sms'], 'accepted', 'the happy-path notices');
    const windowA = phaseA.window;
    const email = channelCost(
      windowA.filter((r) => r.channel === 'email'),
      a.length,
    );
    const sms = channelCost(
      windowA.filter((r) => r.channel === 'sms'),
      a.length,
    );
    const all = channelCost(
      windowA.filter((r) => r.channel !== undefined),
      2 * a.length,
    );
    const unattributed = countByOperation(
      windowA.filter(
        (r) =>
          (r.channel === undefined && r.queue !== WATCH_QUEUE) ||
          (r.operation === 'ReceiveMessage' && (r.messages ?? 0) === 0),
      ),
    );

    // --- A2: SMS-only notices, no delivery reports: the baseline phase B is compared with -------
    const perPhaseB = Math.max(20, Math.round(options.notices / 2));
    const a2 = benchNotices(`${options.tag}a2`, perPhaseB, ['sms'], 9);
    log(`cost A2: ${a2.length} SMS-only notices, no delivery reports`);
    const phaseA2 = await measurePhase(options, a2, ['sms'], 'accepted', 'the SMS-only notices');
    const singleSms = channelCost(
      phaseA2.window.filter((r) => r.channel === 'sms'),
      a2.length,
    );

    // --- A3: e-mail-only notices ------------------------------------------------------------
    const a3 = benchNotices(`${options.tag}a3`, perPhaseB, ['email'], 10);
    log(`cost A3: ${a3.length} e-mail-only notices, no delivery reports`);
    const phaseA3 = await measurePhase(options, a3, ['email'], 'accepted', 'the e-mail-only notices');
    const singleEmail = channelCost(
      phaseA3.window.filter((r) => r.channel === 'email'),
      a3.length,
    );
    const watchSends = (window: readonly CountedRequest[], channels: number) =>
      round(
        window.filter(
          (r) => r.service === 'sqs' && r.queue === WATCH_QUEUE && r.operation === 'SendMessageBatch',
        ).length / channels,
        3,
      );

    // --- B: SMS with status callbacks --------------------------------------------------------
    simulator.reset();
    simulator.faults.set({ callbacksEnabled: true, deliveryFailures: [] });
    const b = benchNotices(`${options.tag}b`, perPhaseB, ['sms'], 6);
    log(`cost B: ${b.length} SMS with status callbacks`);
    const phaseB = await measurePhase(options, b, ['sms'], 'delivered', 'the callback notices');
    const smsB = channelCost(
      phaseB.window.filter((r) => r.channel === 'sms'),
      b.length,
    );
    const callbacks = simulator.faults.counters.callbacksSent + simulator.faults.counters.callbacksFailed;

    return {
      happyPath: {
        email,
        sms,
        all,
        singleSms,
        singleEmail,
        watchSendsPerChannel: {
          all: watchSends(windowA, 2 * a.length),
          sms: watchSends(phaseA2.window, a2.length),
          email: watchSends(phaseA3.window, a3.length),
        },
        seconds: round(phaseA.seconds),
        unattributed,
        logBytesPerChannel: round(phaseA.logBytes / (2 * a.length), 1),
      },
      deliveryReports: {
        sms: b.length,
        callbacksPerSms: round(callbacks / b.length, 3),
        // Against A2, which differs from B only in the callbacks.
        dynamoWritesPerSms: round(smsB.dynamoWritesPerChannel - singleSms.dynamoWritesPerChannel, 3),
        dynamoReadsPerSms: round(smsB.dynamoReadsPerChannel - singleSms.dynamoReadsPerChannel, 3),
        writeCapacityUnitsPerSms: round(
          smsB.writeCapacityUnitsPerChannel - singleSms.writeCapacityUnitsPerChannel,
          3,
        ),
        readCapacityUnitsPerSms: round(
          smsB.readCapacityUnitsPerChannel - singleSms.readCapacityUnitsPerChannel,
          3,
        ),
        logBytesPerSms: round(phaseB.logBytes / b.length - phaseA2.logBytes / a2.length, 1),
      },
    };
  } finally {
    services.proxies.dynamodb.consumedCapacity = false;
    simulator.reset();
  }
}

/**
 * C: forced retries. Run after the throttle run: the long retry's schedule fires two minutes
 * later, and its send must not land inside another measurement.
 */
export async function runRetryPhase(options: {
  readonly stack: StackHandle;
  readonly services: BenchServices;
  readonly simulator: SmsSimulator;
  readonly ddb: DynamoDBClient;
  readonly tag: string;
  readonly log: (line: string) => void;
}): Promise<CostResult['retries']> {
  const { stack, services, simulator, ddb, log } = options;
  try {
    // --- C: forced retries -------------------------------------------------------------------
    simulator.reset();
    simulator.faults.set({ callbacksEnabled: false, deliveryFailures: [] });
    const [short] = benchNotices(`${options.tag}c1`, 1, ['sms'], 7);
    const [long] = benchNotices(`${options.tag}c2`, 1, ['sms'], 8);
    if (!short || !long) throw new Error('internal: no notice');
    log('cost C: one short retry (503, backoff < 1 s) and one long retry (503, Retry-After 120 s)');
    simulator.faults.set({ failNext: [{ kind: 'status', status: 503 }] });
    const startShort = Date.now();
    await postBurst(stack.apiUrl, [short]);
    await waitFor(
      async () =>
        (await readLedgerRows(ddb, stack.tableName, [short.noticeId], 'sms')).get(short.noticeId)?.state ===
        'accepted',
      30_000,
      'the short retry to be accepted',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const endShort = Date.now();
    simulator.faults.set({ failNext: [{ kind: 'status', status: 503, retryAfterSeconds: 120 }] });
    const startLong = Date.now();
    await postBurst(stack.apiUrl, [long]);
    await waitFor(
      async () =>
        (await readLedgerRows(ddb, stack.tableName, [long.noticeId], 'sms')).get(long.noticeId)?.state ===
        'retry_scheduled',
      30_000,
      'the long retry to be scheduled',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const endLong = Date.now();
    const shortWindow = records(services, startShort, endShort);
    const longWindow = records(services, startLong, endLong);
    const sends = (rs: readonly CountedRequest[]) =>
      rs.filter((r) => r.service === 'sqs' && r.operation === 'SendMessageBatch' && r.channel === 'sms')
        .length;
    const scheduled = (rs: readonly CountedRequest[]) =>
      rs.filter((r) => r.service === 'scheduler' && r.operation === 'CreateSchedule').length;

    return {
      schedulerCallsPerLongRetry: scheduled(longWindow),
      schedulerCallsPerShortRetry: scheduled(shortWindow),
      // Intake sent one; the retry the rest.
      sqsSendsPerShortRetry: sends(shortWindow) - 1,
      detail: {
        shortRetrySqsSends: sends(shortWindow),
        longRetrySqsSends: sends(longWindow),
        shortRetrySchedulerCalls: scheduled(shortWindow),
        longRetrySchedulerCalls: scheduled(longWindow),
      },
    };
  } finally {
    simulator.reset();
  }
}
