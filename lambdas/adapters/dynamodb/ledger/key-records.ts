import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
import type { Item, LedgerTableClient } from './table-client.ts';

/*
 * Key records (docs/archive.md "Key records"): `K#<noticeId>` / `C#<channel>`, one per channel
 * whose row resolved, kept for the archive's retention (TTL). The fields carry the intent item's
 * own attribute names (./intent-items.ts), so the table reads the same whichever family an
 * attribute is on. The `K#keys` / `K` key check item shares the prefix; its sort key is no
 * channel's, so the reads below never see it.
 */

const keyRecordPk = (noticeId: string) => `${Archive.keyRecordPartitionPrefix}${noticeId}`;
const CHANNEL_PREFIX = 'C#';
/** Writes in flight at once: a batch resolves up to a thousand rows. */
const WRITE_CONCURRENCY = 16;

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

/**
 * One key record written whole (UpdateItem SET of every attribute, REMOVE of those it lacks): the
 * same record written again is the same item, so a batch handed again rewrites it harmlessly,
 * and a later resolution of the row (a late fact) points it at the newer object.
 */
async function writeKeyRecord(table: LedgerTableClient, write: KeyRecordWrite): Promise<void> {
  const attributes = Object.entries(keyRecordAttributes(write));
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  attributes.forEach(([name, value], index) => {
    names[`#a${index}`] = name;
    if (value === undefined) removes.push(`#a${index}`);
    else {
      values[`:a${index}`] = value;
      sets.push(`#a${index} = :a${index}`);
    }
  });
  const out = await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { pk: keyRecordPk(write.record.noticeId), sk: channelSk(write.record.channel) },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ...table.capacityOption,
    }),
  );
  table.meter('writeKeyRecord', out.ConsumedCapacity);
}

async function writeKeyRecords(table: LedgerTableClient, writes: readonly KeyRecordWrite[]): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < writes.length) {
      const write = writes[next++] as KeyRecordWrite;
      try {
        await writeKeyRecord(table, write);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, writes.length) }, worker));
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
