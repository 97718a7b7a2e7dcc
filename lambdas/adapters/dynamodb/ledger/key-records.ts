import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Archive } from '../../../contract/archive.ts';
import { LedgerTable } from '../../../contract/ledger-table.ts';
import type { KeyRecord } from '../../../domain/archive-record.ts';
import type { Channel } from '../../../domain/channel.ts';
import type { Priority } from '../../../domain/priority.ts';
import type { IntentState } from '../../../domain/state-machine.ts';
import type { KeyRecordWrite, KeyRecordWriter } from '../../../ports/archive-writer.port.ts';
import type { KeyRecordReader } from '../../../ports/notice-archive.port.ts';
import {
  channelSk,
  fromStoredFallback,
  type StoredFallback,
  storedSubmitter,
  submitterOf,
  toStoredFallback,
} from './intent-items.ts';
import { backOff, type Item, type LedgerTableClient } from './table-client.ts';

/*
 * Key records (docs/archive.md "Key records"): `K#<noticeId>` / `C#<channel>`, one per channel
 * whose row resolved, kept for the archive's retention (TTL). The fields carry the intent item's
 * own attribute names (./intent-items.ts), so the table reads the same whichever family an
 * attribute is on. The `K#keys` / `K` key check item shares the prefix; its sort key is no
 * channel's, so the reads below never see it.
 */

const keyRecordPk = (noticeId: string) => `${Archive.keyRecordPartitionPrefix}${noticeId}`;
const CHANNEL_PREFIX = 'C#';
/** BatchWriteItem requests in flight at once. */
const REQUESTS_IN_FLIGHT = 4;

/** The item's attributes besides its keys: the intent item's names, the archive object, the TTL (epoch s). */
function keyRecordAttributes(write: KeyRecordWrite): Item {
  const { record } = write;
  return {
    state: record.state,
    sub: record.submitter !== undefined ? storedSubmitter(record.submitter) : undefined,
    templateId: record.templateId,
    templateVersion: record.templateVersion,
    destFingerprint: record.destination.fingerprint,
    destMasked: record.destination.masked,
    contentDigest: record.contentDigest,
    varDigests: record.variableDigests,
    priority: record.priority,
    fb: record.fallback !== undefined ? toStoredFallback(record.fallback) : undefined,
    createdAt: record.createdAt,
    rowsObject: record.rowsObject,
    [LedgerTable.ttlAttribute]: Math.ceil(write.expiresAt / 1000),
  };
}

function keyRecordFromItem(item: Item): KeyRecord {
  return {
    noticeId: (item.pk as string).slice(Archive.keyRecordPartitionPrefix.length),
    channel: (item.sk as string).slice(CHANNEL_PREFIX.length) as Channel,
    state: item.state as IntentState,
    ...(typeof item.sub === 'string' ? { submitter: submitterOf(item.sub) } : {}),
    templateId: item.templateId as string,
    templateVersion: item.templateVersion as string,
    destination: { fingerprint: item.destFingerprint as string, masked: item.destMasked as string },
    contentDigest: item.contentDigest as string,
    ...(item.varDigests !== undefined ? { variableDigests: item.varDigests as Record<string, string> } : {}),
    ...(item.priority !== undefined ? { priority: item.priority as Priority } : {}),
    ...(item.fb !== undefined ? { fallback: fromStoredFallback(item.fb as StoredFallback) } : {}),
    createdAt: item.createdAt as number,
    rowsObject: item.rowsObject as string,
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
async function putChunk(table: LedgerTableClient, writes: readonly KeyRecordWrite[]): Promise<void> {
  let requests = writes.map((write) => ({
    PutRequest: {
      Item: {
        pk: keyRecordPk(write.record.noticeId),
        sk: channelSk(write.record.channel),
        ...keyRecordAttributes(write),
      },
    },
  }));
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
async function writeKeyRecords(table: LedgerTableClient, writes: readonly KeyRecordWrite[]): Promise<void> {
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
 * The notice's key records: one Query of its partition, eventually consistent (half the read
 * units; a key record is written minutes before its row can leave the table).
 */
async function keyRecordsOf(table: LedgerTableClient, noticeId: string): Promise<KeyRecord[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :channel)',
      ExpressionAttributeValues: { ':pk': keyRecordPk(noticeId), ':channel': CHANNEL_PREFIX },
      ...table.capacityOption,
    }),
  );
  table.meter('keyRecordsOf', out.ConsumedCapacity);
  return (out.Items ?? []).map(keyRecordFromItem);
}

export function dynamoDbKeyRecords(table: LedgerTableClient): KeyRecordWriter & KeyRecordReader {
  return {
    writeKeyRecords: (writes) => writeKeyRecords(table, writes),
    keyRecordsOf: (noticeId) => keyRecordsOf(table, noticeId),
  };
}
