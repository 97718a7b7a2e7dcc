/**
 * The naive baseline, live: a small dispatcher that consumes SMS messages from its own SQS
 * queue through the same local event source as the stack's senders (2 batches × 10 records in
 * flight, records of a batch in parallel) and calls the simulator with the real Twilio adapter
 * (lambdas/providers/twilio/transport.ts), so only the policy differs from ours:
 * naive-policy.ts. No ledger: the message carries the destination and the text.
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { queueDepth } from '../../lambdas/adapters/sqs/sqs-backlog-probe.ts';
import { TwilioSmsTransport } from '../../lambdas/providers/twilio/transport.ts';
import type { SmsSimulator } from '../../local/sms-simulator/server.ts';
import { startSqsEventSource } from '../../local/sqs-event-source.ts';
import { type ThrottleFigures, throttleFigures } from '../lib/figures.ts';
import { benchPhone } from '../lib/notices.ts';
import { REGION } from '../lib/services.ts';
import type { QueueAgePoint } from '../lib/stats.ts';
import { round } from '../lib/stats.ts';
import { NAIVE_POLICY, naiveDecision } from './naive-policy.ts';

export interface BaselineResult {
  readonly figures: ThrottleFigures;
  readonly series: QueueAgePoint[];
  readonly detail: {
    readonly policy: typeof NAIVE_POLICY;
    readonly batchItemFailures: number;
    readonly inDeadLetterQueue: number;
    readonly dropped: number;
    readonly receivesHistogram: Record<string, number>;
  };
}

interface BaselineMessage {
  readonly i: number;
  readonly to: string;
  readonly body: string;
}

const SMS_TEXT = 'Hi Ada, your lab result is ready. Sign in to the patient portal to read it.';

async function createQueues(sqs: SQSClient, name: string): Promise<{ url: string; dlqUrl: string }> {
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqUrl = dlq.QueueUrl as string;
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn as string;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(NAIVE_POLICY.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn,
          maxReceiveCount: NAIVE_POLICY.maxReceiveCount,
        }),
      },
    }),
  );
  return { url: queue.QueueUrl as string, dlqUrl };
}

export async function runBaseline(options: {
  readonly sqs: SQSClient;
  readonly simulator: SmsSimulator;
  readonly from: string;
  readonly notices: number;
  readonly rate: number;
  readonly tag: string;
  /** Same as the stack's pollers. */
  readonly concurrency: number;
  readonly log: (line: string) => void;
}): Promise<BaselineResult> {
  const { sqs, simulator, notices: n, rate, log } = options;
  simulator.reset();
  simulator.faults.set({ rateLimitPerSecond: rate, callbacksEnabled: false, deliveryFailures: [] });
  const { url, dlqUrl } = await createQueues(sqs, `bench-baseline-${options.tag}-sms`);
  const transport = new TwilioSmsTransport({
    baseUrl: simulator.baseUrl,
    accountSid: simulator.accountSid,
    authToken: simulator.authToken,
    from: options.from,
    timeoutMs: 10_000,
  });

  const phones = Array.from({ length: n }, (_, i) => benchPhone(i));
  const triggers = new Array<number>(n).fill(Number.NaN);
  const accepted = new Array<number | undefined>(n).fill(undefined);
  const receives = new Array<number>(n).fill(0);
  let batchItemFailures = 0;
  let dropped = 0;
  let settled = 0;

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const deliver = async (message: BaselineMessage): Promise<boolean> => {
    receives[message.i] = (receives[message.i] ?? 0) + 1;
    for (let attempt = 1; ; attempt++) {
      const outcome = await transport.send({
        to: message.to,
        body: message.body,
        correlationId: `baseline-${message.i}`,
        idempotencyKey: `baseline-${message.i}`,
      });
      const decision = naiveDecision(outcome, attempt);
      if (decision.kind === 'done') {
        if (accepted[message.i] === undefined) {
          accepted[message.i] = Date.now();
          settled++;
        }
        return true;
      }
      if (decision.kind === 'drop') {
        dropped++;
        settled++;
        return true;
      }
      if (decision.kind === 'fail') return false;
      await sleep(decision.afterMs);
    }
  };
  const handler = async (event: SQSEvent) => {
    const results = await Promise.all(
      event.Records.map(async (record) => ({
        id: record.messageId,
        ok: await deliver(JSON.parse(record.body) as BaselineMessage).catch(() => false),
      })),
    );
    const failures = results.filter((r) => !r.ok).map((r) => ({ itemIdentifier: r.id }));
    batchItemFailures += failures.length;
    return { batchItemFailures: failures };
  };

  log(`baseline: ${n} messages, provider capped at ${rate}/s, ${JSON.stringify(NAIVE_POLICY)}`);
  const t0 = Date.now();
  // The burst: 10 per SendMessageBatch, 4 requests in flight, each message stamped when its
  // request started (as our notices are stamped when their POST started).
  const chunks: number[][] = [];
  for (let i = 0; i < n; i += 10) chunks.push(Array.from({ length: Math.min(10, n - i) }, (_, k) => i + k));
  let next = 0;
  const source = startSqsEventSource({
    client: sqs,
    queueUrl: url,
    queueArn: `arn:aws:sqs:${REGION}:000000000000:bench-baseline`,
    region: REGION,
    functionName: 'bench-naive-sms',
    handler,
    functionTimeoutMs: 30_000,
    concurrency: options.concurrency,
    log,
  });
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++] as number[];
        const startedAt = Date.now();
        for (const i of chunk) triggers[i] = startedAt;
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((i) => ({
              Id: String(i),
              MessageBody: JSON.stringify({
                i,
                to: phones[i] as string,
                body: SMS_TEXT,
              } satisfies BaselineMessage),
            })),
          }),
        );
      }
    }),
  );

  // Done when every message is settled, or nothing is left to receive (the rest is in the DLQ).
  const timeoutMs = Math.max(240_000, (4 * n * 1000) / rate);
  const deadline = t0 + timeoutMs;
  let lastReport = Date.now();
  while (Date.now() < deadline && settled < n) {
    await sleep(250);
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      const c = simulator.faults.counters;
      log(
        `  t=${Math.round((Date.now() - t0) / 1000)} s: ${c.accepted}/${n} accepted, ${c.rateLimited} × 429`,
      );
    }
    if ((await queueDepth(sqs, url)) === 0 && settled < n) {
      await sleep(1000);
      if ((await queueDepth(sqs, url)) === 0) break;
    }
  }
  const endedAt = Date.now();
  await source.stop(15_000);
  const inDeadLetterQueue = await queueDepth(sqs, dlqUrl);

  const { figures, series } = throttleFigures({
    providerRatePerSecond: rate,
    triggers,
    acceptedAt: accepted,
    phones,
    messages: simulator.messages(),
    counters: simulator.faults.counters,
    endedAt,
  });
  const receivesHistogram: Record<string, number> = {};
  for (const r of receives) receivesHistogram[r] = (receivesHistogram[r] ?? 0) + 1;
  log(`  baseline done in ${round((endedAt - t0) / 1000)} s`);
  return {
    figures,
    series,
    detail: { policy: NAIVE_POLICY, batchItemFailures, inDeadLetterQueue, dropped, receivesHistogram },
  };
}
