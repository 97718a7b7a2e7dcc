/**
 * Infrastructure cost per million notices (USD, provider fees excluded) from the measured request
 * counts and sizes, at AWS list prices (us-east-1, after free tiers; checked 2026-12; DynamoDB
 * requests in the deployment's capacity mode, `tableCapacity`: provisioned at an assumed
 * utilisation by default, on demand as the alternative):
 *
 *   - the stack's requests, counted on the wire by `npm run bench` (bench/cost-run.ts: `CostResult`);
 *   - each row's whole life through the use cases against DynamoDB Local, the final report
 *     included, with the item and archive line sizes of those rows (bench/measure-happy-path.ts:
 *     `lifecycle`, one run per notice kind).
 *
 * `perMillion(inputs)` gives, per notice kind (`sms`, `email`, `emailAndSms`), every line with the
 * counts it was computed from and whether each is measured, derived or assumed; `npm run bench`
 * writes its totals as `cost.perMillion` into bench/results/latest.json and
 * `npx tsx bench/cost-model.ts [results.json]` prints the tables docs/cost.md is written from.
 * Lambda durations cannot be measured on the local stack (DynamoDB Local and the simulators are
 * not AWS latencies): they are stated per request.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { CapacityMode } from '../lambdas/contract/table-capacity.ts';
import { DEPLOYMENT_ONLY_DEFAULTS } from '../lib/config.ts';
import type { CostResult } from './cost-run.ts';
import type { HappyPathCost as Lifecycle } from './measure-happy-path.ts';

export const PRICES = {
  /** DynamoDB Standard on-demand, per write / read request unit (since the November 2024 cut). */
  dynamoWriteRequestUnit: 0.625e-6,
  dynamoReadRequestUnit: 0.125e-6,
  /** DynamoDB Standard storage and continuous backups (PITR), per GB-month (first 25 GB free: ignored). */
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  /** DynamoDB Standard-IA table class: storage, and request units at 1.25 × Standard. */
  dynamoIaStorageGbMonth: 0.1,
  dynamoIaWriteRequestUnit: 0.78125e-6,
  dynamoIaReadRequestUnit: 0.15625e-6,
  /**
   * DynamoDB provisioned capacity, per capacity-unit-hour (us-east-1): Standard WCU and RCU, and
   * Standard-IA's (1.25 ×). One unit serves one request unit per second (a strongly consistent
   * read of up to 4 KB, a write of up to 1 KB), so at utilisation u a request unit costs
   * price ÷ (3600 × u): {@link requestUnitPrice}.
   */
  dynamoWcuHour: 0.00065,
  dynamoRcuHour: 0.00013,
  dynamoIaWcuHour: 0.00081,
  dynamoIaRcuHour: 0.00016,
  /** DynamoDB Streams: GetRecords by a Lambda event source is free; TTL deletions are free. */
  dynamoStreamReadByLambda: 0,
  /** SQS standard queue, per request (64 KB chunk). */
  sqsRequest: 0.4e-6,
  /** Lambda on Arm (Graviton), per GB-second and per request (a function URL costs nothing more). */
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2e-6,
  /** API Gateway HTTP API, per request (512 KB increments), first 300 M a month. */
  httpApiRequest: 1.0e-6,
  /** EventBridge Scheduler, per scheduled invocation (after 14 M free a month); API calls are free. */
  schedulerInvocation: 1.0e-6,
  /** CloudWatch Logs ingestion (standard class), per GB. */
  logsIngestGb: 0.5,
  /** S3 Glacier Instant Retrieval: storage per GB-month, PUT and GET/HEAD per request; 128 KB billed at least per object. */
  glacierIrStorageGbMonth: 0.004,
  glacierIrPutRequest: 0.02e-3,
  glacierIrGetRequest: 0.01e-3,
  glacierIrMinObjectBytes: 128 * 1024,
  /** S3 Standard: storage per GB-month, PUT and GET/HEAD per request (the "read the archive" key objects). */
  s3StandardStorageGbMonth: 0.023,
  s3StandardPutRequest: 0.005e-3,
  s3StandardGetRequest: 0.0004e-3,
  /** S3 Object Lock: no charge of its own. SES and AWS service events to EventBridge's default bus: free. */
  objectLock: 0,
} as const;

