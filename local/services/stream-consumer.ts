import { join } from 'node:path';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionName } from '../../lambdas/contract/functions.ts';
import {
  type StreamHandler,
  type StreamSourceOptions,
  startStreamSource,
} from '../dynamodb-stream-source.ts';
import type { LocalIam } from '../iam/enforce.ts';
import { LOCAL_ACCOUNT_ID } from '../lambda-context.ts';
import type { StackContext } from '../service.ts';
import { createQueueWithDeadLetters } from './queues.ts';

export interface LedgerStreamConsumerOptions
  extends Pick<
    StreamSourceOptions,
    'batchSize' | 'maxBatchingWindowMs' | 'bisectOnError' | 'retryAttempts' | 'name' | 'filter'
  > {
  /** The function whose role reads the stream, as Lambda's mapping reads it with the function's role. */
  readonly role: FunctionName;
  readonly handler: StreamHandler;
  /** In the data dir: where this mapping's checkpoint is kept (each mapping has its own). */
  readonly checkpointFile: string;
  /** The on-failure destination's queue name (created when missing). */
  readonly failureQueue: string;
}

export interface LedgerStreamConsumer {
  readonly failureQueueUrl: string;
  stop(): Promise<void>;
}

/**
 * One event-source mapping on the ledger table's stream (DynamoDB Local's), as the CDK declares
 * it for a stream function: the stream read as the function's role (`iam`), its checkpoint in the
 * data dir, and a batch that exhausted its retries sent to its on-failure queue as Lambda sends it
 * (`DDBStreamBatchInfo`: the shard and the batch's first and last sequence numbers, no records).
 */
export async function startLedgerStreamConsumer(
  { env, dataDir, region, log }: StackContext,
  iam: LocalIam,
  options: LedgerStreamConsumerOptions,
): Promise<LedgerStreamConsumer> {
  const streamArn = env.LEDGER_TABLE_STREAM_ARN as string;
  // Lambda's service sends a failed batch's positions to the on-failure destination.
  const failures = new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, region });
  const queue = await createQueueWithDeadLetters(failures, options.failureQueue, {}, log);
  const streams = iam.adopt(
    options.role,
    new DynamoDBStreamsClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region }),
  );
  let invokes = 0;
  const source = startStreamSource({
    client: streams,
    streamArn,
    region,
    name: options.name,
    handler: (event) => {
      invokes += 1;
      return options.handler(event);
    },
    checkpointFile: join(dataDir, options.checkpointFile),
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.maxBatchingWindowMs !== undefined
      ? { maxBatchingWindowMs: options.maxBatchingWindowMs }
      : {}),
    ...(options.bisectOnError !== undefined ? { bisectOnError: options.bisectOnError } : {}),
    ...(options.retryAttempts !== undefined ? { retryAttempts: options.retryAttempts } : {}),
    ...(options.filter ? { filter: options.filter } : {}),
    onFailure: async (failure) => {
      await failures.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: JSON.stringify({
            version: '1.0',
            timestamp: new Date().toISOString(),
            requestContext: {
              functionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:notice-ledger-${options.role}`,
              condition: 'RetryAttemptsExhausted',
              approximateInvokeCount: invokes,
            },
            DDBStreamBatchInfo: {
              shardId: failure.shardId,
              startSequenceNumber: failure.first,
              endSequenceNumber: failure.last,
              batchSize: failure.records,
              streamArn: failure.streamArn,
            },
          }),
        }),
      );
    },
    log,
  });
  return {
    failureQueueUrl: queue.url,
    async stop() {
      await source.stop();
      failures.destroy();
      streams.destroy();
    },
  };
}
