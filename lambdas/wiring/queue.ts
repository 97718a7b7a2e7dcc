import type { SQSClient } from '@aws-sdk/client-sqs';
import { type LaneQueues, SqsIntentQueue } from '../adapters/sqs/sqs-intent-queue.ts';
import { SqsRowWatch } from '../adapters/sqs/sqs-row-watch.ts';
import { CHANNEL_SETTINGS, LANE_SETTINGS } from '../contract/settings.ts';
import { CHANNELS, type Channel } from '../domain/channel.ts';
import type { Config } from '../edge/config.ts';

/** Both channels' queues over the runtime's SQS client (./aws-clients.ts). */
export function buildQueue(config: Config, client: SQSClient): SqsIntentQueue {
  return new SqsIntentQueue(client, channelQueueUrls(config), laneQueues(config, 'queueUrls'));
}

/**
 * Intake's watch (docs/table-design.md "Watched rows"), when the stack wires its queue and
 * `INDEX_WATCH_DELAY_MS` is not 0; absent: every row enters the open index at intake.
 */
export function buildRowWatch(config: Config, client: SQSClient): SqsRowWatch | undefined {
  if (!config.WATCH_QUEUE_URL || config.INDEX_WATCH_DELAY_MS === 0) return undefined;
  return new SqsRowWatch(client, config.WATCH_QUEUE_URL, config.INDEX_WATCH_DELAY_MS);
}

/** Each channel's queue (its standard lane). */
export function channelQueueUrls(config: Config): Partial<Record<Channel, string>> {
  return Object.fromEntries(
    CHANNELS.flatMap((channel) => {
      const url = config[CHANNEL_SETTINGS[channel].queueUrl];
      return url ? [[channel, url]] : [];
    }),
  );
}

/** The lanes with a queue of their own (docs/architecture.md §11), per channel. */
export function laneQueues(config: Config, which: 'queueUrls' | 'queueArns'): LaneQueues {
  return Object.fromEntries(
    CHANNELS.map((channel) => {
      const names = LANE_SETTINGS[channel][which];
      const lanes = Object.entries(names).flatMap(([lane, name]) => {
        const value = config[name];
        return value ? [[lane, value]] : [];
      });
      return [channel, Object.fromEntries(lanes)];
    }),
  );
}