export const ASSUMPTIONS = {
  /** How the tables are billed: the deployment's default `tableCapacity.mode` (lib/config.ts). */
  tableCapacityMode: DEPLOYMENT_ONLY_DEFAULTS.tableCapacity.mode as CapacityMode,
  /**
   * ASSUMPTION: provisioned capacity is consumed at auto scaling's target utilisation (the
   * default `tableCapacity.targetUtilizationPercent`, lib/config.ts), on average over the month.
   * Quiet hours below the minimum capacity and the minutes scaling lags a fall cost more per
   * request; the idle minimum is priced apart (docs/cost.md "Idle").
   */
  provisionedUtilization: DEPLOYMENT_ONLY_DEFAULTS.tableCapacity.targetUtilizationPercent / 100,
  /** Function memory (lib/config.ts `memorySize`), but the provider-events function's (`memorySizes`). */
  lambdaMemoryGb: DEPLOYMENT_ONLY_DEFAULTS.memorySize / 1024,
  providerEventsMemoryGb:
    (DEPLOYMENT_ONLY_DEFAULTS.memorySizes.providerEvents ?? DEPLOYMENT_ONLY_DEFAULTS.memorySize) / 1024,
  /** Intake in batches of 100 notices per `POST /v1/notices/batch`. */
  noticesPerApiRequest: 100,
  /** Intake function billed time per batch of 100 (ten in parallel). */
  intakeMsPerRequest: 250,
  /**
   * Sender billed time per channel: the scale simulation's busy time (34 890 s for 10^6 SMS with
   * backlog and pacing) ≈ 35 ms.
   */
  senderMsPerChannel: 35,
  /**
   * Provider-event function billed time per event (a signature check, one GetItem, at most one
   * UpdateItem): 20 ms at 512 MB; at its 256 MB, 25 ms (the two DynamoDB round trips do not slow
   * with less CPU; parsing and HMAC, a few ms, do).
   */
  eventMsPerEvent: 25,
  /**
   * SES events per delivered e-mail: DELIVERY alone (EventBridge, free), one invocation of the
   * provider-events function reading and writing the row. The configuration set publishes no
   * SEND (lambdas/providers/ses/descriptor.ts SES_PUBLISHED_EVENTS): it proved only what
   * SendEmail's answer had, for one more invocation and read per e-mail.
   */
  sesEventsPerEmail: 1,
  /**
   * Lambda's START / END / REPORT lines per invocation: none where the functions log with the
   * advanced logging controls (system log level WARN, lib/constructs/function-logging.ts), as in
   * us-east-1, the Region priced here. About 300 B in AWS GovCloud (US), which has no JSON log
   * format (+$0.3 per million SMS).
   */
  platformLogBytesPerInvocation: 0,
  /** The watch's event source: up to 10 messages per ReceiveMessage and per DeleteMessageBatch, 100 per invocation. */
  watchMessagesPerSqsRequest: 10,
  watchPerInvocation: 100,
  watchMsPerInvocation: 100,
  /** DynamoDB bills 100 bytes of overhead per stored item. */
  itemOverheadBytes: 100,
  /**
   * Key-table buckets (KEY_BUCKET_CHARS sized to the volume, docs/archive.md "Key records") fill to
   * about 1 KB at the steady state (records expiring as many as arrive): one write unit a record,
   * half a read unit a look-up; a bucket's own bytes (its key `b` of 5 characters, the TTL `t`)
   * and the 100 B overhead are shared by its records.
   */
  keyBucketBytes: 1024,
  keyBucketOwnBytes: 13,
  /** A record in an item of its own (the alternatives below): its notice id and channel as keys (`n`, `c`). */
  keyRecordKeyBytes: 31 + 6,
  /** `HOT_RETENTION` (P35D): a resolved row leaves the table through TTL 35 days after resolution. */
  hotRetentionDays: 35,
  /** `ARCHIVE_RETENTION_YEARS`: Object Lock keeps the archive, and key records live as long. */
  archiveRetentionYears: 6,
  /**
   * The archiver's event source (lib/constructs/ledger-archiver.ts ARCHIVER_STREAM): up to 10 000
   * records, capped first by Lambda's 6 MB payload; a stream record carries the row's new and old
   * images (about twice the row's bytes as DynamoDB JSON) plus some 400 B of keys and metadata.
   * At volume every batch is full; its billed time grows with its records (2 ms each).
   */
  archiverBatchMaxRecords: 10_000,
  archiverPayloadBytes: 6 * 1024 * 1024,
  streamRecordOverheadBytes: 400,
  archiverMsPerRecord: 2,
  /** Per batch the archiver writes two objects (facts/, rows/), each after one HeadObject. */
  archiveObjectsPerBatch: 2,
  /**
   * Stream records per channel beyond its writes: the TTL removal after the hot window (key
   * records are in a table of their own, without a stream).
   */
  streamRecordsBeyondWrites: 1,
} as const;

