import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../local/dynamodb/server.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';

function clientFor(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => {
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('no port'));
    });
  });
}

describe('DynamoDB Local', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('answers ListTables at the endpoint provided by the global setup', async () => {
    const client = ddbClient();
    cleanups.push(async () => client.destroy());

    const result = await client.send(new ListTablesCommand({}));

    expect(Array.isArray(result.TableNames)).toBe(true);
  });

  it('keeps tables in dataDir across a stop and a start', { timeout: 120_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ddb-local-test-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const table = uniqueTableName('persist');
    let ddb: DynamoDbLocal | undefined;
    cleanups.push(async () => ddb?.stop());

    ddb = await startDynamoDbLocal({ dataDir });
    const first = clientFor(ddb.endpoint);
    await first.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await first.send(
      new PutItemCommand({ TableName: table, Item: { pk: { S: 'n-1' }, body: { S: 'hello' } } }),
    );
    first.destroy();
    await ddb.stop();
    // stop() must be idempotent: teardown code often calls it from more than one place.
    await ddb.stop();

    ddb = await startDynamoDbLocal({ dataDir });
    const second = clientFor(ddb.endpoint);
    cleanups.push(async () => second.destroy());
    const { Item } = await second.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'n-1' } } }));

    expect(Item).toEqual({ pk: { S: 'n-1' }, body: { S: 'hello' } });
  });

  it('fails with a clear error, not a hang, when the port is taken', async () => {
    const occupier = createServer();
    // The JVM binds every interface, so the squatter must too for the conflict to be real.
    const port = await listen(occupier, '0.0.0.0');
    cleanups.push(() => new Promise((resolve) => occupier.close(resolve)));
    const readyTimeoutMs = 20_000;
    const startedAt = Date.now();

    await expect(startDynamoDbLocal({ port, readyTimeoutMs })).rejects.toThrow(/port \d+ is already in use/);
    expect(Date.now() - startedAt).toBeLessThan(readyTimeoutMs);
  });
});
