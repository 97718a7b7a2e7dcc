/**
 * TTL on DynamoDB Local (local/dynamodb/ttl-sweeper.ts): DynamoDB Local never deletes for TTL, the
 * sweeper does, as AWS's TTL would: items whose TTL attribute (epoch seconds) is past leave the
 * table, those there before it started and those written since (it follows the stream), and the
 * stream carries a REMOVE with the old image; items not yet due, without the attribute, with
 * another type, or expired more than five years ago stay; an item whose TTL moved after the
 * sweeper learnt it stays, and is deleted at its new time.
 */
import { join } from 'node:path';
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureLedgerTable, LedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import {
  deleteDue,
  ExpirySchedule,
  scanExpiries,
  startTtlSweeper,
} from '../../local/dynamodb/ttl-sweeper.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { makeDataDir } from '../helpers/local-stack.ts';

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
    const log: string[] = [];

    // Act: the sweeper starts; then an item due in 2 s is written (it learns that one from the stream).
    const sweeper = startTtlSweeper({
      client,
      streams,
      streamArn,
      region: 'us-east-1',
      checkpointFile: join(await makeDataDir('notice-ledger-ttl-'), 'ttl-checkpoint.json'),
      tableName: table,
      keyAttributes: KEYS,
      ttlAttribute: TTL,
      intervalMs: 250,
      log: (line) => log.push(line),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await put(table, 'N#soon', { N: String(nowS() + 2) });
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

  it('an item whose TTL moved after the sweeper learnt it stays, and is deleted at its new time', async () => {
    // Prepare: the schedule knows two expired items; one of them gets a later TTL before the delete.
    const table = uniqueTableName('ttl-race');
    await ensureLedgerTable(client, table);
    await put(table, 'N#renewed', { N: String(nowS() - 5) });
    await put(table, 'N#plain', { N: String(nowS() - 5) });
    const ttlTable = { client, tableName: table, keyAttributes: KEYS, ttlAttribute: TTL };
    const schedule = new ExpirySchedule(KEYS);
    await scanExpiries(ttlTable, schedule);
    const renewedTo = nowS() + 3;
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'N#renewed' }, sk: { S: 'C#email' } },
        UpdateExpression: 'SET #ttl = :later',
        ExpressionAttributeNames: { '#ttl': TTL },
        ExpressionAttributeValues: { ':later': { N: String(renewedTo) } },
      }),
    );

    // Act
    const first = await deleteDue(ttlTable, schedule, nowS());
    const renewedStayed = await exists(table, 'N#renewed');
    const later = await deleteDue(ttlTable, schedule, renewedTo + 1);

    // Assess
    expect([first, renewedStayed, later]).toEqual([1, true, 1]);
    expect(await exists(table, 'N#plain')).toBe(false);
    expect(await exists(table, 'N#renewed')).toBe(false);
    expect(schedule.size).toBe(0);
  });
});