export type Basis = 'measured' | 'derived' | 'assumed';

export interface CostLine {
  readonly service: string;
  readonly what: string;
  readonly usdPerMillion: number;
  readonly basis: Basis;
}

export type NoticeKind = 'sms' | 'email' | 'emailAndSms';
export const NOTICE_KINDS: readonly NoticeKind[] = ['sms', 'email', 'emailAndSms'];

/** What the model is computed from: the stack's counts, and each kind's whole life. */
export interface CostInputs {
  readonly stack: CostResult;
  readonly lifecycle: Readonly<Record<NoticeKind, Lifecycle>>;
}

export interface KindCost {
  readonly lines: readonly CostLine[];
  readonly total: number;
}

const M = 1_000_000;

type RequestUnit = 'write' | 'read';
type TableClass = 'standard' | 'infrequent-access';

/**
 * What one DynamoDB request unit costs in `mode`: on demand its request price; provisioned, the
 * unit-hour price spread over the requests a unit serves in an hour at the assumed utilisation.
 */
export function requestUnitPrice(unit: RequestUnit, tableClass: TableClass, mode: CapacityMode): number {
  const ia = tableClass === 'infrequent-access';
  if (mode === 'on-demand') {
    if (unit === 'write') return ia ? PRICES.dynamoIaWriteRequestUnit : PRICES.dynamoWriteRequestUnit;
    return ia ? PRICES.dynamoIaReadRequestUnit : PRICES.dynamoReadRequestUnit;
  }
  const hourly =
    unit === 'write'
      ? ia
        ? PRICES.dynamoIaWcuHour
        : PRICES.dynamoWcuHour
      : ia
        ? PRICES.dynamoIaRcuHour
        : PRICES.dynamoRcuHour;
  return hourly / (3600 * ASSUMPTIONS.provisionedUtilization);
}

/** How a DynamoDB line says which capacity mode priced it. */
function priced(mode: CapacityMode): string {
  return mode === 'on-demand'
    ? '[on-demand]'
    : `[provisioned, ${Math.round(ASSUMPTIONS.provisionedUtilization * 100)} % utilisation assumed]`;
}
const gbs = (ms: number, memoryGb: number = ASSUMPTIONS.lambdaMemoryGb) => (ms / 1000) * memoryGb;
const invocation = (ms: number, memoryGb?: number) =>
  PRICES.lambdaRequest + gbs(ms, memoryGb) * PRICES.lambdaArmGbSecond;
const logsUsd = (bytes: number) => (bytes / 1024 ** 3) * PRICES.logsIngestGb;
const r = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
/** Stored bytes × months → GB-months (GiB, as AWS bills). */
const gbMonths = (bytes: number, months: number) => (bytes / 1024 ** 3) * months;

/**
 * Where key records live: the design (`key-table`: packed into buckets of a Standard-IA table of
 * their own without PITR, lib/constructs/key-table.ts) and the alternatives priced beside it
 * (docs/cost.md "Replays after the hot window"): the same table with an item per record (the
 * design before buckets), items in the ledger table (Standard, with PITR: the first design), an S3
 * object per notice, or none (what the rest costs).
 */
export type KeyRecordChoice =
  | 'key-table'
  | 'key-table-item-per-record'
  | 'in-ledger-table'
  | 's3-key-objects'
  | 'none';

