/**
 * Intake on DynamoDB Local with the real key-record reader (issue 22): what the replay check costs
 * (one eventually consistent GetItem of its bucket per request; AWS bills 0.5 read units for it, records or none,
 * while the bucket fits in 4 KB), and that a notice whose rows left the table is answered from its key
 * records without a write.
 */
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { dynamoDbKeyRecords } from '../../lambdas/adapters/dynamodb/key-records.ts';
import { ensureKeyTable } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { LedgerTableClient } from '../../lambdas/adapters/dynamodb/ledger/table-client.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { keyTableNameOf } from '../../lambdas/contract/key-table.ts';
import { type ArchivedIntent, archivedIntentOf, keyRecordOf } from '../../lambdas/domain/archive-record.ts';
import type { IntakeDependencies } from '../../lambdas/use-cases/dependencies.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { T0, TEST_KEY, TEST_TIMING } from '../helpers/factories.ts';
import { EXAMPLE_REQUEST } from '../helpers/fakes.ts';

const client = ddbClient();
const tableName = uniqueTableName('intake-key-records');
/** Every request with the read or write units it consumed, in order. */
const requests: { operation: string; units: number | undefined }[] = [];
const tableOptions = {
  client,
  tableName,
  onConsumedCapacity: (operation: string, capacity: { CapacityUnits?: number } | undefined) => {
    requests.push({ operation: operation.replace(/:.*/, ''), units: capacity?.CapacityUnits });
  },
};
const store = new DynamoDbLedgerStore(tableOptions);
const keyTableName = keyTableNameOf(tableName);
const keyRecords = dynamoDbKeyRecords(new LedgerTableClient({ ...tableOptions, tableName: keyTableName }), {
  bucketChars: 2,
});
/** The archive's `rows/` objects, by key (the S3 reader is tested against the local store elsewhere). */
const archivedObjects = new Map<string, ArchivedIntent>();

const deps: IntakeDependencies = {
  store,
  keyRecords,
  archivedRows: {
    archivedRow: async (objectKey) => {
      requests.push({ operation: 'GetObject', units: undefined });
      return archivedObjects.get(objectKey);
    },
  },
  queue: { enqueue: async () => undefined },
  sealer: new AesGcmEnvelopeSealer(new StaticDataKeySource(new Uint8Array(32).fill(7))),
  catalog: templateCatalog,
  clock: { now: () => T0 },
  fingerprintKey: TEST_KEY,
  timing: TEST_TIMING,
  defaultDeadlineMs: 86_400_000,
  configuredChannels: ['email', 'sms'],
  sendWindows: undefined,
};

/**
 * The notice's rows delivered, archived as the archiver leaves them (each row in a `rows/` object,
 * its key record in the key table), then gone from the ledger table as TTL removes them.
 */
async function pastTheWindow(noticeId: string): Promise<void> {
  const rows = await store.getNotice(noticeId);
  const records = rows.map((row) => {
    const objectKey = `rows/day=2026-11-30/label/${noticeId}-${row.channel}.jsonl.gz`;
    const archived = archivedIntentOf({ ...row, state: 'delivered' });
    archivedObjects.set(objectKey, archived);
    return keyRecordOf(archived, objectKey);
  });
  await keyRecords.writeKeyRecords(records.map((record) => ({ record, expiresAt: T0 + 1e12 })));
  for (const row of rows) {
    await client.send(
      new DeleteItemCommand({
        TableName: tableName,
        Key: marshall({ pk: `N#${row.noticeId}`, sk: `C#${row.channel}` }),
      }),
    );
  }
}

beforeAll(async () => {
  await ensureLedgerTable(client, tableName);
  await ensureKeyTable(client, keyTableName);
});

describe('intake with key records on DynamoDB Local', () => {
  it('a new notice costs one GetItem of its key records’ bucket before its one reservation (one transaction)', async () => {
    requests.length = 0;
    const result = await submitNotice({ ...EXAMPLE_REQUEST, eventId: 'evt_kr_cost' }, deps);
    expect(result).toMatchObject({ kind: 'recorded', created: true });
    expect(requests.map((r) => r.operation)).toEqual(['keyRecordsOf', 'reserve']);
    // A GetItem that finds nothing is billed its minimum, 0.5 RRU eventually consistent, as AWS
    // bills it (DynamoDB Local reports it so; a Query that found nothing was reported 0).
    expect(requests[0]?.units).toBe(0.5);
  });

  it('a notice whose rows left the table is answered from its key records: one GetItem, no write', async () => {
    // Prepare: recorded, delivered (planned as a report would), archived, then gone as TTL removes it
    const submitted = await submitNotice({ ...EXAMPLE_REQUEST, eventId: 'evt_kr_gone' }, deps);
    if (submitted.kind !== 'recorded') throw new Error(submitted.kind);
    await pastTheWindow(submitted.noticeId);
    requests.length = 0;

    // Act
    const replay = await submitNotice({ ...EXAMPLE_REQUEST, eventId: 'evt_kr_gone' }, deps);

    // Assess
    expect(replay).toEqual({
      kind: 'recorded',
      noticeId: submitted.noticeId,
      created: false,
      channels: [
        { channel: 'email', state: 'delivered', outcome: 'duplicate' },
        { channel: 'sms', state: 'delivered', outcome: 'duplicate' },
      ],
    });
    expect(requests.map((r) => r.operation)).toEqual(['keyRecordsOf']);
    // Two small key records: still one read unit's half (eventually consistent, under 4 KB).
    expect(requests[0]?.units).toBe(0.5);
    expect(await store.getNotice(submitted.noticeId)).toEqual([]);
  });

  it('changed content past the window: a conflict naming the variable, read from the archived row (one GetObject per conflicting channel)', async () => {
    // Prepare: as above, with the notice archived and gone from the table
    const submitted = await submitNotice({ ...EXAMPLE_REQUEST, eventId: 'evt_kr_changed' }, deps);
    if (submitted.kind !== 'recorded') throw new Error(submitted.kind);
    await pastTheWindow(submitted.noticeId);
    requests.length = 0;

    // Act
    const replay = await submitNotice(
      {
        ...EXAMPLE_REQUEST,
        eventId: 'evt_kr_changed',
        variables: { ...EXAMPLE_REQUEST.variables, firstName: 'Someone else' },
      },
      deps,
    );

    // Assess
    expect(replay).toEqual({
      kind: 'conflict',
      noticeId: submitted.noticeId,
      channels: [
        {
          channel: 'email',
          state: 'delivered',
          outcome: 'conflict',
          differs: [{ path: 'variables.firstName', certainty: 'differs' }],
        },
        {
          channel: 'sms',
          state: 'delivered',
          outcome: 'conflict',
          differs: [{ path: 'variables.firstName', certainty: 'differs' }],
        },
      ],
    });
    expect(requests.map((r) => r.operation)).toEqual(['keyRecordsOf', 'GetObject', 'GetObject']);
    expect(await store.getNotice(submitted.noticeId)).toEqual([]);
  });
});
