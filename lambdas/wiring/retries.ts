import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { HybridRetryScheduler } from '../adapters/scheduler/retry-scheduler.ts';
import type { SqsIntentQueue } from '../adapters/sqs/sqs-intent-queue.ts';
import { CHANNEL_SETTINGS } from '../contract/settings.ts';
import { CHANNELS } from '../domain/channel.ts';
import type { Config } from '../edge/config.ts';
import type { AwsClients } from './aws-clients.ts';
import { laneQueues } from './queue.ts';

/** SQS delays for short waits; EventBridge Scheduler one-time schedules when the stack set it up. */
export function buildRetryScheduler(
  config: Config,
  queue: SqsIntentQueue,
  clients: AwsClients,
): HybridRetryScheduler {
  if (!config.SCHEDULER_ROLE_ARN) return new HybridRetryScheduler(queue, undefined);
  const queueArns = Object.fromEntries(
    CHANNELS.flatMap((channel) => {
      const arn = config[CHANNEL_SETTINGS[channel].queueArn];
      return arn ? [[channel, arn]] : [];
    }),
  );
  return new HybridRetryScheduler(queue, {
    client: clients.adopt(new SchedulerClient({})),
    groupName: config.SCHEDULE_GROUP_NAME,
    roleArn: config.SCHEDULER_ROLE_ARN,
    queueArns,
    laneArns: laneQueues(config, 'queueArns'),
  });
}