/** The per-million lines of one notice kind, and their total. */
export function kindCost(
  inputs: CostInputs,
  kind: NoticeKind,
  keyRecords: KeyRecordChoice = 'key-table',
  capacity: CapacityMode = ASSUMPTIONS.tableCapacityMode,
): KindCost {
  const unit = (u: RequestUnit, tableClass: TableClass = 'standard') =>
    requestUnitPrice(u, tableClass, capacity);
  const mode = priced(capacity);
  const { stack } = inputs;
  const life = inputs.lifecycle[kind];
  const hp = stack.happyPath;
  const channels = kind === 'emailAndSms' ? 2 : 1;
  const sms = kind !== 'email';
  const email = kind !== 'sms';
  // The stack's counts for this kind of notice (to `accepted`: the reports are added below).
  const counted = kind === 'sms' ? hp.singleSms : kind === 'email' ? (hp.singleEmail ?? hp.email) : hp.all;
  const watchSends =
    hp.watchSendsPerChannel?.[kind === 'sms' ? 'sms' : kind === 'email' ? 'email' : 'all'] ?? 0;
  const dr = stack.deliveryReports;
  const lines: CostLine[] = [];
  const add = (service: string, what: string, usdPerMillion: number, basis: Basis) =>
    lines.push({ service, what, usdPerMillion, basis });

  // Intake: the API and its function, batches of 100.
  const apiRequests = 1 / ASSUMPTIONS.noticesPerApiRequest;
  add(
    'API Gateway (HTTP)',
    `intake: ${r(apiRequests)} requests per notice (batches of 100)`,
    M * apiRequests * PRICES.httpApiRequest,
    'assumed',
  );
  add(
    'Lambda',
    `intake function: ${r(apiRequests)} invocations per notice × ${ASSUMPTIONS.intakeMsPerRequest} ms`,
    M * apiRequests * invocation(ASSUMPTIONS.intakeMsPerRequest),
    'assumed',
  );

  // The ledger: every write of the row's life, indexes included, and every read.
  const reportWcu = (sms ? dr.writeCapacityUnitsPerSms : 0) + (email ? dr.writeCapacityUnitsPerSms : 0);
  const reportRru =
    (sms ? dr.readCapacityUnitsPerSms : 0) +
    (email ? ASSUMPTIONS.sesEventsPerEmail * (dr.readCapacityUnitsPerSms / dr.callbacksPerSms) : 0);
  const wcu = channels * counted.writeCapacityUnitsPerChannel + reportWcu;
  const rru = channels * counted.readCapacityUnitsPerChannel + reportRru;
  add(
    'DynamoDB',
    `ledger writes: ${r(wcu / channels, 2)} WRU per channel (reserve, claim, outcome ${r(counted.writeCapacityUnitsPerChannel, 2)} + final report ${r(reportWcu / channels, 2)}; lifecycle run: ${life.writeCapacityUnitsPerChannel}) ${mode}`,
    M * wcu * unit('write'),
    'measured',
  );
  add(
    'DynamoDB',
    `ledger reads: ${r(rru / channels, 2)} RRU per channel (row, suppression, gate; each report reads the row) ${mode}`,
    M * rru * unit('read'),
    email ? 'derived' : 'measured',
  );

  // The channel queues and the senders.
  add(
    'SQS',
    `channel queues: ${counted.sqsRequestsPerChannel} requests per channel (send at intake, receive, delete)`,
    M * channels * counted.sqsRequestsPerChannel * PRICES.sqsRequest,
    'measured',
  );
  add(
    'Lambda',
    `senders: ${counted.senderInvocationsPerChannel} invocations per channel, ${ASSUMPTIONS.senderMsPerChannel} ms billed per channel`,
    M *
      channels *
      (counted.senderInvocationsPerChannel * PRICES.lambdaRequest +
        gbs(ASSUMPTIONS.senderMsPerChannel) * PRICES.lambdaArmGbSecond),
    'assumed',
  );

  // The watch (docs/table-design.md "Watched rows"): sent at intake, received and read later.
  const watchConsumerRequests = 2 / ASSUMPTIONS.watchMessagesPerSqsRequest;
  add(
    'SQS',
    `watches: ${watchSends} SendMessageBatch per channel measured, + ${r(watchConsumerRequests)} (receive, delete) derived`,
    M * channels * (watchSends + watchConsumerRequests) * PRICES.sqsRequest,
    'derived',
  );
  add(
    'Lambda + DynamoDB',
    `watch: ${r(1 / ASSUMPTIONS.watchPerInvocation)} invocations × ${ASSUMPTIONS.watchMsPerInvocation} ms and 0.5 RRU (one eventually consistent read) per channel ${mode}`,
    M *
      channels *
      (invocation(ASSUMPTIONS.watchMsPerInvocation) / ASSUMPTIONS.watchPerInvocation + 0.5 * unit('read')),
    'derived',
  );

  // Delivery reports: Twilio's status callbacks, SES's events.
  const callbacks = sms ? dr.callbacksPerSms : 0;
  const sesEvents = email ? ASSUMPTIONS.sesEventsPerEmail : 0;
  const reportEvents = callbacks + sesEvents;
  // The callbacks reach the provider-events function at its own URL (us-east-1, the Region priced
  // here): Lambda's invocation only, no API Gateway request. In AWS GovCloud (US) and the other
  // Regions without function URLs (lib/providers/webhook-ingress.ts) they take the API's webhook
  // route instead, which adds PRICES.httpApiRequest per callback ($2 per million SMS).
  add(
    'Lambda',
    `delivery reports: ${callbacks} Twilio status callbacks (function URL) + ${sesEvents} SES event${sesEvents === 1 ? '' : 's'} (EventBridge, free), ${ASSUMPTIONS.eventMsPerEvent} ms each at ${ASSUMPTIONS.providerEventsMemoryGb * 1024} MB`,
    M * reportEvents * invocation(ASSUMPTIONS.eventMsPerEvent, ASSUMPTIONS.providerEventsMemoryGb),
    sms ? 'measured' : 'derived',
  );

  // Logs: what the functions print per channel and per report, and Lambda's own lines.
  const invocations =
    apiRequests +
    channels * counted.senderInvocationsPerChannel +
    channels / ASSUMPTIONS.watchPerInvocation +
    reportEvents;
  const reportLogBytes =
    (sms ? dr.logBytesPerSms : 0) +
    (email ? (ASSUMPTIONS.sesEventsPerEmail * dr.logBytesPerSms) / dr.callbacksPerSms : 0);
  const logBytes = channels * hp.logBytesPerChannel + reportLogBytes;
  add(
    'CloudWatch Logs',
    `${r(logBytes, 0)} B of JSON logs + EMF per notice (${hp.logBytesPerChannel} per channel, ${r(reportLogBytes, 0)} for the reports) + ${ASSUMPTIONS.platformLogBytesPerInvocation} B of Lambda's own lines per invocation (${r(invocations, 2)}; system log level WARN)`,
    M * logsUsd(logBytes + invocations * ASSUMPTIONS.platformLogBytesPerInvocation),
    'measured',
  );

  // The hot table: each row for HOT_RETENTION after it resolved, with PITR.
  const rowBytes = (['email', 'sms'] as const)
    .filter((c) => (c === 'sms' ? sms : email))
    .reduce((n, c) => n + life.rowBytes[c].accepted + ASSUMPTIONS.itemOverheadBytes, 0);
  const hotMonths = ASSUMPTIONS.hotRetentionDays / 30.4;
  add(
    'DynamoDB',
    `hot table: ${r(rowBytes / channels, 0)} B per row (+ 100 B overhead) for ${ASSUMPTIONS.hotRetentionDays} days, storage + PITR`,
    M * gbMonths(rowBytes, hotMonths) * (PRICES.dynamoStorageGbMonth + PRICES.dynamoPitrGbMonth),
    'measured',
  );

  // The archive: the stream (free to Lambda), the archiver, the objects, six years of GLACIER_IR.
  const archive = life.archive;
  if (!archive) throw new Error(`the ${kind} lifecycle run has no archive sizes (run it with report)`);
  const recordsPerChannel = life.writesPerChannel + ASSUMPTIONS.streamRecordsBeyondWrites;
  const streamRecordBytes = (2 * rowBytes) / channels + ASSUMPTIONS.streamRecordOverheadBytes;
  const batchRecords = Math.min(
    ASSUMPTIONS.archiverBatchMaxRecords,
    Math.floor(ASSUMPTIONS.archiverPayloadBytes / streamRecordBytes),
  );
  const channelsPerBatch = batchRecords / recordsPerChannel;
  const archiverMsPerBatch = batchRecords * ASSUMPTIONS.archiverMsPerRecord;
  const factBytesPerChannel = archive.factLinesPerRow * archive.factLineGzBytes;
  const rowObjectBytesPerChannel = archive.rowLineGzBytes;
  const billed = (bytesPerChannel: number) =>
    Math.max(bytesPerChannel * channelsPerBatch, PRICES.glacierIrMinObjectBytes) / channelsPerBatch;
  const archivedBytes = billed(factBytesPerChannel) + billed(rowObjectBytesPerChannel);
  const archiveMonths = 12 * ASSUMPTIONS.archiveRetentionYears;
  add(
    'DynamoDB Streams',
    `${r(recordsPerChannel, 1)} stream records per channel (writes, TTL removal) read by the archiver: free for Lambda`,
    0,
    'measured',
  );
  const batchesPerChannel = 1 / channelsPerBatch;
  add(
    'Lambda',
    `archiver: ${r(batchesPerChannel, 4)} invocations per channel (batches of ${batchRecords} records of ~${r(streamRecordBytes, 0)} B: the 6 MB payload) × ${archiverMsPerBatch} ms`,
    M * channels * batchesPerChannel * invocation(archiverMsPerBatch),
    'assumed',
  );
  add(
    'S3',
    `archive requests: ${ASSUMPTIONS.archiveObjectsPerBatch} PutObject (GLACIER_IR) + ${ASSUMPTIONS.archiveObjectsPerBatch} HeadObject per batch, ${r(channelsPerBatch, 0)} channels per batch`,
    M *
      channels *
      batchesPerChannel *
      ASSUMPTIONS.archiveObjectsPerBatch *
      (PRICES.glacierIrPutRequest + PRICES.glacierIrGetRequest),
    'derived',
  );
  add(
    'S3',
    `archive storage: GLACIER_IR ${ASSUMPTIONS.archiveRetentionYears} years, ${archive.factLinesPerRow} fact lines × ${archive.factLineGzBytes} B + 1 row line × ${archive.rowLineGzBytes} B gzip'd per channel (${r(archivedBytes, 0)} B billed: 128 KB minimum per object); Object Lock free`,
    M * channels * gbMonths(archivedBytes, archiveMonths) * PRICES.glacierIrStorageGbMonth,
    'measured',
  );

  // Replays after the hot window: key records as designed, or an alternative.
  const recordBytes = archive.keyRecordBytes;
  const perBucket = Math.floor(
    (ASSUMPTIONS.keyBucketBytes - ASSUMPTIONS.keyBucketOwnBytes) / Math.max(1, recordBytes),
  );
  const bucketShare = (ASSUMPTIONS.itemOverheadBytes + ASSUMPTIONS.keyBucketOwnBytes) / perBucket;
  const keyBytes = recordBytes + ASSUMPTIONS.keyRecordKeyBytes + ASSUMPTIONS.itemOverheadBytes;
  switch (keyRecords) {
    case 'key-table':
      add(
        'DynamoDB',
        `key table (Standard-IA, no PITR: rebuilt from the archive's rows/ objects), records packed ${perBucket} to a 1 KB bucket: 1 WRU per channel at resolution, ${recordBytes} B per record + ${r(bucketShare, 1)} B of its bucket (key, TTL, 100 B overhead) for ${ASSUMPTIONS.archiveRetentionYears} years, 0.5 RRU intake GetItem per notice ${mode}`,
        M *
          (channels * unit('write', 'infrequent-access') +
            channels * gbMonths(recordBytes + bucketShare, archiveMonths) * PRICES.dynamoIaStorageGbMonth +
            0.5 * unit('read', 'infrequent-access')),
        'measured',
      );
      break;
    case 'key-table-item-per-record':
      add(
        'DynamoDB',
        `key table, an item per record: 1 WRU per channel, ${keyBytes} B per item (${recordBytes} B + ${ASSUMPTIONS.keyRecordKeyBytes} B of keys + 100 B overhead) for ${ASSUMPTIONS.archiveRetentionYears} years, 0.5 RRU per notice ${mode}`,
        M *
          (channels * unit('write', 'infrequent-access') +
            channels * gbMonths(keyBytes, archiveMonths) * PRICES.dynamoIaStorageGbMonth +
            0.5 * unit('read', 'infrequent-access')),
        'derived',
      );
      break;
    case 'in-ledger-table':
      add(
        'DynamoDB',
        `key records in the ledger table (Standard, with PITR): 1 WRU per channel, ${keyBytes} B ${ASSUMPTIONS.archiveRetentionYears} years, 0.5 RRU per notice ${mode}`,
        M *
          (channels * unit('write') +
            channels *
              gbMonths(keyBytes, archiveMonths) *
              (PRICES.dynamoStorageGbMonth + PRICES.dynamoPitrGbMonth) +
            0.5 * unit('read')),
        'derived',
      );
      break;
    case 's3-key-objects':
      add(
        'S3',
        `"read the archive": one S3 Standard object per notice (keys/<noticeId>, the key records' content) written at resolution, one HeadObject at intake per notice, ${ASSUMPTIONS.archiveRetentionYears} years`,
        M *
          (PRICES.s3StandardPutRequest +
            PRICES.s3StandardGetRequest +
            gbMonths(channels * archive.keyRecordBytes, archiveMonths) * PRICES.s3StandardStorageGbMonth),
        'derived',
      );
      break;
    case 'none':
      break;
  }

  return { lines, total: lines.reduce((a, l) => a + l.usdPerMillion, 0) };
}

