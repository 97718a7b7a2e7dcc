import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { LedgerTable } from '../../contract/ledger-table.ts';

export { LedgerTable };

/** The CreateTable request the local stack and tests use; the CDK stack mirrors it. */
export function ledgerTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: LedgerTable.partitionKey, AttributeType: 'S' },
      { AttributeName: LedgerTable.sortKey, AttributeType: 'S' },
      { AttributeName: LedgerTable.openIndexPartitionKey, AttributeType: 'S' },
      { AttributeName: LedgerTable.openIndexSortKey, AttributeType: 'N' },
    ],
    KeySchema: [
      { AttributeName: LedgerTable.partitionKey, KeyType: 'HASH' },
      { AttributeName: LedgerTable.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: LedgerTable.openIndexName,
        KeySchema: [
          { AttributeName: LedgerTable.openIndexPartitionKey, KeyType: 'HASH' },
          { AttributeName: LedgerTable.openIndexSortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...LedgerTable.openIndexProjection] },
      },
    ],
  };
}

/** Creates the table if it is missing (two local stacks may share one DynamoDB); waits until ACTIVE. */
export async function ensureLedgerTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(ledgerTableDefinition(tableName)));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: LedgerTable.ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
