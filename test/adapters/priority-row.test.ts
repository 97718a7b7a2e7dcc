import { beforeAll, describe, it } from 'vitest';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { assertPriorityKept } from '../helpers/ledger-properties.ts';

// The memory store's run of the same check is in test/adapters/memory-ledger-store.test.ts (fast tier).
const tableName = uniqueTableName('priority');
const ddb = new DynamoDbLedgerStore({ client: ddbClient(), tableName });

beforeAll(async () => {
  await ensureLedgerTable(ddbClient(), tableName);
});

describe('a row keeps its priority (DynamoDB Local)', () => {
  it('stored and read back; a row without one is standard', async () => {
    await assertPriorityKept(ddb);
  });
});