/** USD per million notices of each kind, as `npm run bench` writes it (`cost.perMillion`). */
export function perMillion(
  inputs: CostInputs,
  keyRecords: KeyRecordChoice = 'key-table',
  capacity: CapacityMode = ASSUMPTIONS.tableCapacityMode,
): Record<NoticeKind, number> {
  return Object.fromEntries(
    NOTICE_KINDS.map((kind) => [
      kind,
      Math.round(kindCost(inputs, kind, keyRecords, capacity).total * 100) / 100,
    ]),
  ) as Record<NoticeKind, number>;
}

/** What a retry adds, per million retries. */
export function retryCostPerMillion(
  cost: CostResult,
  capacity: CapacityMode = ASSUMPTIONS.tableCapacityMode,
): { short: number; long: number } {
  // A retry is one outcome write more, one claim and outcome more on the next attempt (a row off
  // the happy path is in the open index: 2 WRU each), reads again.
  const dynamo =
    6 * requestUnitPrice('write', 'standard', capacity) +
    2.4 * requestUnitPrice('read', 'standard', capacity);
  const sqsForMessage = (cost.retries.sqsSendsPerShortRetry + 0.35) * PRICES.sqsRequest;
  return {
    short: M * (dynamo + sqsForMessage),
    long:
      M *
      (dynamo +
        cost.retries.schedulerCallsPerLongRetry * PRICES.schedulerInvocation +
        0.35 * PRICES.sqsRequest),
  };
}

