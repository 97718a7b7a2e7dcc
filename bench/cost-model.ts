/**
 * Infrastructure cost per million notices from the measured request counts (bench/run.ts →
 * `cost`) and AWS list prices (us-east-1, on-demand, after free tiers; checked 2026-11).
 * Provider fees (Twilio per segment, SES per e-mail) are not included: they are listed apart
 * in docs/cost.md. `npx tsx bench/cost-model.ts [results.json]` prints the table.
 *
 * What is measured and what is assumed is said per line; Lambda durations cannot be measured on
 * the local stack (DynamoDB Local and the simulators are not AWS latencies), so they come from
 * the stated per-request latencies or from the scale simulation's billed busy time.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { CostResult } from './cost-run.ts';

export const PRICES = {
  /** DynamoDB on-demand, per write / read request unit (since the November 2024 reduction). */
  dynamoWriteRequestUnit: 0.625e-6,
  dynamoReadRequestUnit: 0.125e-6,
  /** DynamoDB Standard table class storage, per GB-month; continuous backups (PITR) per GB-month. */
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  /** SQS standard queue, per request (64 KB chunk). */
  sqsRequest: 0.4e-6,
  /** Lambda on Arm (Graviton), per GB-second and per request. */
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2e-6,
  /** API Gateway HTTP API, per request (512 KB increments), first 300 M a month. */
  httpApiRequest: 1.0e-6,
  /** EventBridge Scheduler, per scheduled invocation (after 14 M free a month); API calls are free. */
  schedulerInvocation: 1.0e-6,
  /** CloudWatch Logs ingestion (standard class), per GB. */
  logsIngestGb: 0.5,
} as const;

export const ASSUMPTIONS = {
  /** Function memory (lib/config.ts `memorySize`). */
  lambdaMemoryGb: 0.5,
  /** Intake: one `POST /v1/notices` per notice (worst case) or batches of 100. */
  noticesPerApiRequest: { single: 1, batch: 100 },
  /** Intake function billed time: ≈ 25 ms per notice alone; ≈ 250 ms per batch of 100 (10 in parallel). */
  intakeMsPerRequest: { single: 25, batch: 250 },
  /**
   * Sender billed time per channel: the scale simulation's busy time (34 890 s for 10^6 SMS with
   * backlog and pacing) ≈ 35 ms; without backlog, a batch waits on its slowest provider call.
   */
  senderMsPerChannel: 35,
  /** Provider-event function billed time per event (one GetItem, at most one UpdateItem). */
  eventMsPerEvent: 20,
  /** Lambda START / END / REPORT lines per invocation. */
  platformLogBytesPerInvocation: 300,
  /** A terminal intent item (envelope removed): under 1 KB. */
  itemKb: 1,
  /** lib/config.ts `ledgerRetentionDays`. */
  retentionDays: 400,
} as const;

export interface CostLine {
  readonly service: string;
  readonly what: string;
  readonly usdPerMillion: number;
  readonly basis: 'measured' | 'measured + derived' | 'measured + assumed duration' | 'assumed';
}

