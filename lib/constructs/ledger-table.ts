import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { LedgerStreamFilter } from '../../lambdas/contract/ledger-stream.ts';
import { LedgerTable as Schema } from '../../lambdas/contract/ledger-table.ts';
import { TABLE_CAPACITY_DEFAULTS, type TableCapacity } from '../../lambdas/contract/table-capacity.ts';
import { autoScale, indexCapacityProps, tableCapacityProps } from './table-capacity.ts';

export interface LedgerTableProps {
  /** Customer-managed key for encryption at rest. */
  readonly encryptionKey: IKey;
  /**
   * Shards of the open-intent index, published to the functions as OPEN_INDEX_SHARDS. Changing
   * it on a live table strands open rows on shards no reader queries.
   * @default 4
   */
  readonly openIndexShards?: number;
  /**
   * Billing of the table and its open index (`tableCapacity`): provisioned with auto scaling of
   * each, or on demand.
   * @default TABLE_CAPACITY_DEFAULTS (provisioned, 70 % target utilisation)
   */
  readonly capacity?: TableCapacity;
}

/**
 * The one ledger table: intents, suppressions and provider gates (see
 * `lambdas/contract/ledger-table.ts`, whose names this construct imports so the
 * deployed keys, index and TTL attribute cannot drift from what the code writes).
 *
 * Capacity: provisioned with auto scaling of the table and of its index (or on demand), as
 * `tableCapacity` says (./table-capacity.ts). Durability: point-in-time recovery, deletion protection, a customer-managed key,
 * and RETAIN, so neither `cdk destroy` nor a replacement can drop the delivery history.
 */
export class LedgerTable extends Construct {
  readonly table: Table;
  readonly openIndexName: string = Schema.openIndexName;
  readonly openIndexShards: number;
  readonly encryptionKey: IKey;

  constructor(scope: Construct, id: string, props: LedgerTableProps) {
    super(scope, id);
    this.openIndexShards = props.openIndexShards ?? 4;
    this.encryptionKey = props.encryptionKey;
    const capacity = props.capacity ?? TABLE_CAPACITY_DEFAULTS;

    // Key types mirror `ledgerTableDefinition` (lambdas/adapters/dynamodb/ledger-table.ts), which
    // lib/ may not import; test/infra compares the two.
    this.table = new Table(this, 'Table', {
      partitionKey: { name: Schema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: Schema.sortKey, type: AttributeType.STRING },
      ...tableCapacityProps(capacity, capacity.ledger),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: props.encryptionKey,
      timeToLiveAttribute: Schema.ttlAttribute,
      // The change stream outcome events are derived from (lib/constructs/outcome-events.ts).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Sparse: only unresolved intents carry the shard and due time, so the reconciler's Query
    // reads due rows only (never a Scan).
    this.table.addGlobalSecondaryIndex({
      indexName: Schema.openIndexName,
      partitionKey: { name: Schema.openIndexPartitionKey, type: AttributeType.STRING },
      sortKey: { name: Schema.openIndexSortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.INCLUDE,
      nonKeyAttributes: [...Schema.openIndexProjection],
      ...indexCapacityProps(capacity, capacity.openIndex),
    });
    autoScale(this.table, capacity, capacity.ledger, { [Schema.openIndexName]: capacity.openIndex });
  }

  get tableName(): string {
    return this.table.tableName;
  }

  get tableArn(): string {
    return this.table.tableArn;
  }

  /** The change stream's ARN (NEW_AND_OLD_IMAGES): what its consumers' event sources read. */
  get streamArn(): string {
    return this.table.tableStreamArn as string;
  }

  /**
   * A consumer's filters (lambdas/contract/ledger-stream.ts) as Lambda event filtering patterns
   * on the stream record's keys, which the local stack applies from the same data.
   */
  static streamFilterCriteria(filters: readonly LedgerStreamFilter[]): Record<string, unknown>[] {
    return filters.map((f) =>
      FilterCriteria.filter({
        ...(f.eventName === undefined ? {} : { eventName: FilterRule.isEqual(f.eventName) }),
        dynamodb: {
          Keys: {
            [Schema.partitionKey]: { S: FilterRule.beginsWith(f.partitionKeyPrefix) },
            ...(f.sortKeyPrefix === undefined
              ? {}
              : { [Schema.sortKey]: { S: FilterRule.beginsWith(f.sortKeyPrefix) } }),
          },
        },
      }),
    );
  }

  /** ARN of the open-intent index, for Query grants that do not cover the table itself. */
  get openIndexArn(): string {
    return `${this.table.tableArn}/index/${Schema.openIndexName}`;
  }
}