export function costTable(inputs: CostInputs, kind: NoticeKind, keyRecords?: KeyRecordChoice): string {
  const { lines, total } = kindCost(inputs, kind, keyRecords);
  return [
    '| service | what | USD per 10^6 | basis |',
    '| --- | --- | ---: | --- |',
    ...lines.map((l) => `| ${l.service} | ${l.what} | ${l.usdPerMillion.toFixed(2)} | ${l.basis} |`),
    `| **total** | ${kind} | **${total.toFixed(2)}** | |`,
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2] ?? fileURLToPath(new URL('./results/latest.json', import.meta.url));
  const results = JSON.parse(await readFile(file, 'utf8')) as {
    cost?: { detail: CostResult; lifecycle?: CostInputs['lifecycle'] };
  };
  if (!results.cost?.lifecycle)
    throw new Error(`${file} has no cost section with lifecycle runs (npm run bench)`);
  const inputs: CostInputs = { stack: results.cost.detail, lifecycle: results.cost.lifecycle };
  for (const kind of NOTICE_KINDS) process.stdout.write(`${kind}:\n\n${costTable(inputs, kind)}\n\n`);
  for (const choice of [
    'key-table',
    'key-table-item-per-record',
    'in-ledger-table',
    's3-key-objects',
    'none',
  ] as const) {
    process.stdout.write(`key records: ${choice}: ${JSON.stringify(perMillion(inputs, choice))}\n`);
  }
  for (const mode of ['provisioned', 'on-demand'] as const) {
    process.stdout.write(`tables ${mode}: ${JSON.stringify(perMillion(inputs, 'key-table', mode))}\n`);
  }
  const retry = retryCostPerMillion(inputs.stack);
  process.stdout.write(
    `Per million retries: short (SQS delay) ${retry.short.toFixed(2)} USD, long (Scheduler) ${retry.long.toFixed(2)} USD\n`,
  );
}
