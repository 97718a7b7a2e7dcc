import {
  type CreateTableCommandInput,
  DeleteTableCommand,
  type DynamoDBClient,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
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
    AttributeDefinitions: [{ AttributeName: KeyTable.partitionKey, AttributeType: 'S' }],
    KeySchema: [{ AttributeName: KeyTable.partitionKey, KeyType: 'HASH' }],
  };
}

/**
 * Creates the key table if it is missing (stacks may share one DynamoDB), with its TTL; waits
 * until ACTIVE. A local table of an earlier layout (other keys: a record per item) is dropped and
 * created anew: its records are derived data, and the archive they came from is still there
 * (docs/deploy.md "Rebuilding the key table").
 */
export async function ensureKeyTable(
  client: DynamoDBClient,
  tableName: string,
  capacity: TableCapacity = TABLE_CAPACITY_DEFAULTS,
): Promise<void> {
  const definition = keyTableDefinition(tableName, capacity);
  await createWithTtl(client, definition, KeyTable.ttlAttribute);
  const table = await waitUntilActive(client, tableName);
  const keysOf = (schema: readonly { AttributeName?: string; KeyType?: string }[] | undefined) =>
    (schema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  if (keysOf(table.KeySchema) === keysOf(definition.KeySchema)) return;
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  await waitUntilTableNotExists({ client, maxWaitTime: 10, minDelay: 1 }, { TableName: tableName });
  await createWithTtl(client, definition, KeyTable.ttlAttribute);
  await waitUntilActive(client, tableName);
}
