import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { priorityOf } from '../../lambdas/domain/priority.ts';
import type { LedgerStore } from '../../lambdas/ports/ledger-store.port.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { newIntent } from '../helpers/factories.ts';

const tableName = uniqueTableName('priority');
const ddb = new DynamoDbLedgerStore({ client: ddbClient(), tableName });

beforeAll(async () => {
  await ensureLedgerTable(ddbClient(), tableName);
});

describe.each([
  ['memory', () => new MemoryLedgerStore() as LedgerStore],
  ['DynamoDB Local', () => ddb as LedgerStore],
])('a row keeps its priority (%s)', (_name, make) => {
  it('stored and read back; a row without one is standard', async () => {
    const store = make();
    const critical = { ...newIntent({ channel: 'sms' }), priority: 'critical' as const };
    const plain = newIntent({ channel: 'sms' });
    await store.reserve(critical);
    await store.reserve(plain);
    const read = await store.get(critical.noticeId, 'sms');
    expect(read?.priority).toBe('critical');
    const old = await store.get(plain.noticeId, 'sms');
    expect(old?.priority).toBeUndefined();
    expect(old && priorityOf(old)).toBe('standard');
  });
});
