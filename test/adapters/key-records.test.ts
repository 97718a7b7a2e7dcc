import {
  CreateTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  dynamoDbKeyRecords,
  keyRecordBytes,
  keyRecordPlace,
} from '../../lambdas/adapters/dynamodb/key-records.ts';
import { ensureKeyTable } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { LedgerTableClient } from '../../lambdas/adapters/dynamodb/ledger/table-client.ts';
import { Archive, archiveObjectKey } from '../../lambdas/contract/archive.ts';
import { KeyTable } from '../../lambdas/contract/key-table.ts';
import {
  archivedIntentOf,
  KEY_DIGEST_CHARS,
  type KeyRecord,
  keyRecordOf,
} from '../../lambdas/domain/archive-record.ts';
import { principalDigest } from '../../lambdas/domain/caller.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { rowLife } from '../helpers/archive.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { T0 } from '../helpers/factories.ts';

const client = ddbClient();
const tableName = uniqueTableName('key-records');
const table = new LedgerTableClient({ client, tableName });
/** 1 024 buckets (the local default): a thousand records share them, as a deployment's fill. */
const BUCKET_CHARS = 2;
const keyRecords = dynamoDbKeyRecords(table, { bucketChars: BUCKET_CHARS });

beforeAll(async () => {
  await ensureKeyTable(client, tableName);
});

/** A delivered row with every optional field an intent may carry (none of which a key record keeps). */
function settledRow(channel: 'email' | 'sms', start = T0): Intent {
  const delivered = rowLife(start, channel)[3] as Intent;
  return {
    ...delivered,
    submitter: 'arn:aws:iam::123456789012:role/billing',
    priority: 'critical',
    fallback: {
      to: 'sms',
      withinMs: 600_000,
      destination: { fingerprint: 'fp_sms', masked: '+1******4567' },
      contentDigest: 'cd_sms',
      timeZone: 'Europe/Berlin',
    },
  };
}

/**
 * When the records below expire: years ahead. DynamoDB Local deletes items whose TTL is past
 * (some, soon after TTL is enabled), so a record written already expired may be gone when read.
 */
const EXPIRES = Date.parse('2032-11-30T10:00:00Z');

/** A `rows/` object's key as the archiver names them (a 40-digit stream sequence number: the longest). */
const rowsObject = (n: number) =>
  archiveObjectKey(Archive.rowsPrefix, {
    day: '2026-11-30',
    streamLabel: '2026-11-01T120000.000',
    sequence: `49600000000000000000${String(n).padStart(20, '0')}`,
  });

/** The bucket item holding the notice's records, and the record's attribute name in it. */
async function rawItem(noticeId: string, channel: 'email' | 'sms') {
  const { bucket, name } = keyRecordPlace(noticeId, channel, BUCKET_CHARS);
  const out = await client.send(
    new GetItemCommand({ TableName: tableName, Key: marshall({ [KeyTable.partitionKey]: bucket }) }),
  );
  return { item: out.Item ? unmarshall(out.Item) : undefined, name };
}

