import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { rowsObjectOf, shortRowsObject } from '../../contract/archive.ts';
import { KEY_RECORD_CHANNEL_LETTER, KeyTable } from '../../contract/key-table.ts';
import type { KeyRecord } from '../../domain/archive-record.ts';
import type { Channel } from '../../domain/channel.ts';
import { NOTICE_ID_PATTERN } from '../../domain/identity.ts';
import type { IntentState } from '../../domain/state-machine.ts';
import type { KeyRecordWrite, KeyRecordWriter } from '../../ports/archive-writer.port.ts';
import type { KeyRecordReader } from '../../ports/notice-archive.port.ts';
import type { Item, LedgerTableClient } from './ledger/table-client.ts';

/*
 * Key records (docs/archive.md "Key records") in the key table (lambdas/contract/key-table.ts),
 * packed: one item per bucket of notice ids, one attribute per (notice, channel) record, its
 * fields in one string. Six years of items are billed by their bytes, 100 of overhead each: a
 * bucket shares those among its records.
 */

/**
 * The key table as this adapter reaches it: a document client, the table's name, the capacity
 * meter (a `LedgerTableClient` over the key table's name: ../../wiring/ledger.ts `keyTable`).
 */
export type KeyTableClient = Pick<LedgerTableClient, 'doc' | 'tableName' | 'meter' | 'capacityOption'>;

export interface KeyRecordsOptions {
  /** KEY_BUCKET_CHARS: characters of the notice id (after `ntc_`) naming its bucket. */
  readonly bucketChars: number;
  /** The clock a bucket's expired records are judged by (tests move it). */
  readonly now?: () => number;
}

/** UpdateItem requests in flight at once. */
const REQUESTS_IN_FLIGHT = 8;
/** Records set by one UpdateItem at most (its expression stays small; a bucket rarely gets more). */
const RECORDS_PER_UPDATE = 50;
const NOTICE_ID_HEAD = 'ntc_'.length;
/** Stands for "no submitter" in a record's value. */
const NO_SUBMITTER = '-';

/** A state as a record's value keeps it: one letter (every state named, so a new one must be given one). */
const STATE_LETTER = {
  reserved: 'r',
  sending: 'n',
  retry_scheduled: 'y',
  unknown: 'u',
  accepted: 'a',
  delivered: 'd',
  failed: 'f',
  suppressed: 's',
} as const satisfies Record<IntentState, string>;
const STATE_OF_LETTER: Readonly<Record<string, IntentState>> = Object.fromEntries(
  Object.entries(STATE_LETTER).map(([state, letter]) => [letter, state as IntentState]),
);

/** Marks a compacted part of a `rows/` object's name; the parts as the archiver names them never hold it. */
const COMPACT = '~';
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const STREAM_LABEL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})$/;
const SEQUENCE = /^[1-9]\d*$/;

/**
 * The `rows/` object's short form (lambdas/contract/archive.ts `shortRowsObject`,
 * `<day>/<stream label>/<first sequence number>`) in fewer bytes, exactly reversible
 * ({@link rowsObjectFromCompact}): the day without dashes, a stream label that is a time as base-36
 * epoch ms, the sequence number in base 36 (40 digits → 26 characters). A part of another form is
 * kept as it is.
 */
export function compactRowsObject(rowsObject: string): string {
  const parts = shortRowsObject(rowsObject).split('/');
  if (parts.length !== 3) return shortRowsObject(rowsObject);
  const [day, label, sequence] = parts as [string, string, string];
  const time = STREAM_LABEL_TIME.exec(label);
  return [
    ISO_DAY.test(day) ? day.replaceAll('-', '') : day,
    time
      ? `${COMPACT}${Date.UTC(+time[1]!, +time[2]! - 1, +time[3]!, +time[4]!, +time[5]!, +time[6]!, +time[7]!).toString(36)}`
      : label,
    SEQUENCE.test(sequence) ? `${COMPACT}${BigInt(sequence).toString(36)}` : sequence,
  ].join('/');
}

/** The `rows/` object's key from {@link compactRowsObject}'s form. */
export function rowsObjectFromCompact(compact: string): string {
  const parts = compact.split('/');
  if (parts.length !== 3) return rowsObjectOf(compact);
  const [day, label, sequence] = parts as [string, string, string];
  const fullDay = /^\d{8}$/.test(day) ? `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}` : day;
  const fullLabel = label.startsWith(COMPACT)
    ? new Date(Number.parseInt(label.slice(1), 36)).toISOString().replace(/Z$/, '').replace(/:/g, '')
    : label;
  const fullSequence = sequence.startsWith(COMPACT) ? base36ToDecimal(sequence.slice(1)) : sequence;
  return rowsObjectOf(`${fullDay}/${fullLabel}/${fullSequence}`);
}

