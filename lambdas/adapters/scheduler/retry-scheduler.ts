import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { Channel } from '../../domain/channel.ts';
import type { IntentQueue, IntentRef, RetryScheduler } from '../../ports/intent-queue.port.ts';
import { intentMessageBody, type LaneQueues, laneTarget, MAX_SQS_DELAY_MS } from '../sqs/sqs-intent-queue.ts';

/**
 * Scheduler fires with one-minute precision, so a wait under a minute goes through SQS
 * `DelaySeconds` instead (docs/architecture.md §4).
 */
const SCHEDULER_MIN_DELAY_MS = 60_000;

export interface EventBridgeSchedulerOptions {
  readonly client: SchedulerClient;
  readonly groupName: string;
  readonly roleArn: string;
  readonly queueArns: Readonly<Partial<Record<Channel, string>>>;
  /** Lane queues (docs/architecture.md §11): a retry goes back to its row's lane. */
  readonly laneArns?: LaneQueues;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the next whole second. */
export function atExpression(at: number): string {
  return `at(${new Date(Math.ceil(at / 1000) * 1000).toISOString().slice(0, 19)})`;
}

/** Deterministic per (intent, attempt), within Scheduler's 64-character `[0-9a-zA-Z-_.]` rule. */
export function scheduleName(ref: IntentRef, attempt: number): string {
  return `${ref.noticeId}-${ref.channel}-a${attempt}`;
}

/**
 * Short waits ride on an SQS delay; longer ones become one-time EventBridge schedules that
 * delete themselves after firing. Creating the same (intent, attempt) twice is a
 * ConflictException, which means "already scheduled" and is success.
 * Without Scheduler settings (local runs that do not provide one) long waits fall back to the
 * longest SQS delay; the sender leaves a row that is not yet due, and the reconciler
 * re-enqueues it when it is.
 */
export class HybridRetryScheduler implements RetryScheduler {
  constructor(
    private readonly queue: IntentQueue,
    private readonly scheduler: EventBridgeSchedulerOptions | undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  async scheduleAttempt(ref: IntentRef, attempt: number, at: number): Promise<void> {
    const delayMs = Math.max(0, at - this.clock());
    const target = this.scheduler && laneTarget(ref, this.scheduler.queueArns, this.scheduler.laneArns);
    if (delayMs < SCHEDULER_MIN_DELAY_MS || !this.scheduler || !target) {
      await this.queue.enqueue([ref], { delayMs: Math.min(delayMs, MAX_SQS_DELAY_MS) });
      return;
    }
    try {
      await this.scheduler.client.send(
        new CreateScheduleCommand({
          Name: scheduleName(ref, attempt),
          GroupName: this.scheduler.groupName,
          ScheduleExpression: atExpression(at),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: target,
            RoleArn: this.scheduler.roleArn,
            Input: intentMessageBody(ref, attempt),
            RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
          },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
    }
  }
}
