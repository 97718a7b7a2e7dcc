/**
 * Plays the Lambda SQS event-source mapping for one queue: long-poll, hand the batch to the
 * handler as an `SQSEvent`, delete what succeeded, leave `batchItemFailures` (or the whole
 * batch when the handler throws) to reappear after the visibility timeout, as Lambda does.
 *
 * Logs ids, counts and error names only: message bodies are intent references today, but the
 * event source has no business printing them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { lambdaContext } from './lambda-context.ts';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface SqsEventSourceOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly functionName: string;
  readonly handler: SqsHandler;
  /** What `getRemainingTimeInMillis` counts down from. */
  readonly functionTimeoutMs: number;
  readonly log: (line: string) => void;
  /** Batches in flight at once (Lambda's maximum concurrency for the mapping). @default 2 */
  readonly concurrency?: number;
  /** Records per invocation (SQS hands out at most 10 per receive; more take several). @default 10 */
  readonly batchSize?: number;
  /**
   * Lambda's MaximumBatchingWindowInSeconds: how long to keep gathering a batch larger than one
   * receive (only used with `batchSize` > 10). @default 1000
   */
  readonly maxBatchingWindowMs?: number;
  /** @default 1 */
  readonly waitTimeSeconds?: number;
}

export interface SqsEventSource {
  /** Stops receiving and waits (at most `graceMs`) for batches in flight; resolves with how many were left running. */
  stop(graceMs: number): Promise<number>;
}

/** An empty receive that came back faster than this is treated as "not long-polling": pause instead of spinning. */
const MIN_EMPTY_RECEIVE_MS = 100;
const EMPTY_RECEIVE_PAUSE_MS = 250;
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 5_000;

export function startSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const batchSize = options.batchSize ?? 10;
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const queueName = options.queueUrl.split('/').pop() ?? options.queueUrl;
  const stopController = new AbortController();
  let stopping = false;
  let consecutiveFailures = 0;

  async function pause(ms: number): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: stopController.signal });
    } catch {
      // Stop was requested; the loop condition ends the worker.
    }
  }

  function receiveOnce(maxMessages: number, waitSeconds: number): Promise<Message[]> {
    return options.client
      .send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: maxMessages,
          WaitTimeSeconds: waitSeconds,
          // local-aws-sqs ignores MessageSystemAttributeNames; the legacy name works everywhere.
          AttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      )
      .then((out) => out.Messages ?? []);
  }

  /**
   * Long-polls for the first message, then collects up to a full batch without waiting.
   * One long poll for a full batch would do on SQS, which answers as soon as anything is
   * there; local-aws-sqs holds the answer until the batch is full or the wait is over, which
   * would put a whole wait between every POST and its send.
   */
  async function receive(): Promise<Message[] | undefined> {
    const startedAt = Date.now();
    let messages: Message[];
    try {
      messages = await receiveOnce(1, waitTimeSeconds);
      if (consecutiveFailures > 0) options.log(`queue ${queueName} reachable again`);
      consecutiveFailures = 0;
    } catch (error) {
      consecutiveFailures++;
      // One line per outage, not one per attempt.
      if (consecutiveFailures === 1 && !stopping) {
        options.log(`cannot receive from queue ${queueName} (${errorName(error)}); backing off`);
      }
      await pause(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (consecutiveFailures - 1)));
      return undefined;
    }
    if (messages.length === 0) {
      if (Date.now() - startedAt < MIN_EMPTY_RECEIVE_MS) await pause(EMPTY_RECEIVE_PAUSE_MS);
      return messages;
    }
    // Gather the rest without waiting on an empty queue; above 10 (one receive's most) keep
    // gathering for up to the batching window, as Lambda does, stopping at the first empty answer.
    const windowEnds = Date.now() + (batchSize > 10 ? (options.maxBatchingWindowMs ?? 1000) : 0);
    while (messages.length < batchSize && !stopping) {
      let more: Message[];
      try {
        more = await receiveOnce(Math.min(10, batchSize - messages.length), 0);
      } catch {
        // What we hold is ours already; the rest stay in the queue for the next poll.
        break;
      }
      messages = messages.concat(more);
      if (more.length === 0 || batchSize <= 10 || Date.now() >= windowEnds) break;
    }
    return messages;
  }

  async function invoke(messages: Message[]): Promise<void> {
    const records = messages.map((message) => toRecord(message, options));
    const ids = new Set(records.map((record) => record.messageId));
    let failed: Set<string>;
    try {
      const response = await options.handler(
        { Records: records },
        lambdaContext(options.functionName, options.functionTimeoutMs, options.region),
      );
      failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      // Lambda fails the whole batch when a reported identifier is not one of its records.
      if ([...failed].some((id) => !ids.has(id))) {
        options.log(`${options.functionName} reported an unknown itemIdentifier; the whole batch is retried`);
        failed = ids;
      }
    } catch (error) {
      options.log(
        `${options.functionName} threw (${errorName(error)}); ${records.length} record(s) return to the queue`,
      );
      failed = ids;
    }
    const done = messages.filter((message) => message.MessageId && !failed.has(message.MessageId));
    if (done.length === 0) return;
    try {
      const out = await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
      );
      if (out.Failed && out.Failed.length > 0) {
        options.log(
          `could not delete ${out.Failed.length} message(s) from ${queueName}; they will be redelivered`,
        );
      }
    } catch (error) {
      // The handlers are idempotent on the ledger, so a redelivery costs a read, not a resend.
      options.log(`could not delete processed messages from ${queueName} (${errorName(error)})`);
    }
  }

  /** Hands messages received during shutdown straight back instead of hiding them for a visibility timeout. */
  async function release(messages: Message[]): Promise<void> {
    try {
      await options.client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: messages.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      );
    } catch {
      // They reappear after the visibility timeout anyway.
    }
  }

  async function worker(): Promise<void> {
    while (!stopping) {
      const messages = await receive();
      if (!messages || messages.length === 0) continue;
      if (stopping) {
        await release(messages);
        return;
      }
      await invoke(messages);
    }
  }

  const workers = Array.from({ length: concurrency }, () =>
    worker().catch((error: unknown) => {
      options.log(`event source for ${queueName} stopped unexpectedly (${errorName(error)})`);
    }),
  );

  let stopped: Promise<number> | undefined;
  return {
    stop(graceMs) {
      stopped ??= (async () => {
        stopping = true;
        stopController.abort();
        let running = workers.length;
        const settled = Promise.all(workers.map((w) => w.finally(() => running--)));
        await Promise.race([settled, sleep(graceMs)]);
        return running;
      })();
      return stopped;
    },
  };
}

function toRecord(message: Message, options: SqsEventSourceOptions): SQSRecord {
  const attributes = message.Attributes ?? {};
  const now = String(Date.now());
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? now,
      SenderId: attributes.SenderId ?? 'LOCAL',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? now,
    },
    messageAttributes: toMessageAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: options.queueArn,
    awsRegion: options.region,
  };
}

/** Lambda's shape: camelCase keys, binary values base64-encoded. */
function toMessageAttributes(input: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(input ?? {})) {
    out[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: base64(value.BinaryValue) } : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map(base64),
    };
  }
  return out;
}

/** local-aws-sqs hands binary values back as index-keyed objects; real SQS as bytes. */
function base64(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (typeof value === 'object' && value !== null) {
    return Buffer.from(Object.values(value as Record<string, number>)).toString('base64');
  }
  return '';
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name === 'Error' ? error.message : error.name;
  return String(error);
}