/** USD per million single-channel notices (one SMS, or one e-mail), line by line. */
export function costPerMillion(cost: CostResult, intake: 'single' | 'batch' = 'batch'): CostLine[] {
  const m = 1_000_000;
  const hp = cost.happyPath.all;
  // Results from before the single-channel phase existed measured notices for both channels.
  const one = cost.happyPath.singleSms ?? hp;
  const sqsSingle =
    Math.round((hp.sqsRequestsPerChannel - (hp.sqsBreakdownPerChannel.SendMessageBatch ?? 0) + 1) * 1000) /
    1000;
  const dr = cost.deliveryReports;
  const perRequest = ASSUMPTIONS.noticesPerApiRequest[intake];
  const gbs = (ms: number) => (ms / 1000) * ASSUMPTIONS.lambdaMemoryGb;
  const intakeInvocations = m / perRequest;
  const senderInvocations = m * hp.senderInvocationsPerChannel;
  const callbacks = m * dr.callbacksPerSms;
  const retainedMonths = ASSUMPTIONS.retentionDays / 30.4;
  const storageGb = (m * ASSUMPTIONS.itemKb) / 1024 / 1024;
  return [
    {
      service: 'API Gateway (HTTP)',
      what: `intake: ${perRequest} notice(s) per request`,
      usdPerMillion: intakeInvocations * PRICES.httpApiRequest,
      basis: 'assumed',
    },
    {
      service: 'Lambda',
      what: 'intake function',
      usdPerMillion:
        intakeInvocations *
        (PRICES.lambdaRequest + gbs(ASSUMPTIONS.intakeMsPerRequest[intake]) * PRICES.lambdaArmGbSecond),
      basis: 'assumed',
    },
    {
      service: 'DynamoDB',
      what: `${one.writeCapacityUnitsPerChannel} WRU + ${one.readCapacityUnitsPerChannel} RRU per single-channel notice (reserve, claim, outcome; row, suppression, gate reads)`,
      usdPerMillion:
        m *
        (one.writeCapacityUnitsPerChannel * PRICES.dynamoWriteRequestUnit +
          one.readCapacityUnitsPerChannel * PRICES.dynamoReadRequestUnit),
      basis: 'measured',
    },
    intake === 'batch'
      ? {
          service: 'SQS',
          what: `${hp.sqsRequestsPerChannel} requests per channel (send at intake, receive, delete)`,
          usdPerMillion: m * hp.sqsRequestsPerChannel * PRICES.sqsRequest,
          basis: 'measured',
        }
      : {
          // A batch sends ten references per request; a lone notice sends its own.
          service: 'SQS',
          what: `${sqsSingle} requests per channel (1 send at intake, receive and delete as measured)`,
          usdPerMillion: m * sqsSingle * PRICES.sqsRequest,
          basis: 'measured + derived',
        },
    {
      service: 'Lambda',
      what: `sender: ${hp.senderInvocationsPerChannel} invocations per channel, ${ASSUMPTIONS.senderMsPerChannel} ms billed per channel`,
      usdPerMillion:
        senderInvocations * PRICES.lambdaRequest +
        m * gbs(ASSUMPTIONS.senderMsPerChannel) * PRICES.lambdaArmGbSecond,
      basis: 'measured + assumed duration',
    },
    {
      service: 'CloudWatch Logs',
      what: `${cost.happyPath.logBytesPerChannel} B of JSON logs + EMF per channel, plus platform lines`,
      usdPerMillion:
        ((m * cost.happyPath.logBytesPerChannel +
          (senderInvocations + intakeInvocations) * ASSUMPTIONS.platformLogBytesPerInvocation) /
          1024 ** 3) *
        PRICES.logsIngestGb,
      basis: 'measured',
    },
    {
      service: 'API Gateway (HTTP)',
      what: `delivery reports: ${dr.callbacksPerSms} Twilio status callbacks per SMS`,
      usdPerMillion: callbacks * PRICES.httpApiRequest,
      basis: 'measured',
    },
    {
      service: 'Lambda',
      what: 'delivery reports: one invocation per callback',
      usdPerMillion:
        callbacks * (PRICES.lambdaRequest + gbs(ASSUMPTIONS.eventMsPerEvent) * PRICES.lambdaArmGbSecond),
      basis: 'measured + assumed duration',
    },
    {
      service: 'DynamoDB',
      what: `delivery reports: ${dr.writeCapacityUnitsPerSms} WRU + ${dr.readCapacityUnitsPerSms} RRU per SMS`,
      usdPerMillion:
        m *
        (dr.writeCapacityUnitsPerSms * PRICES.dynamoWriteRequestUnit +
          dr.readCapacityUnitsPerSms * PRICES.dynamoReadRequestUnit),
      basis: 'measured',
    },
    {
      service: 'CloudWatch Logs',
      what: `delivery reports: ${dr.logBytesPerSms} B per SMS, plus platform lines`,
      usdPerMillion:
        ((m * dr.logBytesPerSms + callbacks * ASSUMPTIONS.platformLogBytesPerInvocation) / 1024 ** 3) *
        PRICES.logsIngestGb,
      basis: 'measured',
    },
    {
      service: 'DynamoDB',
      what: `storage + PITR of ${ASSUMPTIONS.itemKb} KB per row kept ${ASSUMPTIONS.retentionDays} days`,
      usdPerMillion: storageGb * retainedMonths * (PRICES.dynamoStorageGbMonth + PRICES.dynamoPitrGbMonth),
      basis: 'assumed',
    },
  ];
}

/** What a retry adds, per million retries. */
export function retryCostPerMillion(cost: CostResult): { short: number; long: number } {
  const m = 1_000_000;
  // A retry is one outcome write more, one claim and outcome more on the next attempt, reads again.
  const dynamo = 3 * PRICES.dynamoWriteRequestUnit + 2.4 * PRICES.dynamoReadRequestUnit;
  const sqsForMessage = (cost.retries.sqsSendsPerShortRetry + 0.35) * PRICES.sqsRequest;
  return {
    short: m * (dynamo + sqsForMessage),
    long:
      m *
      (dynamo +
        cost.retries.schedulerCallsPerLongRetry * PRICES.schedulerInvocation +
        0.35 * PRICES.sqsRequest),
  };
}

export function costTable(cost: CostResult, intake: 'single' | 'batch' = 'batch'): string {
  const lines = costPerMillion(cost, intake);
  const rows = lines.map((l) => `| ${l.service} | ${l.what} | ${l.usdPerMillion.toFixed(2)} | ${l.basis} |`);
  const total = lines.reduce((a, l) => a + l.usdPerMillion, 0);
  const withoutReports = lines
    .filter((l) => !l.what.startsWith('delivery reports'))
    .reduce((a, l) => a + l.usdPerMillion, 0);
  return [
    '| service | what | USD per 10^6 | basis |',
    '| --- | --- | ---: | --- |',
    ...rows,
    `| **total** | one SMS notice with delivery reports | **${total.toFixed(2)}** | |`,
    `| **total** | one notice, no delivery reports (e.g. e-mail without SES events) | **${withoutReports.toFixed(2)}** | |`,
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2] ?? fileURLToPath(new URL('./results/latest.json', import.meta.url));
  const results = JSON.parse(await readFile(file, 'utf8')) as { cost?: { detail: CostResult } };
  if (!results.cost) throw new Error(`${file} has no cost section (run without --skip-cost)`);
  const cost = results.cost.detail;
  process.stdout.write(`Intake in batches of 100:\n\n${costTable(cost, 'batch')}\n\n`);
  process.stdout.write(`Intake one notice per request:\n\n${costTable(cost, 'single')}\n\n`);
  const both = cost.happyPath.all;
  const one = cost.happyPath.singleSms ?? both;
  process.stdout.write(
    `A notice for e-mail and SMS reserves both channels in one transaction: ${both.writeCapacityUnitsPerChannel} WRU per channel instead of ${one.writeCapacityUnitsPerChannel} (+${(
      (both.writeCapacityUnitsPerChannel - one.writeCapacityUnitsPerChannel) *
        PRICES.dynamoWriteRequestUnit *
        1e6
    ).toFixed(2)} USD per million channels).\n\n`,
  );
  const retry = retryCostPerMillion(cost);
  process.stdout.write(
    `Per million retries: short (SQS delay) ${retry.short.toFixed(2)} USD, long (Scheduler) ${retry.long.toFixed(2)} USD\n`,
  );
}
