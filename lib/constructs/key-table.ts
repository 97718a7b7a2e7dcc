import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Table, TableClass, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { KeyTable as Schema } from '../../lambdas/contract/key-table.ts';
import { TABLE_CAPACITY_DEFAULTS, type TableCapacity } from '../../lambdas/contract/table-capacity.ts';
import { acknowledge } from '../nag.ts';
import { autoScale, tableCapacityProps } from './table-capacity.ts';

export interface KeyTableProps {
  /** The ledger table's customer-managed key: key records are encrypted as the rows they stand for. */
  readonly encryptionKey: IKey;
  /**
   * Billing (`tableCapacity`, its `keyTable` ranges): provisioned with auto scaling, or on demand.
   * @default TABLE_CAPACITY_DEFAULTS
   */
  readonly capacity?: TableCapacity;
}

/** Why the key table has no point-in-time recovery: the reason its cdk-nag acknowledgements give. */
export const KEY_TABLE_NO_PITR_REASON =
  'The key table holds derived data only: every key record is rebuilt from the archive’s rows/ objects, ' +
  'which S3 Object Lock (compliance mode) keeps for the same years (docs/archive.md "Key records"). PITR ' +
  'would double its storage price for six years of items; deletion protection and RETAIN guard the table itself.';

/**
 * The key table (lambdas/contract/key-table.ts, whose names this construct imports): the compact
 * key record of every resolved (notice, channel), packed into buckets of notice ids, kept for the
 * archive's retention, so that a replay after the hot window is answered and never sent twice.
 *
 * Priced for six years of items: Standard-Infrequent-Access ($0.10 per GB-month, writes and reads
 * dearer, both rare: one write per channel, one GetItem per POST), provisioned with auto scaling
 * (its writes are the archiver's batches, smooth and retried: ./table-capacity.ts) or on demand as
 * `tableCapacity` says, TTL on the expiry.
 * NO point-in-time recovery: the table is derived data, rebuilt from the archive's `rows/`
 * objects (Object Lock keeps them as long; docs/deploy.md "Rebuilding the key table"). Deletion
 * protection, RETAIN and the ledger table's customer key all the same; no stream (nothing reads
 * its changes).
 */
export class KeyTable extends Construct {
  readonly table: Table;
  readonly encryptionKey: IKey;

  constructor(scope: Construct, id: string, props: KeyTableProps) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
    const capacity = props.capacity ?? TABLE_CAPACITY_DEFAULTS;
    // Key types mirror `keyTableDefinition` (lambdas/adapters/dynamodb/key-table.ts); test/infra
    // compares the two.
    this.table = new Table(this, 'Table', {
      partitionKey: { name: Schema.partitionKey, type: AttributeType.STRING },
      ...tableCapacityProps(capacity, capacity.keyTable),
      tableClass: TableClass.STANDARD_INFREQUENT_ACCESS,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: false },
      deletionProtection: true,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: props.encryptionKey,
      timeToLiveAttribute: Schema.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    autoScale(this.table, capacity, capacity.keyTable);
    acknowledge(
      this.table,
      ...[
        'AwsSolutions-DDB3',
        'HIPAA.Security-DynamoDBPITREnabled',
        'HIPAA.Security-DynamoDBInBackupPlan',
      ].map((rule) => ({ rule, reason: KEY_TABLE_NO_PITR_REASON })),
    );
  }

  get tableName(): string {
    return this.table.tableName;
  }

  get tableArn(): string {
    return this.table.tableArn;
  }
}