describe('key records on DynamoDB Local (the key table)', () => {
  it('written and read back, per channel, in one Query; the TTL the archive’s retention', async () => {
    const email = settledRow('email');
    const sms = { ...settledRow('sms'), noticeId: email.noticeId, submitter: undefined };
    const expiresAt = Date.parse('2032-11-30T10:00:05.400Z');
    const records: KeyRecord[] = [
      keyRecordOf(archivedIntentOf(email), rowsObject(1)),
      keyRecordOf(archivedIntentOf(sms), rowsObject(2)),
    ];
    await keyRecords.writeKeyRecords(records.map((record) => ({ record, expiresAt })));
    const read = await keyRecords.keyRecordsOf(email.noticeId);
    expect([...read].sort((a, b) => a.channel.localeCompare(b.channel))).toEqual(records);
    expect(read.find((r) => r.channel === 'email')).toMatchObject({
      state: 'delivered',
      contentDigest: email.contentDigest.slice(0, KEY_DIGEST_CHARS),
      submitterDigest: principalDigest('arn:aws:iam::123456789012:role/billing'),
      rowsObject: rowsObject(1),
    });
    // A row without a submitter: no submitter attribute, read back without one.
    expect(read.find((r) => r.channel === 'sms')).not.toHaveProperty('submitterDigest');
    const { item } = await rawItem(email.noticeId, 'email');
    expect(item?.[KeyTable.ttlAttribute]).toBeGreaterThanOrEqual(Math.ceil(expiresAt / 1000));
  });

  it('compact: a state letter, a cut digest, the submitter digest, the rows/ object compacted, the expiry; nothing else', async () => {
    const row = settledRow('email', T0 + 5);
    const record = keyRecordOf(archivedIntentOf(row), rowsObject(7));
    await keyRecords.writeKeyRecords([{ record, expiresAt: EXPIRES }]);
    const { item, name } = await rawItem(row.noticeId, 'email');
    const value = item?.[name] as string;
    const [state, digest, submitter, rows, expiry, ...rest] = value.split(' ');
    expect(state).toBe('d');
    expect(digest).toHaveLength(KEY_DIGEST_CHARS);
    expect(submitter).toBe(principalDigest('arn:aws:iam::123456789012:role/billing'));
    // Day without dashes, the stream label's time and the 40-digit sequence number in base 36.
    expect(rows).toBe(
      `20261130/~${Date.parse('2026-11-01T12:00:00.000Z').toString(36)}/~${BigInt(rowsObject(7).split('/').at(-1)?.replace(Archive.objectSuffix, '') ?? '').toString(36)}`,
    );
    expect(Number.parseInt(expiry ?? '', 36)).toBe(Math.ceil(EXPIRES / 1000));
    expect(rest).toEqual([]);
    // As DynamoDB bills it (name and value): what the cost model prices, well under the 266 B an
    // item of its own cost (166 B + 100 B overhead).
    const bytes = Buffer.byteLength(name) + Buffer.byteLength(value);
    expect(bytes).toBe(keyRecordBytes({ record, expiresAt: EXPIRES }, BUCKET_CHARS));
    expect(bytes).toBeLessThan(125);
    // No history, nothing sealed, none of the intent's content fields.
    for (const absent of [
      row.templateId,
      row.destination.fingerprint,
      row.destination.masked,
      'critical',
      'billing',
    ])
      expect(value, absent).not.toContain(absent);
  });

  it('written again: the same item; a later resolution moves it to the newer object', async () => {
    const row = settledRow('email', T0 + 1);
    const first = keyRecordOf(archivedIntentOf(row), rowsObject(10));
    await keyRecords.writeKeyRecords([{ record: first, expiresAt: EXPIRES }]);
    await keyRecords.writeKeyRecords([{ record: first, expiresAt: EXPIRES }]);
    expect(await keyRecords.keyRecordsOf(row.noticeId)).toEqual([first]);
    const later = keyRecordOf(archivedIntentOf({ ...row, state: 'failed' }), rowsObject(11));
    await keyRecords.writeKeyRecords([{ record: later, expiresAt: EXPIRES + 1000 }]);
    const [read] = await keyRecords.keyRecordsOf(row.noticeId);
    expect(read?.rowsObject).toBe(rowsObject(11));
    expect(read?.state).toBe('failed');
  });

  it('a notice with no key record reads none; nor does a malformed id', async () => {
    expect(await keyRecords.keyRecordsOf(`ntc_${'q'.repeat(26)}`)).toEqual([]);
    expect(await keyRecords.keyRecordsOf('ntc_nothing_here')).toEqual([]);
  });

  it('packed: records of one bucket share its item; a record past its expiry is removed when the bucket is written again', async () => {
    // Two notices in one bucket (the same first characters), a third record written later.
    const base = settledRow('sms', T0 + 20);
    const id = (tail: string) => `ntc_zz${tail.padEnd(24, 'a')}`;
    const write = (noticeId: string, expiresAt: number, n: number) => ({
      record: keyRecordOf(archivedIntentOf({ ...base, noticeId }), rowsObject(n)),
      expiresAt,
    });
    const soon = Date.now() + 86_400_000;
    await keyRecords.writeKeyRecords([write(id('b'), soon, 30), write(id('c'), EXPIRES, 31)]);
    const { item } = await rawItem(id('b'), 'sms');
    expect(Object.keys(item ?? {}).sort()).toEqual(
      [
        KeyTable.partitionKey,
        KeyTable.ttlAttribute,
        keyRecordPlace(id('b'), 'sms', BUCKET_CHARS).name,
        keyRecordPlace(id('c'), 'sms', BUCKET_CHARS).name,
      ].sort(),
    );
    // The item lives as long as its latest record.
    expect(item?.[KeyTable.ttlAttribute]).toBe(Math.ceil(EXPIRES / 1000));
    // Later (the first record expired), an older record written late: the expired one goes, the
    // TTL stays at the latest record's expiry, not the late write's.
    const later = dynamoDbKeyRecords(table, { bucketChars: BUCKET_CHARS, now: () => soon + 1_000 });
    expect(await later.keyRecordsOf(id('b'))).toEqual([]);
    await later.writeKeyRecords([write(id('d'), EXPIRES - 5_000, 32)]);
    const after = (await rawItem(id('b'), 'sms')).item ?? {};
    expect(after).not.toHaveProperty(keyRecordPlace(id('b'), 'sms', BUCKET_CHARS).name);
    expect(after).toHaveProperty(keyRecordPlace(id('c'), 'sms', BUCKET_CHARS).name);
    expect(after).toHaveProperty(keyRecordPlace(id('d'), 'sms', BUCKET_CHARS).name);
    expect(after[KeyTable.ttlAttribute]).toBe(Math.ceil(EXPIRES / 1000));
    expect((await later.keyRecordsOf(id('d'))).map((r) => r.rowsObject)).toEqual([rowsObject(32)]);
  });

  it('the table as created locally: the keys of the contract, TTL on its expiry', async () => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(Table?.KeySchema).toEqual([{ AttributeName: KeyTable.partitionKey, KeyType: 'HASH' }]);
    expect(Table?.StreamSpecification?.StreamEnabled ?? false).toBe(false);
  });

  it('a local key table of the earlier layout (a record per item, keys n and c) is created anew', async () => {
    const old = uniqueTableName('key-records-old');
    await client.send(
      new CreateTableCommand({
        TableName: old,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'n', AttributeType: 'S' },
          { AttributeName: 'c', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'n', KeyType: 'HASH' },
          { AttributeName: 'c', KeyType: 'RANGE' },
        ],
      }),
    );
    await ensureKeyTable(client, old);
    const { Table } = await client.send(new DescribeTableCommand({ TableName: old }));
    expect(Table?.KeySchema).toEqual([{ AttributeName: KeyTable.partitionKey, KeyType: 'HASH' }]);
  });

  it('a thousand key records of one batch, written concurrently, all there', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) =>
      settledRow(i % 2 === 0 ? 'email' : 'sms', T0 + 10 + i),
    );
    const started = performance.now();
    await keyRecords.writeKeyRecords(
      rows.map((row) => ({ record: keyRecordOf(archivedIntentOf(row), rowsObject(3)), expiresAt: EXPIRES })),
    );
    const elapsedMs = performance.now() - started;
    const sample = rows.filter((_, i) => i % 97 === 0);
    for (const row of sample) {
      expect((await keyRecords.keyRecordsOf(row.noticeId)).map((r) => r.channel)).toEqual([row.channel]);
    }
    // Bounded: a batch's key records are a few seconds at most even on DynamoDB Local.
    expect(elapsedMs).toBeLessThan(20_000);
    // Packed: 1 024 buckets for a thousand records, so fewer items than records.
    const items = await client.send(new ScanCommand({ TableName: tableName, Select: 'COUNT' }));
    expect(items.Count).toBeLessThan(1000);
  });
});
