import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Channel } from '../../lambdas/domain/channel.ts';
import { LOCAL_ACCOUNT_ID } from '../lambda-context.ts';

export interface QueueInfo {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

const DEFAULT_REGION = 'us-east-1';
/** The DLQ keeps what it catches as long as SQS allows: someone has to look at it. */
const DLQ_RETENTION_S = 1_209_600;
const MAX_RECEIVE_COUNT = 5;

/**
 * Creates `notice-ledger-<channel>` and its DLQ when missing. CreateQueue answers the existing
 * URL when the attributes match, so stacks sharing one SQS share the queues; when they differ
 * (another PROVIDER_TIMEOUT_MS, say) the existing queue is used as it is.
 */
export async function ensureChannelQueue(
  client: SQSClient,
  channel: Channel,
  visibilityTimeoutS: number,
  log: (line: string) => void,
  lane?: 'critical' | 'bulk',
): Promise<QueueInfo> {
  // A lane with its own queue (docs/architecture.md §11): `notice-ledger-<channel>-<lane>`.
  const name = lane ? `notice-ledger-${channel}-${lane}` : `notice-ledger-${channel}`;
  return createQueueWithDeadLetters(client, name, { VisibilityTimeout: String(visibilityTimeoutS) }, log);
}

/**
 * `name` and `name-dlq` when missing: the DLQ keeps what it catches for SQS's longest retention,
 * the queue moves a message there after `maxReceiveCount` receives (default 5).
 */
export async function createQueueWithDeadLetters(
  client: SQSClient,
  name: string,
  attributes: Record<string, string> & { maxReceiveCount?: string },
  log: (line: string) => void,
): Promise<QueueInfo> {
  const { maxReceiveCount = String(MAX_RECEIVE_COUNT), ...queueAttributes } = attributes;
  const dlqUrl = await createQueue(
    client,
    `${name}-dlq`,
    { MessageRetentionPeriod: String(DLQ_RETENTION_S) },
    log,
  );
  const dlqArn = await queueArn(client, dlqUrl);
  const url = await createQueue(
    client,
    name,
    {
      ...queueAttributes,
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlqArn,
        maxReceiveCount: Number(maxReceiveCount),
      }),
    },
    log,
  );
  return { name, url, arn: await queueArn(client, url), dlqUrl, dlqArn };
}

async function createQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
  log: (line: string) => void,
): Promise<string> {
  try {
    const out = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return required(out.QueueUrl);
  } catch (error) {
    if (!(error instanceof QueueNameExists)) throw error;
    log(`queue ${name} exists with other attributes; using it as it is`);
    const out = await client.send(new GetQueueUrlCommand({ QueueName: name }));
    return required(out.QueueUrl);
  }
}

async function queueArn(client: SQSClient, url: string): Promise<string> {
  const out = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  const name = url.split('/').pop() ?? '';
  return out.Attributes?.QueueArn ?? `arn:aws:sqs:${DEFAULT_REGION}:${LOCAL_ACCOUNT_ID}:${name}`;
}

function required(value: string | undefined): string {
  if (!value) throw new Error('internal: SQS answered without a queue URL');
  return value;
}
