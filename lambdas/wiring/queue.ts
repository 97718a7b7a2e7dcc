import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsIntentQueue } from '../adapters/sqs/sqs-intent-queue.ts';
import { CHANNEL_SETTINGS } from '../contract/settings.ts';
import { CHANNELS } from '../domain/channel.ts';
import type { Config } from '../edge/config.ts';

export function buildQueue(config: Config): SqsIntentQueue {
  const urls = Object.fromEntries(
    CHANNELS.flatMap((channel) => {
      const url = config[CHANNEL_SETTINGS[channel].queueUrl];
      return url ? [[channel, url]] : [];
    }),
  );
  return new SqsIntentQueue(new SQSClient({}), urls);
}
