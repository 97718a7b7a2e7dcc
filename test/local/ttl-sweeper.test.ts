/**
 * TTL on DynamoDB Local (local/dynamodb/ttl-sweeper.ts): DynamoDB Local never deletes for TTL, the
 * sweeper does, as AWS's TTL would: items whose TTL attribute (epoch seconds) is past leave the
 * table and the change stream carries a REMOVE with the old image; items not yet due, without the
 * attribute, with another type, or expired more than five years ago stay; an item whose TTL
 * moved between the scan and the delete stays.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureLedgerTable, LedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { startTtlSweeper, sweepExpired } from '../../local/dynamodb/ttl-sweeper.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';

const client = ddbClient();
const streams = new DynamoDBStreamsClient({
  endpoint: inject('ddbEndpoint'),
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const KEYS = [LedgerTable.partitionKey, LedgerTable.sortKey];
const TTL = LedgerTable.ttlAttribute;

afterAll(() => {
  client.destroy();
  streams.destroy();
});

const nowS = () => Math.floor(Date.now() / 1000);

async function put(table: string, pk: string, ttl?: { N: string } | { S: string }): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: table,
      Item: {
        pk: { S: pk },
        sk: { S: 'C#email' },
        state: { S: 'delivered' },
        ...(ttl ? { [TTL]: ttl } : {}),
      },
    }),
  );
}

async function exists(table: string, pk: string): Promise<boolean> {
  const out = await client.send(
    new GetItemCommand({
      TableName: table,
      Key: { pk: { S: pk }, sk: { S: 'C#email' } },
      ConsistentRead: true,
    }),
  );
  return out.Item !== undefined;
}

/** Every REMOVE the table's stream holds: the removed item's pk and its old image's TTL. */
async function removes(streamArn: string): Promise<{ pk: string; ttl: string | undefined }[]> {
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const found: { pk: string; ttl: string | undefined }[] = [];
  for (const shard of StreamDescription?.Shards ?? []) {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.ShardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (iterator) {
      const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      for (const r of out.Records ?? []) {
        if (r.eventName === 'REMOVE')
          found.push({ pk: r.dynamodb?.Keys?.pk?.S ?? '', ttl: r.dynamodb?.OldImage?.[TTL]?.N });
      }
      if ((out.Records ?? []).length === 0) break;
      iterator = out.NextShardIterator;
    }
  }
  return found;
}

describe('TTL sweeper on DynamoDB Local', () => {
  it('deletes what expired, within one interval, and the stream carries its REMOVE; the rest stays', {
    timeout: 30_000,
  }, async () => {
    // Prepare
    const table = uniqueTableName('ttl');
    const streamArn = await ensureLedgerTable(client, table);
    const expiredAt = String(nowS() - 10);
    await put(table, 'N#expired', { N: expiredAt });
    await put(table, 'N#due-later', { N: String(nowS() + 3600) });
    await put(table, 'N#no-ttl');
    await put(table, 'N#string-ttl', { S: String(nowS() - 10) });
    await put(table, 'N#ancient', { N: String(nowS() - 6 * 365 * 86_400) });
    await put(table, 'N#soon', { N: String(nowS() + 2) });
    const log: string[] = [];

    // Act
    const sweeper = startTtlSweeper({
      client,
      tableName: table,
      keyAttributes: KEYS,
      ttlAttribute: TTL,
      intervalMs: 250,
      log: (line) => log.push(line),
    });
    const started = Date.now();
    while ((await exists(table, 'N#expired')) || (await exists(table, 'N#soon'))) {
      if (Date.now() - started > 10_000) throw new Error('the expired items were not deleted within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const soonGoneAfterMs = Date.now() - started;
    await sweeper.stop();

    // Assess
    for (const kept of ['N#due-later', 'N#no-ttl', 'N#string-ttl', 'N#ancient']) {
      expect(await exists(table, kept), kept).toBe(true);
    }
    expect(sweeper.deleted()).toBe(2);
    // Due 2 s after the start (epoch seconds round down: up to 3 s), swept within one 250 ms interval after.
    expect(soonGoneAfterMs).toBeLessThan(3_000 + 1_000);
    expect((await removes(streamArn)).sort((a, b) => a.pk.localeCompare(b.pk))).toEqual([
      { pk: 'N#expired', ttl: expiredAt },
      { pk: 'N#soon', ttl: expect.any(String) },
    ]);
    expect(log).toEqual([]);
  });

  it('an item whose TTL moved between the scan and the delete stays (the delete is conditioned on the value seen)', async () => {
    // Prepare: a write lands between the sweeper's scan and its delete.
    const table = uniqueTableName('ttl-race');
    await ensureLedgerTable(client, table);
    await put(table, 'N#renewed', { N: String(nowS() - 5) });
    await put(table, 'N#plain', { N: String(nowS() - 5) });
    const racing = ddbClient();
    racing.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: { pk?: { S?: string } } };
        if (context.commandName === 'DeleteItemCommand' && input.Key?.pk?.S === 'N#renewed') {
          await client.send(
            new UpdateItemCommand({
              TableName: table,
              Key: { pk: { S: 'N#renewed' }, sk: { S: 'C#email' } },
              UpdateExpression: 'SET #ttl = :later',
              ExpressionAttributeNames: { '#ttl': TTL },
              ExpressionAttributeValues: { ':later': { N: String(nowS() + 3600) } },
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'writeBetweenScanAndDelete' },
    );

    // Act
    const deleted = await sweepExpired({
      client: racing,
      tableName: table,
      keyAttributes: KEYS,
      ttlAttribute: TTL,
    });
    racing.destroy();

    // Assess
    expect(deleted).toBe(1);
    expect(await exists(table, 'N#renewed')).toBe(true);
    expect(await exists(table, 'N#plain')).toBe(false);
    await client.send(
      new DeleteItemCommand({ TableName: table, Key: { pk: { S: 'N#renewed' }, sk: { S: 'C#email' } } }),
    );
  });
});
