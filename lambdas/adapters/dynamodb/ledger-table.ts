import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { LedgerTable } from '../../contract/ledger-table.ts';
import {
  initialThroughput,
  type ReadWriteRange,
  TABLE_CAPACITY_DEFAULTS,
  type TableCapacity,
} from '../../contract/table-capacity.ts';

export { LedgerTable };

/**
 * A CreateTable request's billing in `capacity`'s mode (lambdas/contract/table-capacity.ts):
 * on-demand, or provisioned at the minimums (auto scaling is the CDK's; DynamoDB Local accepts
 * provisioned throughput but never enforces it, so nothing is throttled locally).
 */
export function billingOf(
  mode: TableCapacity['mode'],
  range: ReadWriteRange,
): Pick<CreateTableCommandInput, 'BillingMode' | 'ProvisionedThroughput'> {
  return mode === 'on-demand'
    ? { BillingMode: 'PAY_PER_REQUEST' }
    : { BillingMode: 'PROVISIONED', ProvisionedThroughput: initialThroughput(range) };
}

/**
 * The CreateTable request the local stack and tests use, billed as `capacity` says (the
 * deployment's default unless given); the CDK stack mirrors it.
 */
export function ledgerTableDefinition(
  tableName: string,
  capacity: TableCapacity = TABLE_CAPACITY_DEFAULTS,
): CreateTableCommandInput {
  const indexBilling = billingOf(capacity.mode, capacity.openIndex);
  return {
    TableName: tableName,
    ...billingOf(capacity.mode, capacity.ledger),
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
        ...(indexBilling.ProvisionedThroughput
          ? { ProvisionedThroughput: indexBilling.ProvisionedThroughput }
          : {}),
      },
    ],
    // The change stream outcome events are derived from (docs/outcome-events.md).
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}

/**
 * Creates the table if it is missing (two local stacks may share one DynamoDB); waits until ACTIVE.
 * A table made before outcome events gets its change stream. Answers the stream's ARN.
 */
export async function ensureLedgerTable(
  client: DynamoDBClient,
  tableName: string,
  capacity: TableCapacity = TABLE_CAPACITY_DEFAULTS,
): Promise<string> {
  await createWithTtl(client, ledgerTableDefinition(tableName, capacity), LedgerTable.ttlAttribute);
  let table = await waitUntilActive(client, tableName);
  if (openIndexOutdated(table)) table = await rebuildOpenIndex(client, tableName);
  if (!table.LatestStreamArn || table.StreamSpecification?.StreamViewType !== 'NEW_AND_OLD_IMAGES') {
    if (table.StreamSpecification?.StreamEnabled) {
      // Another view type: a stream cannot change its view; the old one goes first.
      await client.send(
        new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }),
      );
      await waitUntilActive(client, tableName);
    }
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: ledgerTableDefinition(tableName).StreamSpecification,
      }),
    );
    table = await waitUntilActive(client, tableName, (t) => Boolean(t.LatestStreamArn));
  }
  if (!table.LatestStreamArn) throw new Error(`table ${tableName} has no change stream`);
  return table.LatestStreamArn;
}

/**
 * Creates a table with TTL on `ttlAttribute` unless it exists already (stacks and tests may share
 * one DynamoDB): the ledger table's and the key table's (./key-table.ts) one way of coming to be.
 */
export async function createWithTtl(
  client: DynamoDBClient,
  definition: CreateTableCommandInput,
  ttlAttribute: string,
): Promise<void> {
  try {
    await client.send(new CreateTableCommand(definition));
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: definition.TableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
}

export async function waitUntilActive(
  client: DynamoDBClient,
  tableName: string,
  until: (table: TableDescription) => boolean = () => true,
): Promise<TableDescription> {
  for (let i = 0; i < 600; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every(
      (index) => index.IndexStatus === 'ACTIVE',
    );
    if (Table?.TableStatus === 'ACTIVE' && indexesActive && until(Table)) return Table;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}

/** Whether the table's open index projects less than this code reads from it (an older table). */
export function openIndexOutdated(table: TableDescription): boolean {
  const index = table.GlobalSecondaryIndexes?.find((i) => i.IndexName === LedgerTable.openIndexName);
  if (!index) return true;
  const projected = new Set(index.Projection?.NonKeyAttributes ?? []);
  return (
    index.Projection?.ProjectionType !== 'ALL' &&
    LedgerTable.openIndexProjection.some((attribute) => !projected.has(attribute))
  );
}

/**
 * A table made before the open index projected what the code now reads (state, attempts,
 * escalation: docs/table-design.md) gets the index again: DynamoDB cannot change a projection
 * in place, so the index is deleted and created anew (two UpdateTable calls; the new index is
 * backfilled from the rows). For the local stack's data dir and shared local services; a
 * deployed table follows docs/deploy.md "Upgrading the open index".
 */
async function rebuildOpenIndex(client: DynamoDBClient, tableName: string): Promise<TableDescription> {
  const { GlobalSecondaryIndexes } = ledgerTableDefinition(tableName);
  const index = GlobalSecondaryIndexes?.[0];
  if (!index) throw new Error('the ledger table definition has no open index');
  const hasIndex = (table: TableDescription) =>
    (table.GlobalSecondaryIndexes ?? []).some((i) => i.IndexName === LedgerTable.openIndexName);
  const current = await waitUntilActive(client, tableName);
  // An index of a provisioned table has throughput of its own; an on-demand table's has none.
  const provisioned = current.BillingModeSummary?.BillingMode !== 'PAY_PER_REQUEST';
  if (hasIndex(current)) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: LedgerTable.openIndexName } }],
      }),
    );
    await waitUntilActive(client, tableName, (table) => !hasIndex(table));
  }
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      AttributeDefinitions: ledgerTableDefinition(tableName).AttributeDefinitions,
      GlobalSecondaryIndexUpdates: [
        {
          Create: {
            IndexName: index.IndexName,
            KeySchema: index.KeySchema,
            Projection: index.Projection,
            ...(provisioned
              ? { ProvisionedThroughput: initialThroughput(TABLE_CAPACITY_DEFAULTS.openIndex) }
              : {}),
          },
        },
      ],
    }),
  );
  return await waitUntilActive(client, tableName, hasIndex);
}