function base36ToDecimal(digits: string): string {
  let n = 0n;
  for (const digit of digits) n = n * 36n + BigInt(Number.parseInt(digit, 36));
  return n.toString();
}

/** Where a notice's records live: its bucket, and the attribute name of each channel's record. */
export function keyRecordPlace(
  noticeId: string,
  channel: Channel,
  bucketChars: number,
): { readonly bucket: string; readonly name: string } {
  if (!NOTICE_ID_PATTERN.test(noticeId)) throw new Error(`not a notice id: ${noticeId.slice(0, 40)}`);
  const cut = NOTICE_ID_HEAD + bucketChars;
  return {
    bucket: noticeId.slice(NOTICE_ID_HEAD, cut),
    name: `${noticeId.slice(cut)}${KEY_RECORD_CHANNEL_LETTER[channel]}`,
  };
}

/**
 * A record's value: its state's letter, the cut content digest, the submitter digest (or `-`), the
 * `rows/` object ({@link compactRowsObject}) and the record's expiry (epoch seconds, base 36),
 * separated by spaces (none of them holds one).
 */
export function keyRecordValue(write: KeyRecordWrite): string {
  const { record } = write;
  return [
    STATE_LETTER[record.state],
    record.contentDigest,
    record.submitterDigest ?? NO_SUBMITTER,
    compactRowsObject(record.rowsObject),
    Math.ceil(write.expiresAt / 1000).toString(36),
  ].join(' ');
}

/** A record's expiry (epoch ms): its value's last field; NaN when the value has none. */
function expiryOf(value: string): number {
  return Number.parseInt(value.slice(value.lastIndexOf(' ') + 1), 36) * 1000;
}

function parseValue(value: string): Omit<KeyRecord, 'noticeId' | 'channel'> & { expiresAt: number } {
  const [letter, contentDigest, submitter, rows, expiry] = value.split(' ');
  const state = STATE_OF_LETTER[letter ?? ''];
  if (!state || !contentDigest || !submitter || !rows || !expiry) throw new Error('unreadable key record');
  return {
    state,
    contentDigest,
    ...(submitter !== NO_SUBMITTER ? { submitterDigest: submitter } : {}),
    rowsObject: rowsObjectFromCompact(rows),
    expiresAt: expiryOf(value),
  };
}

/**
 * The records an item holds, by attribute name, with their expiry (only that field is read: a
 * bucket's every record is looked at on each write); values without one skipped.
 */
function recordsIn(item: Item): { name: string; expiresAt: number }[] {
  return Object.entries(item).flatMap(([name, value]) => {
    if (name === KeyTable.partitionKey || name === KeyTable.ttlAttribute || typeof value !== 'string')
      return [];
    const expiresAt = expiryOf(value);
    return Number.isNaN(expiresAt) ? [] : [{ name, expiresAt }];
  });
}

/**
 * Sets up to RECORDS_PER_UPDATE records of one bucket in one UpdateItem (a record written again
 * is the same value; a late fact points it at the newer object) and the bucket's TTL to the
 * latest expiry among them. The item comes back (ALL_NEW, no read units): records past their
 * expiry are removed, and a TTL lowered by a late write of older records is raised again, in one
 * more write (rare: a bucket written after six years, an archiver replaying older changes).
 */
async function updateBucket(
  table: KeyTableClient,
  bucket: string,
  records: readonly { name: string; write: KeyRecordWrite }[],
  now: number,
): Promise<void> {
  const names: Record<string, string> = { '#t': KeyTable.ttlAttribute };
  const values: Record<string, unknown> = {
    ':t': Math.ceil(Math.max(...records.map((r) => r.write.expiresAt)) / 1000),
  };
  const sets = records.map(({ name, write }, i) => {
    names[`#r${i}`] = name;
    values[`:r${i}`] = keyRecordValue(write);
    return `#r${i} = :r${i}`;
  });
  const out = await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { [KeyTable.partitionKey]: bucket },
      UpdateExpression: `SET ${sets.join(', ')}, #t = :t`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
      ...table.capacityOption,
    }),
  );
  table.meter('writeKeyRecords', out.ConsumedCapacity);
  const held = recordsIn(out.Attributes ?? {});
  const expired = held.filter((r) => r.expiresAt <= now);
  const latest = Math.ceil(
    Math.max(0, ...held.filter((r) => r.expiresAt > now).map((r) => r.expiresAt)) / 1000,
  );
  const ttl = out.Attributes?.[KeyTable.ttlAttribute];
  const ttlLow = typeof ttl === 'number' && ttl < latest;
  if (expired.length === 0 && !ttlLow) return;
  const tidyNames: Record<string, string> = Object.fromEntries(expired.map((r, i) => [`#x${i}`, r.name]));
  const remove = expired.length > 0 ? ` REMOVE ${expired.map((_, i) => `#x${i}`).join(', ')}` : '';
  const tidy = await table.doc.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { [KeyTable.partitionKey]: bucket },
      UpdateExpression: `${ttlLow ? 'SET #t = :t' : ''}${remove}`.trim(),
      ExpressionAttributeNames: { ...tidyNames, ...(ttlLow ? { '#t': KeyTable.ttlAttribute } : {}) },
      ...(ttlLow ? { ExpressionAttributeValues: { ':t': latest } } : {}),
      ...table.capacityOption,
    }),
  );
  table.meter('writeKeyRecords', tidy.ConsumedCapacity);
}

