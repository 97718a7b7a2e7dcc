import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { rowsObjectOf, shortRowsObject } from '../../contract/archive.ts';
import { KeyTable } from '../../contract/key-table.ts';
import type { KeyRecord } from '../../domain/archive-record.ts';
import type { Channel } from '../../domain/channel.ts';
import type { IntentState } from '../../domain/state-machine.ts';
import type { KeyRecordWrite, KeyRecordWriter } from '../../ports/archive-writer.port.ts';
import type { KeyRecordReader } from '../../ports/notice-archive.port.ts';
import { backOff, type Item, type LedgerTableClient } from './ledger/table-client.ts';

/*
 * Key records (docs/archive.md "Key records") in the key table (lambdas/contract/key-table.ts):
 * one compact item per channel whose row resolved, kept for the archive's retention (TTL), under
 * one-letter names: six years of items are billed by their bytes, names included.
 */

/**
 * The key table as this adapter reaches it: a document client, the table's name, the capacity
 * meter (a `LedgerTableClient` over the key table's name: ../../wiring/ledger.ts `keyTable`).
 */
export type KeyTableClient = Pick<LedgerTableClient, 'doc' | 'tableName' | 'meter' | 'capacityOption'>;

/** BatchWriteItem requests in flight at once. */
const REQUESTS_IN_FLIGHT = 4;

/**
 * A key record's item, as written: the keys, the state, the cut content digest, the submitter's
 * digest, the `rows/` object's short form and the TTL (epoch s). Exported so that the cost
 * model's size (bench/lib/archive-lines.ts) is this item's.
 */
export function keyRecordItem(write: KeyRecordWrite): Item {
  const { record } = write;
  return {
    [KeyTable.partitionKey]: record.noticeId,
    [KeyTable.sortKey]: record.channel,
    [KeyTable.state]: record.state,
    [KeyTable.contentDigest]: record.contentDigest,
    ...(record.submitterDigest !== undefined ? { [KeyTable.submitter]: record.submitterDigest } : {}),
    [KeyTable.rowsObject]: shortRowsObject(record.rowsObject),
    [KeyTable.ttlAttribute]: Math.ceil(write.expiresAt / 1000),
  };
}

function keyRecordFromItem(item: Item): KeyRecord {
  const submitter = item[KeyTable.submitter];
  return {
    noticeId: item[KeyTable.partitionKey] as string,
    channel: item[KeyTable.sortKey] as Channel,
    state: item[KeyTable.state] as IntentState,
    contentDigest: item[KeyTable.contentDigest] as string,
    ...(typeof submitter === 'string' ? { submitterDigest: submitter } : {}),
    rowsObject: rowsObjectOf(item[KeyTable.rowsObject] as string),
  };
}

/** BatchWriteItem's limit: 25 puts per request. */
const BATCH_WRITE_MAX = 25;
/** Rounds of unprocessed puts (throttling) retried, with growing pauses, before the batch fails. */
const MAX_UNPROCESSED_ROUNDS = 8;

/**
 * Puts up to 25 key records in one BatchWriteItem, retrying what DynamoDB leaves unprocessed.
 * A put writes the whole item, so a record written again is the same item, and a later
 * resolution of the row (a late fact) points it at the newer object.
 */
async function putChunk(table: KeyTableClient, writes: readonly KeyRecordWrite[]): Promise<void> {
  let requests = writes.map((write) => ({ PutRequest: { Item: keyRecordItem(write) } }));
  for (let round = 0; requests.length > 0; round++) {
    if (round > MAX_UNPROCESSED_ROUNDS) {
      throw new Error(
        `key records: ${requests.length} still unprocessed after ${MAX_UNPROCESSED_ROUNDS} retries`,
      );
    }
    if (round > 0) await backOff(round);
    const out = await table.doc.send(
      new BatchWriteCommand({ RequestItems: { [table.tableName]: requests }, ...table.capacityOption }),
    );
    for (const capacity of out.ConsumedCapacity ?? []) table.meter('writeKeyRecords', capacity);
    requests = (out.UnprocessedItems?.[table.tableName] ?? []) as typeof requests;
  }
}

/**
 * A batch's key records: BatchWriteItem, 25 a request, a few requests in flight (a batch settles
 * up to a thousand rows: 40 requests, not a thousand; the same write units).
 */
async function writeKeyRecords(table: KeyTableClient, writes: readonly KeyRecordWrite[]): Promise<void> {
  const chunks: KeyRecordWrite[][] = [];
  for (let i = 0; i < writes.length; i += BATCH_WRITE_MAX) chunks.push(writes.slice(i, i + BATCH_WRITE_MAX));
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++] as KeyRecordWrite[];
      try {
        await putChunk(table, chunk);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REQUESTS_IN_FLIGHT, chunks.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

/**
 * The notice's key records: one Query of its partition (every channel in one read unit: half a
 * unit, eventually consistent, where a GetItem per channel costs half a unit each; a key record
 * is written minutes before its row can leave the table).
 */
async function keyRecordsOf(table: KeyTableClient, noticeId: string): Promise<KeyRecord[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: '#n = :n',
      ExpressionAttributeNames: { '#n': KeyTable.partitionKey },
      ExpressionAttributeValues: { ':n': noticeId },
      ...table.capacityOption,
    }),
  );
  table.meter('keyRecordsOf', out.ConsumedCapacity);
  return (out.Items ?? []).map(keyRecordFromItem);
}

export function dynamoDbKeyRecords(table: KeyTableClient): KeyRecordWriter & KeyRecordReader {
  return {
    writeKeyRecords: (writes) => writeKeyRecords(table, writes),
    keyRecordsOf: (noticeId) => keyRecordsOf(table, noticeId),
  };
}
