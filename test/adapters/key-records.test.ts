import { DescribeTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { itemSizeBytes } from '../../bench/lib/item-size.ts';
import { dynamoDbKeyRecords, keyRecordItem } from '../../lambdas/adapters/dynamodb/key-records.ts';
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
const keyRecords = dynamoDbKeyRecords(table);

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

async function rawItem(noticeId: string, channel: string) {
  const out = await client.send(
    new GetItemCommand({
      TableName: tableName,
      Key: marshall({ [KeyTable.partitionKey]: noticeId, [KeyTable.sortKey]: channel }),
    }),
  );
  return out.Item;
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
    const item = unmarshall((await rawItem(email.noticeId, 'email')) ?? {});
    expect(item[KeyTable.ttlAttribute]).toBe(Math.ceil(expiresAt / 1000));
  });

  it('compact: the keys, state, a cut digest, the submitter digest, the short rows/ key, the TTL; nothing else', async () => {
    const row = settledRow('email', T0 + 5);
    const record = keyRecordOf(archivedIntentOf(row), rowsObject(7));
    await keyRecords.writeKeyRecords([{ record, expiresAt: EXPIRES }]);
    const stored = (await rawItem(row.noticeId, 'email')) ?? {};
    expect(Object.keys(stored).sort()).toEqual(
      [
        KeyTable.partitionKey,
        KeyTable.sortKey,
        KeyTable.state,
        KeyTable.contentDigest,
        KeyTable.submitter,
        KeyTable.rowsObject,
        KeyTable.ttlAttribute,
      ].sort(),
    );
    const item = unmarshall(stored);
    // The object's key without its constant head and tail; the reader gives it back whole.
    expect(item[KeyTable.rowsObject]).toBe(
      `2026-11-30/2026-11-01T120000.000/${rowsObject(7).split('/').at(-1)?.replace(Archive.objectSuffix, '')}`,
    );
    expect(item[KeyTable.contentDigest]).toHaveLength(KEY_DIGEST_CHARS);
    // As DynamoDB bills it (names and values): what the archiver writes is what the cost model prices.
    expect(itemSizeBytes(stored)).toBe(
      itemSizeBytes(marshall(keyRecordItem({ record, expiresAt: EXPIRES }))),
    );
    expect(itemSizeBytes(stored)).toBeLessThan(200);
    // No history, nothing sealed, none of the intent's content fields.
    const text = JSON.stringify(item);
    for (const absent of [
      row.templateId,
      row.destination.fingerprint,
      row.destination.masked,
      'critical',
      'billing',
    ])
      expect(text, absent).not.toContain(absent);
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

  it('a notice with no key record reads none', async () => {
    expect(await keyRecords.keyRecordsOf('ntc_nothing_here')).toEqual([]);
  });

  it('the table as created locally: the keys of the contract, TTL on its expiry', async () => {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: KeyTable.partitionKey, KeyType: 'HASH' },
      { AttributeName: KeyTable.sortKey, KeyType: 'RANGE' },
    ]);
    expect(Table?.StreamSpecification?.StreamEnabled ?? false).toBe(false);
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
  });
});
