/**
 * The throttle run against the local stack: a burst of N SMS notices through the HTTP API while
 * the Twilio simulator admits R sends/s (token bucket of R tokens refilled at R/s, 429 with a
 * whole-second Retry-After). Our dispatcher knows R (`SMS_SEND_RATE_PER_SECOND`, the channel's shared rate budget,
 * docs/architecture.md §11).
 *
 * Measured:
 * - trigger = start of the batch POST that carried the notice; accepted = the `at` of the
 *   row's `accepted` transition in the ledger (when the worker recorded the provider's 201);
 * - calls, 429s and stored messages from the simulator itself; duplicates = messages beyond the
 *   first per destination; lost = notices without both an `accepted` row and a stored message;
 * - queue age = oldest unresolved notice's age on a 250 ms grid, from those timestamps
 *   (local-aws-sqs has no ApproximateAgeOfOldestMessage, and in AWS that metric would reset on
 *   every deferral, which re-enqueues: the ledger's age is the honest signal);
 * - every DynamoDB / SQS request the stack made during the run, from the counting proxies;
 * - queue depth (visible / in flight / delayed) sampled every 250 ms straight from SQS.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SmsSimulator } from '../local/sms-simulator/server.ts';
import type { CountedRequest } from './lib/counting-proxy.ts';
import { type ThrottleFigures, throttleFigures } from './lib/figures.ts';
import { acceptedAt, benchNotices, type LedgerRow, postBurst, readLedgerRows } from './lib/notices.ts';
import type { BenchServices } from './lib/services.ts';
import type { StackHandle } from './lib/stack-process.ts';
import type { QueueAgePoint } from './lib/stats.ts';
import { round } from './lib/stats.ts';

export interface RunSample {
  /** Seconds since the first trigger. */
  readonly t: number;
  readonly providerCalls: number;
  readonly providerAccepted: number;
  readonly providerRateLimited: number;
  readonly queueVisible?: number;
  readonly queueInFlight?: number;
  readonly queueDelayed?: number;
}

export interface OurThrottleResult {
  readonly figures: ThrottleFigures;
  readonly series: QueueAgePoint[];
  readonly samples: RunSample[];
  readonly detail: {
    readonly intakeSeconds: number;
    readonly throttledTransitions: number;
    readonly attemptsHistogram: Record<string, number>;
    readonly finalStates: Record<string, number>;
    readonly requests: Record<string, number>;
    /** SQS sends on the channel queue beyond intake and throttle retries: gate deferrals and reconciler re-enqueues. */
    readonly deferralsOrReenqueues: number;
    /** For each destination that received more than one message (at most 5): what the ledger says. */
    readonly duplicateDetail: readonly {
      readonly phone: string;
      readonly messageCreatedAt: readonly number[];
      readonly ledger?: LedgerRow | undefined;
    }[];
  };
}

