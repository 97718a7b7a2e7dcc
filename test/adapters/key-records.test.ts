import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { itemFromIntent } from '../../lambdas/adapters/dynamodb/ledger/intent-items.ts';
import { dynamoDbKeyRecords } from '../../lambdas/adapters/dynamodb/ledger/key-records.ts';
import { LedgerTableClient } from '../../lambdas/adapters/dynamodb/ledger/table-client.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { LedgerTable } from '../../lambdas/contract/ledger-table.ts';
import { archivedIntentOf, type KeyRecord, keyRecordOf } from '../../lambdas/domain/archive-record.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { rowLife } from '../helpers/archive.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { T0 } from '../helpers/factories.ts';

const client = ddbClient();
const tableName = uniqueTableName('key-records');
const table = new LedgerTableClient({ client, tableName });
const keyRecords = dynamoDbKeyRecords(table);

beforeAll(async () => {
  await ensureLedgerTable(client, tableName);
});

/** A delivered row with every optional field a key record carries. */
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

async function rawItem(noticeId: string, channel: string) {
  const out = await client.send(
    new GetItemCommand({ TableName: tableName, Key: marshall({ pk: `K#${noticeId}`, sk: `C#${channel}` }) }),
  );
  return out.Item ? unmarshall(out.Item) : undefined;
}

describe('key records on DynamoDB Local', () => {
  it('written and read back whole, per channel, in one Query; the TTL the archive’s retention', async () => {
    const email = settledRow('email');
    const sms = { ...settledRow('sms'), noticeId: email.noticeId, fallback: undefined, priority: undefined };
    const expiresAt = Date.parse('2032-11-30T10:00:05.400Z');
    const records: KeyRecord[] = [
      keyRecordOf(archivedIntentOf(email), 'rows/day=2026-11-30/label/1.jsonl.gz'),
      keyRecordOf(archivedIntentOf(sms), 'rows/day=2026-11-30/label/2.jsonl.gz'),
    ];
    await keyRecords.writeKeyRecords(records.map((record) => ({ record, expiresAt })));
    const read = await keyRecords.keyRecordsOf(email.noticeId);
    expect([...read].sort((a, b) => a.channel.localeCompare(b.channel))).toEqual(
      records.map((record) => JSON.parse(JSON.stringify(record))),
    );
    const item = await rawItem(email.noticeId, 'email');
    expect(item?.[LedgerTable.ttlAttribute]).toBe(Math.ceil(expiresAt / 1000));
    // The intent item's own attribute names and forms (the submitter without its commercial prefix).
    const intentItem = itemFromIntent(email, () => 'open#0');
    for (const name of [
      'sub',
      'destFingerprint',
      'destMasked',
      'varDigests',
      'contentDigest',
      'fb',
      'templateId',
    ]) {
      expect(item?.[name], name).toEqual(intentItem[name]);
    }
    // No history, nothing sealed.
    for (const name of ['transitions', 'envelope', 'fbEnv', 'eventId'])
      expect(item, name).not.toHaveProperty(name);
  });

  it('written again: the same item; a later resolution moves it to the newer object and drops what it lacks', async () => {
    const row = settledRow('email', T0 + 1);
    const first = keyRecordOf(archivedIntentOf(row), 'rows/a.jsonl.gz');
    await keyRecords.writeKeyRecords([{ record: first, expiresAt: T0 }]);
    await keyRecords.writeKeyRecords([{ record: first, expiresAt: T0 }]);
    expect(await keyRecords.keyRecordsOf(row.noticeId)).toEqual([JSON.parse(JSON.stringify(first))]);
    const later = keyRecordOf(archivedIntentOf({ ...row, priority: undefined }), 'rows/b.jsonl.gz');
    await keyRecords.writeKeyRecords([{ record: later, expiresAt: T0 + 1000 }]);
    const [read] = await keyRecords.keyRecordsOf(row.noticeId);
    expect(read?.rowsObject).toBe('rows/b.jsonl.gz');
    expect(read).not.toHaveProperty('priority');
  });

  it('a notice with no key record reads none; the key check item sharing the prefix is never one', async () => {
    expect(await keyRecords.keyRecordsOf('ntc_nothing_here')).toEqual([]);
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: marshall({ pk: 'K#keys', sk: 'K', fingerprint: 'x' }),
      }),
    );
    expect(await keyRecords.keyRecordsOf('keys')).toEqual([]);
  });

  it('a thousand key records of one batch, written concurrently, all there', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) =>
      settledRow(i % 2 === 0 ? 'email' : 'sms', T0 + 10 + i),
    );
    const started = performance.now();
    await keyRecords.writeKeyRecords(
      rows.map((row) => ({ record: keyRecordOf(archivedIntentOf(row), 'rows/c.jsonl.gz'), expiresAt: T0 })),
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
