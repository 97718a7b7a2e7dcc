import {
  ConflictException,
  CreateScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  atExpression,
  type EventBridgeSchedulerOptions,
  HybridRetryScheduler,
  scheduleName,
} from '../../lambdas/adapters/scheduler/retry-scheduler.ts';
import { intentMessageBody, SqsIntentQueue } from '../../lambdas/adapters/sqs/sqs-intent-queue.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import { type SchedulerStandIn, startSchedulerStandIn } from '../../local/scheduler/server.ts';
import { drain, LOCAL_CREDENTIALS, startSqs } from '../helpers/sqs.ts';

const CREDENTIALS = LOCAL_CREDENTIALS;
const GROUP = 'notice-retries';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler-to-sqs';

/** The epoch ms an `at(yyyy-mm-ddThh:mm:ss)` expression names, read as UTC. */
function atMillis(expression: string | undefined): number {
  const inner = /^at\((.+)\)$/.exec(expression ?? '')?.[1];
  if (inner === undefined) throw new Error(`not an at() expression: ${expression}`);
  return Date.parse(`${inner}Z`);
}

describe('HybridRetryScheduler against local SQS and the Scheduler stand-in', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  let sqs: SQSClient;
  let schedulerClient: SchedulerClient;
  let standIn: SchedulerStandIn;
  let queueUrl: string;
  let schedulerOptions: EventBridgeSchedulerOptions;
  let queue: SqsIntentQueue;
  const ref: IntentRef = { noticeId: 'ntc_01J9Z6V4Q8', channel: 'email' };

  beforeEach(async () => {
    const local = await startSqs();
    cleanups.push(() => local.close());
    sqs = new SQSClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: CREDENTIALS });
    cleanups.push(async () => sqs.destroy());
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'email-intents' }))).QueueUrl ?? '';
    const queueArn =
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] })))
        .Attributes?.QueueArn ?? '';

    standIn = await startSchedulerStandIn({ sqsEndpoint: local.endpoint, tickMs: 100, log: () => {} });
    cleanups.push(() => standIn.close());
    schedulerClient = new SchedulerClient({
      endpoint: standIn.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
    });
    cleanups.push(async () => schedulerClient.destroy());

    queue = new SqsIntentQueue(sqs, { email: queueUrl });
    schedulerOptions = {
      client: schedulerClient,
      groupName: GROUP,
      roleArn: ROLE_ARN,
      queueArns: { email: queueArn },
    };
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('sends a wait under a minute through an SQS delay, creating no schedule', async () => {
    const retry = new HybridRetryScheduler(queue, schedulerOptions);
    const start = Date.now();

    await retry.scheduleAttempt(ref, 2, start + 2_000);

    expect(standIn.schedules()).toEqual([]);
    expect((await schedulerClient.send(new ListSchedulesCommand({}))).Schedules).toEqual([]);
    const early = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(early.Messages ?? []).toEqual([]);
    const messages = await drain(sqs, queueUrl, 6_000, 1);
    // DelaySeconds = ceil(2000 / 1000) = 2; allow for the receive loop's and the emulator's granularity.
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_900);
    expect(messages).toHaveLength(1);
    expect(JSON.parse(messages[0]?.Body ?? '{}')).toMatchObject({ noticeId: ref.noticeId, channel: 'email' });
  });

  it('turns a wait over a minute into one self-deleting at() schedule that fires onto the queue', async () => {
    // The scheduler's clock runs 70 s behind: a wake-up 3 s away in real time is 73 s away for
    // it, so it takes the Scheduler path, and the stand-in (real clock) fires it in ~3 s.
    const retry = new HybridRetryScheduler(queue, schedulerOptions, () => Date.now() - 70_000);
    const at = Date.now() + 3_000.4;

    await retry.scheduleAttempt(ref, 3, at);

    const schedule = await schedulerClient.send(
      new GetScheduleCommand({ Name: scheduleName(ref, 3), GroupName: GROUP }),
    );
    expect(schedule).toMatchObject({
      Name: `${ref.noticeId}-email-a3`,
      GroupName: GROUP,
      ScheduleExpression: atExpression(at),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      State: 'ENABLED',
      Target: {
        Arn: schedulerOptions.queueArns.email,
        RoleArn: ROLE_ARN,
        Input: intentMessageBody(ref, 3),
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      },
    });
    // Rounded up to the whole second, never earlier than asked.
    const scheduledAt = atMillis(schedule.ScheduleExpression);
    expect(scheduledAt).toBe(Math.ceil(at / 1000) * 1000);
    expect(scheduledAt).toBeGreaterThanOrEqual(at);
    expect(standIn.schedules()).toHaveLength(1);

    const early = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(early.Messages ?? []).toEqual([]);
    const messages = await drain(sqs, queueUrl, 8_000, 1);
    expect(Date.now()).toBeGreaterThanOrEqual(scheduledAt);
    expect(messages.map((m) => m.Body)).toEqual([intentMessageBody(ref, 3)]);
    await expect(
      schedulerClient.send(new GetScheduleCommand({ Name: scheduleName(ref, 3), GroupName: GROUP })),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('schedules the same (intent, attempt) once, however often it is asked', async () => {
    const retry = new HybridRetryScheduler(queue, schedulerOptions);
    const at = Date.now() + 10 * 60_000;

    await retry.scheduleAttempt(ref, 4, at);
    await retry.scheduleAttempt(ref, 4, at);
    await Promise.all([retry.scheduleAttempt(ref, 4, at), retry.scheduleAttempt(ref, 4, at + 5_000)]);

    const listed = await schedulerClient.send(new ListSchedulesCommand({ GroupName: GROUP }));
    expect(listed.Schedules?.map((s) => s.Name)).toEqual([scheduleName(ref, 4)]);
    // The adapter swallowed exactly this: the stand-in still refuses a second create.
    await expect(
      schedulerClient.send(
        new CreateScheduleCommand({
          Name: scheduleName(ref, 4),
          GroupName: GROUP,
          ScheduleExpression: atExpression(at),
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: schedulerOptions.queueArns.email ?? '', RoleArn: ROLE_ARN },
        }),
      ),
    ).rejects.toBeInstanceOf(ConflictException);
    // Another attempt of the same intent is another schedule.
    await retry.scheduleAttempt(ref, 5, at);
    expect(standIn.schedules().map((s) => s.name)).toEqual([scheduleName(ref, 4), scheduleName(ref, 5)]);
  });

  it('reaches the stand-in through AWS_ENDPOINT_URL_SCHEDULER, as the unchanged wiring does', async () => {
    const previous = process.env.AWS_ENDPOINT_URL_SCHEDULER;
    process.env.AWS_ENDPOINT_URL_SCHEDULER = standIn.endpoint;
    const envClient = new SchedulerClient({ region: 'us-east-1', credentials: CREDENTIALS });
    try {
      const retry = new HybridRetryScheduler(queue, { ...schedulerOptions, client: envClient });

      await retry.scheduleAttempt(ref, 6, Date.now() + 10 * 60_000);

      expect(standIn.schedules().map((s) => s.name)).toEqual([scheduleName(ref, 6)]);
    } finally {
      envClient.destroy();
      if (previous === undefined) delete process.env.AWS_ENDPOINT_URL_SCHEDULER;
      else process.env.AWS_ENDPOINT_URL_SCHEDULER = previous;
    }
  });
});