export async function runOurThrottle(options: {
  readonly stack: StackHandle;
  readonly services: BenchServices;
  readonly simulator: SmsSimulator;
  readonly ddb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly notices: number;
  readonly rate: number;
  readonly tag: string;
  readonly log: (line: string) => void;
}): Promise<OurThrottleResult> {
  const { stack, simulator, notices: n, rate, log } = options;
  simulator.reset();
  simulator.faults.set({ rateLimitPerSecond: rate, callbacksEnabled: false, deliveryFailures: [] });
  const notices = benchNotices(options.tag, n);
  const timeoutMs = Math.max(90_000, (3 * n * 1000) / rate + 30_000);

  const samples: RunSample[] = [];
  let t0 = Date.now();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const c = simulator.faults.counters;
      let queue: Partial<RunSample> = {};
      try {
        const out = await options.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: directQueueUrl(stack.queues.sms.url, options.services.sqsEndpoint),
            AttributeNames: [
              'ApproximateNumberOfMessages',
              'ApproximateNumberOfMessagesNotVisible',
              'ApproximateNumberOfMessagesDelayed',
            ],
          }),
        );
        const a = out.Attributes ?? {};
        queue = {
          queueVisible: Number(a.ApproximateNumberOfMessages ?? 0),
          queueInFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
          queueDelayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
        };
      } catch {
        // A missed sample is a gap in the plot, not a failed run.
      }
      samples.push({
        t: round((Date.now() - t0) / 1000, 3),
        providerCalls: c.createCalls,
        providerAccepted: c.accepted,
        providerRateLimited: c.rateLimited,
        ...queue,
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();

  t0 = Date.now();
  const proxyStart = t0;
  log(`our dispatcher: ${n} notices, provider capped at ${rate}/s (ideal ${n / rate} s)`);
  const { triggers, batches } = await postBurst(stack.apiUrl, notices);
  const intakeSeconds = (Math.max(...batches.map((b) => b.finishedAt)) - t0) / 1000;
  const refused = n - batches.reduce((sum, b) => sum + (b.statuses['202'] ?? 0), 0);
  if (refused > 0) log(`  ${refused} notices were not created (202) at intake`);

  // Done when the simulator holds every notice and the ledger recorded every acceptance.
  const ids = notices.map((x) => x.noticeId);
  let rows = new Map<string, LedgerRow>();
  const deadline = t0 + timeoutMs;
  let lastReport = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      const c = simulator.faults.counters;
      log(
        `  t=${Math.round((Date.now() - t0) / 1000)} s: ${c.accepted}/${n} accepted, ${c.rateLimited} × 429`,
      );
    }
    if (simulator.faults.counters.accepted < n) continue;
    rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'sms');
    if (ids.every((id) => acceptedAt(rows.get(id)) !== undefined)) break;
  }
  const endedAt = Date.now();
  sampling = false;
  await sampler;
  rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'sms');

  const { figures, series } = throttleFigures({
    providerRatePerSecond: rate,
    triggers,
    acceptedAt: ids.map((id) => acceptedAt(rows.get(id))),
    phones: notices.map((x) => x.phone),
    messages: simulator.messages(),
    counters: simulator.faults.counters,
    endedAt,
  });

  const byPhone = new Map<string, number[]>();
  for (const m of simulator.messages()) byPhone.set(m.to, [...(byPhone.get(m.to) ?? []), m.dateCreated]);
  const duplicateDetail = [...byPhone.entries()]
    .filter(([, created]) => created.length > 1)
    .slice(0, 5)
    .map(([phone, created]) => ({
      phone,
      messageCreatedAt: created,
      ledger: rows.get(notices.find((x) => x.phone === phone)?.noticeId ?? ''),
    }));
  const attemptsHistogram: Record<string, number> = {};
  const finalStates: Record<string, number> = {};
  let throttledTransitions = 0;
  for (const id of ids) {
    const row = rows.get(id);
    const state = row?.state ?? 'missing';
    finalStates[state] = (finalStates[state] ?? 0) + 1;
    const attempts = String(row?.attempts ?? 0);
    attemptsHistogram[attempts] = (attemptsHistogram[attempts] ?? 0) + 1;
    throttledTransitions += row?.transitions.filter((t) => t.r === 'provider_throttled').length ?? 0;
  }
  const during = [
    ...options.services.proxies.dynamodb.between(proxyStart, endedAt),
    ...options.services.proxies.sqs.between(proxyStart, endedAt),
    ...options.services.proxies.scheduler.between(proxyStart, endedAt),
  ];
  const requests = countByOperation(during);
  // Messages, not requests: intake sends ten references per SendMessageBatch.
  const smsSends = during
    .filter((r) => r.service === 'sqs' && r.operation.startsWith('SendMessage') && r.channel === 'sms')
    .reduce((sum, r) => sum + (r.messages ?? 1), 0);
  return {
    figures,
    series,
    samples,
    detail: {
      intakeSeconds: round(intakeSeconds),
      throttledTransitions,
      attemptsHistogram,
      finalStates,
      requests,
      deferralsOrReenqueues: smsSends - n - throttledTransitions,
      duplicateDetail,
    },
  };
}

/** `service:Operation[:target]` → count, for the requests of one window. */
export function countByOperation(records: readonly CountedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const key = `${r.service}:${r.operation}${r.target ? `:${r.target}` : ''}${
      r.operation === 'ReceiveMessage' ? (r.messages ? ':nonEmpty' : ':empty') : ''
    }`;
    out[key] = (out[key] ?? 0) + (r.share ?? 1);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Queue URLs name the proxy's host; the sampler asks SQS directly so it is not counted. */
export function directQueueUrl(url: string, sqsEndpoint: string): string {
  const u = new URL(url);
  const direct = new URL(sqsEndpoint);
  u.host = direct.host;
  return u.toString();
}
