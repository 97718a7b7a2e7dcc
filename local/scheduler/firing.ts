/**
 * Firing: every tick, each due schedule's target gets one SendMessage (templated Input), a
 * failed send is retried on later ticks with a capped exponential backoff within the target's
 * retry policy, then dropped with one log line; after the last invocation a schedule is deleted
 * (DELETE) or kept as completed (NONE). Delivery is at least once, as in AWS.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import {
  errorName,
  FIRE_CONCURRENCY,
  type FiredRecord,
  key,
  RETRY_BASE_MS,
  RETRY_CAP_MS,
  SQS_QUEUE_ARN,
  type StoredSchedule,
} from './model.ts';
import type { ScheduleStore } from './store.ts';

export interface Firing {
  readonly fired: FiredRecord[];
  /** One pass now, after any pass in progress. */
  runPass(): Promise<void>;
  /** Starts the timer. */
  start(): void;
  /** Stops the timer, waits for the pass in flight, closes the SQS client. */
  close(): Promise<void>;
}

export function createFiring(options: {
  readonly schedules: ScheduleStore;
  readonly sqsEndpoint: string;
  readonly region: string;
  readonly clock: () => number;
  readonly tickMs: number;
  readonly log: (line: string) => void;
  /** Added to the client that sends the targets' messages: the role Scheduler sends as (local IAM). */
  readonly sendAs?: { applyToStack(stack: unknown): void } | undefined;
}): Firing {
  const { clock, tickMs, log } = options;
  const store = options.schedules.schedules;
  const persist = () => options.schedules.persist();
  const fired: FiredRecord[] = [];
  /** Schedules with a send in flight, so an overlapping `tick()` cannot send one twice. */
  const inFlight = new Set<StoredSchedule>();
  let closed = false;
  const client = () =>
    new SQSClient({
      endpoint: options.sqsEndpoint,
      region: options.region,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      // One try per attempt: the retry policy above decides when to try again.
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ connectionTimeout: 2_000, requestTimeout: 5_000 }),
    });
  // The queue's URL is the stand-in's own business (AWS needs none); the send is the role's.
  const sqs = client();
  const sender = options.sendAs ? client() : sqs;
  if (options.sendAs) sender.middlewareStack.use(options.sendAs);
  const queueUrls = new Map<string, string>();

  async function queueUrlFor(arn: string): Promise<string> {
    const cached = queueUrls.get(arn);
    if (cached !== undefined) return cached;
    const match = SQS_QUEUE_ARN.exec(arn);
    const queueName = match?.[3];
    if (queueName === undefined) throw new Error(`not an SQS queue ARN: ${arn}`);
    const out = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
    if (!out.QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${queueName}`);
    queueUrls.set(arn, out.QueueUrl);
    return out.QueueUrl;
  }

  function messageBody(s: StoredSchedule, attempt: number): string {
    if (s.target.Input === undefined) return '{}';
    return s.target.Input.replaceAll('<aws.scheduler.schedule-arn>', s.arn)
      .replaceAll('<aws.scheduler.scheduled-time>', `${new Date(s.at).toISOString().slice(0, 19)}Z`)
      .replaceAll('<aws.scheduler.execution-id>', randomUUID())
      .replaceAll('<aws.scheduler.attempt-number>', String(attempt));
  }

  /** After the last invocation: delete (DELETE) or keep as completed (NONE), as AWS does. */
  function finish(s: StoredSchedule): void {
    const k = key(s.groupName, s.name);
    // The schedule may have been deleted, or deleted and recreated, while the send was in flight.
    if (store.get(k) !== s) return;
    if (s.actionAfterCompletion === 'DELETE') store.delete(k);
    else {
      s.completed = true;
      s.nextAttemptAt = null;
    }
    persist();
  }

  async function fire(s: StoredSchedule): Promise<void> {
    const attempt = s.attempts + 1;
    try {
      const queueUrl = await queueUrlFor(s.target.Arn);
      const groupId = s.target.SqsParameters?.MessageGroupId;
      const out = await sender.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: messageBody(s, attempt),
          ...(groupId === undefined ? {} : { MessageGroupId: groupId }),
        }),
      );
      s.attempts = attempt;
      fired.push({
        name: s.name,
        groupName: s.groupName,
        scheduledAt: s.at,
        firedAt: clock(),
        attempts: attempt,
        outcome: 'sent',
        queueUrl,
        ...(out.MessageId === undefined ? {} : { messageId: out.MessageId }),
      });
      finish(s);
    } catch (error) {
      // The queue may have been deleted and recreated under another URL.
      queueUrls.delete(s.target.Arn);
      const now = clock();
      s.attempts = attempt;
      const { MaximumRetryAttempts, MaximumEventAgeInSeconds } = s.target.RetryPolicy;
      const retriesLeft = attempt - 1 < MaximumRetryAttempts;
      const backoff = Math.max(tickMs, Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), RETRY_CAP_MS));
      const next = now + backoff;
      if (retriesLeft && next - s.at <= MaximumEventAgeInSeconds * 1000) {
        s.nextAttemptAt = next;
        if (store.get(key(s.groupName, s.name)) === s) persist();
        return;
      }
      const code = errorName(error);
      log(
        `scheduler stand-in: dropped ${s.groupName}/${s.name} after ${attempt} attempt(s) (${code}); target ${s.target.Arn}`,
      );
      fired.push({
        name: s.name,
        groupName: s.groupName,
        scheduledAt: s.at,
        firedAt: now,
        attempts: attempt,
        outcome: 'dropped',
        errorCode: code,
      });
      finish(s);
    }
  }

  async function fireDue(): Promise<void> {
    // A `tick()` after close() must not send with a destroyed client or rewrite the state file.
    if (closed) return;
    const now = clock();
    const due = [...store.values()].filter(
      (s) => s.state === 'ENABLED' && !s.completed && !inFlight.has(s) && (s.nextAttemptAt ?? s.at) <= now,
    );
    for (let i = 0; i < due.length; i += FIRE_CONCURRENCY) {
      const batch = due.slice(i, i + FIRE_CONCURRENCY);
      for (const s of batch) inFlight.add(s);
      await Promise.all(batch.map((s) => fire(s).finally(() => inFlight.delete(s))));
    }
  }

  // Passes run one after another: the timer's and any `tick()` a test asks for.
  let passes: Promise<void> = Promise.resolve();
  function runPass(): Promise<void> {
    const pass = passes.then(fireDue).catch((error: unknown) => {
      // Per-schedule errors are handled in fire(); this is a bug or a failed state write.
      log(`scheduler stand-in: firing pass failed: ${errorName(error)}: ${(error as Error).message}`);
    });
    passes = pass;
    return pass;
  }

  let timer: NodeJS.Timeout | undefined;
  function scheduleTick(): void {
    timer = setTimeout(() => {
      void runPass().then(() => {
        if (!closed) scheduleTick();
      });
    }, tickMs);
  }

  return {
    fired,
    runPass,
    start: scheduleTick,
    async close() {
      closed = true;
      clearTimeout(timer);
      // Sends in flight end within the SQS request timeout.
      await passes;
      sqs.destroy();
      sender.destroy();
    },
  };
}