/**
 * A batch's key records, grouped by bucket: one UpdateItem per bucket (records of a bucket in one
 * batch share it), a few in flight. Throws the first failure once every bucket was tried.
 */
async function writeKeyRecords(
  table: KeyTableClient,
  writes: readonly KeyRecordWrite[],
  options: KeyRecordsOptions,
): Promise<void> {
  const buckets = new Map<string, Map<string, KeyRecordWrite>>();
  for (const write of writes) {
    const { bucket, name } = keyRecordPlace(write.record.noticeId, write.record.channel, options.bucketChars);
    const records = buckets.get(bucket) ?? new Map<string, KeyRecordWrite>();
    // The same record twice in one batch: the later write wins, as two puts would.
    records.set(name, write);
    buckets.set(bucket, records);
  }
  const updates = [...buckets].flatMap(([bucket, records]) => {
    const all = [...records].map(([name, write]) => ({ name, write }));
    const chunks: { bucket: string; records: typeof all }[] = [];
    for (let i = 0; i < all.length; i += RECORDS_PER_UPDATE) {
      chunks.push({ bucket, records: all.slice(i, i + RECORDS_PER_UPDATE) });
    }
    return chunks;
  });
  const now = (options.now ?? Date.now)();
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < updates.length) {
      const update = updates[next++] as (typeof updates)[number];
      try {
        await updateBucket(table, update.bucket, update.records, now);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REQUESTS_IN_FLIGHT, updates.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

/**
 * The notice's key records: one GetItem of its bucket, projected to its two possible records
 * (eventually consistent: half a read unit for a bucket up to 4 KB; a key record is written
 * minutes before its row can leave the table). A record past its expiry is not one any more.
 */
async function keyRecordsOf(
  table: KeyTableClient,
  noticeId: string,
  options: KeyRecordsOptions,
): Promise<KeyRecord[]> {
  if (!NOTICE_ID_PATTERN.test(noticeId)) return [];
  const channels = Object.keys(KEY_RECORD_CHANNEL_LETTER) as Channel[];
  const places = channels.map((channel) => ({
    channel,
    ...keyRecordPlace(noticeId, channel, options.bucketChars),
  }));
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { [KeyTable.partitionKey]: places[0]?.bucket },
      ProjectionExpression: places.map((_, i) => `#r${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(places.map((p, i) => [`#r${i}`, p.name])),
      ...table.capacityOption,
    }),
  );
  table.meter('keyRecordsOf', out.ConsumedCapacity);
  const now = (options.now ?? Date.now)();
  return places.flatMap(({ channel, name }) => {
    const value = out.Item?.[name];
    if (typeof value !== 'string') return [];
    const { expiresAt, ...record } = parseValue(value);
    return expiresAt > now ? [{ noticeId, channel, ...record }] : [];
  });
}

export function dynamoDbKeyRecords(
  table: KeyTableClient,
  options: KeyRecordsOptions,
): KeyRecordWriter & KeyRecordReader {
  return {
    writeKeyRecords: (writes) => writeKeyRecords(table, writes, options),
    keyRecordsOf: (noticeId) => keyRecordsOf(table, noticeId, options),
  };
}

/**
 * The bytes one record adds to its bucket as DynamoDB bills an item's size (its attribute name
 * and its string value, UTF-8): what the cost model prices (bench/lib/archive-lines.ts).
 */
export function keyRecordBytes(write: KeyRecordWrite, bucketChars: number): number {
  const { name } = keyRecordPlace(write.record.noticeId, write.record.channel, bucketChars);
  return Buffer.byteLength(name, 'utf8') + Buffer.byteLength(keyRecordValue(write), 'utf8');
}
