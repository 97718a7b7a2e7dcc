import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LedgerTable } from '../../../contract/ledger-table.ts';
import type { Channel } from '../../../domain/channel.ts';
import type { BatchRecords, SendBatch } from '../../../ports/batch-records.port.ts';
import type { LedgerTableClient } from './table-client.ts';

/** A provider batch call's record: one item `B#<id>` / `B`, members in short keys (docs/table-design.md). */
const batchKey = (id: string) => ({ pk: `B#${id}`, sk: 'B' });

interface StoredMember {
  n: string;
  c: Channel;
  t: string;
  v: string;
  e: string;
  d?: number;
}

/**
 * One conditional UpdateItem that creates the `B#<id>` item (UpdateItem, not PutItem: the
 * senders hold no PutItem grant, and need none). Members in short keys, the TTL in epoch
 * seconds. A batch id is written once: a second write of the same id is refused (an error,
 * since ids are fresh per call).
 */
async function recordBatch(table: LedgerTableClient, batch: SendBatch): Promise<void> {
  const members: StoredMember[] = batch.members.map((m) => ({
    n: m.noticeId,
    c: m.channel,
    t: m.templateId,
    v: m.templateVersion,
    e: m.envelope,
    ...(m.deadline !== undefined ? { d: m.deadline } : {}),
  }));
  const out = await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: batchKey(batch.id),
      UpdateExpression:
        'SET #channel = :channel, #provider = :provider, #key = :key, #createdAt = :createdAt, #members = :members, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(pk)',
      ExpressionAttributeNames: {
        '#channel': 'channel',
        '#provider': 'provider',
        '#key': 'idemKey',
        '#createdAt': 'createdAt',
        '#members': 'members',
        '#ttl': LedgerTable.ttlAttribute,
      },
      ExpressionAttributeValues: {
        ':channel': batch.channel,
        ':provider': batch.provider,
        ':key': batch.idempotencyKey,
        ':createdAt': batch.createdAt,
        ':members': members,
        ':ttl': Math.ceil(batch.expiresAt / 1000),
      },
      ...table.capacityOption,
    }),
  );
  table.meter('recordBatch', out.ConsumedCapacity);
}

async function getBatch(table: LedgerTableClient, id: string): Promise<SendBatch | undefined> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: batchKey(id),
      // Written before the call it describes; the lookup that asks must see it.
      ConsistentRead: true,
      ...table.capacityOption,
    }),
  );
  table.meter('getBatch', out.ConsumedCapacity);
  const item = out.Item;
  if (!item) return undefined;
  return {
    id,
    channel: item.channel as Channel,
    provider: item.provider as string,
    idempotencyKey: item.idemKey as string,
    createdAt: item.createdAt as number,
    expiresAt: (item[LedgerTable.ttlAttribute] as number) * 1000,
    members: (item.members as StoredMember[]).map((m) => ({
      noticeId: m.n,
      channel: m.c,
      templateId: m.t,
      templateVersion: m.v,
      envelope: m.e,
      ...(m.d !== undefined ? { deadline: m.d } : {}),
    })),
  };
}

export function dynamoDbBatchRecords(table: LedgerTableClient): BatchRecords {
  return {
    recordBatch: (batch) => recordBatch(table, batch),
    getBatch: (id) => getBatch(table, id),
  };
}
