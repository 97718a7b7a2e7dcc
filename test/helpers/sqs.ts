import type { AddressInfo } from 'node:net';
import { DeleteMessageCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll } from 'vitest';
import { requireIntegrationTier } from './tier.ts';

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** local-aws-sqs in this process on a free 127.0.0.1 port. */
export async function startSqs(): Promise<{ endpoint: string; close(): Promise<void> }> {
  requireIntegrationTier('Local SQS');
  const server = await createSqsServer({ port: 0, hostname: '127.0.0.1' });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Receives (and deletes) for `ms`, or until `count` messages arrived. */
export async function drain(sqs: SQSClient, queueUrl: string, ms: number, count = Number.POSITIVE_INFINITY) {
  const received: Message[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && received.length < count) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const message of out.Messages ?? []) {
      received.push(message);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  return received;
}

/**
 * A local SQS for the enclosing describe block (started before its tests, closed after) and a
 * client for it: call the returned function inside a test.
 */
export function useLocalSqs(): () => SQSClient {
  let sqs: Awaited<ReturnType<typeof startSqs>> | undefined;
  let client: SQSClient | undefined;
  beforeAll(async () => {
    sqs = await startSqs();
    client = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
  });
  afterAll(async () => {
    client?.destroy();
    await sqs?.close();
  });
  return () => {
    if (!client) throw new Error('useLocalSqs: the client exists inside tests only');
    return client;
  };
}
