import type { CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KeyTable } from '../../contract/key-table.ts';
import { TABLE_CAPACITY_DEFAULTS, type TableCapacity } from '../../contract/table-capacity.ts';
import { billingOf, createWithTtl, waitUntilActive } from './ledger-table.ts';

/**
 * The key table's CreateTable request (lambdas/contract/key-table.ts), as the local stack and
 * tests create it; the CDK (lib/constructs/key-table.ts) mirrors it, and test/infra compares the
 * two. Standard-Infrequent-Access, no stream (nothing consumes its changes).
 */
export function keyTableDefinition(
  tableName: string,
  capacity: TableCapacity = TABLE_CAPACITY_DEFAULTS,
): CreateTableCommandInput {
  return {
    TableName: tableName,
    ...billingOf(capacity.mode, capacity.keyTable),
    TableClass: 'STANDARD_INFREQUENT_ACCESS',
    AttributeDefinitions: [
      { AttributeName: KeyTable.partitionKey, AttributeType: 'S' },
      { AttributeName: KeyTable.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: KeyTable.partitionKey, KeyType: 'HASH' },
      { AttributeName: KeyTable.sortKey, KeyType: 'RANGE' },
    ],
  };
}

/** Creates the key table if it is missing (stacks may share one DynamoDB), with its TTL; waits until ACTIVE. */
export async function ensureKeyTable(
  client: DynamoDBClient,
  tableName: string,
  capacity: TableCapacity = TABLE_CAPACITY_DEFAULTS,
): Promise<void> {
  await createWithTtl(client, keyTableDefinition(tableName, capacity), KeyTable.ttlAttribute);
  await waitUntilActive(client, tableName);
}
