import { Stack } from 'aws-cdk-lib';
import { CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { Archive, type ArchiveColumn } from '../../lambdas/contract/archive.ts';
import { acknowledgeWildcardResources } from '../nag.ts';
import type { ArchiveBucket } from './archive-bucket.ts';

export interface ArchiveCatalogProps {
  readonly archive: ArchiveBucket;
  /** The facts' columns, as lambdas/contract/archive.ts defines them for the archiver's lines. */
  readonly columns: readonly ArchiveColumn[];
  /** Name of the Athena workgroup the archive is queried in. */
  readonly workGroupName: string;
  /** The query policy's name: `<prefix>-archive-query-<region>`. */
  readonly policyNamePrefix: string;
  /**
   * What one query may scan before Athena cancels it (bytes): a query without a `day` range reads
   * every object of six years.
   */
  readonly bytesScannedCutoffPerQuery: number;
}

/** The JSON SerDe Athena reads one JSON object per line with (gzip'd objects by their `.gz` extension). */
export const JSON_SERDE = 'org.openx.data.jsonserde.JsonSerDe';

/**
 * What Athena needs to query the archive's facts (docs/archive.md): a Glue database and the
 * `facts` table over `s3://<archive>/facts/`, and a workgroup to run the queries in.
 *
 * The table has no partitions to maintain: partition projection computes them from the `day`
 * key (`facts/day=yyyy-MM-dd/…`, one per UTC day from {@link Archive.firstDay} to today), so
 * nothing (no crawler, no MSCK REPAIR) runs as days go by, and a query's `day` range reads only
 * those days' objects.
 *
 * The workgroup keeps query results in Athena's own storage (managed query results: encrypted,
 * deleted after 24 hours), so no results bucket holds copies of the archive's fingerprints, and
 * callers cannot point it elsewhere (the workgroup's configuration is enforced).
 *
 * The query policy is what a person who queries the archive needs, and no more: run queries in
 * this workgroup, read the table's definition, list and read `facts/` (never `rows/`, which only
 * the API reads; never a write: the archive has one writer).
 */
export class ArchiveCatalog extends Construct {
  readonly database: CfnDatabase;
  readonly factsTable: CfnTable;
  readonly workGroup: CfnWorkGroup;
  /** Attach to the roles of people who query the archive (a fixed name, as the caller policies). */
  readonly queryPolicy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: ArchiveCatalogProps) {
    super(scope, id);
    const { archive } = props;
    const catalogId = Stack.of(this).account;

    this.database = new CfnDatabase(this, 'Database', {
      catalogId,
      databaseInput: {
        name: Archive.glueDatabase,
        description: 'notice-ledger: the write-once audit archive (docs/archive.md)',
      },
    });

    const day = Archive.partitionKey;
    this.factsTable = new CfnTable(this, 'FactsTable', {
      catalogId,
      databaseName: Archive.glueDatabase,
      tableInput: {
        name: Archive.glueFactsTable,
        description: 'notice-ledger: one line per fact of a ledger row (docs/archive.md)',
        tableType: 'EXTERNAL_TABLE',
        partitionKeys: [{ name: day, type: 'string' }],
        parameters: {
          classification: 'json',
          compressionType: 'gzip',
          'projection.enabled': 'true',
          [`projection.${day}.type`]: 'date',
          [`projection.${day}.format`]: 'yyyy-MM-dd',
          [`projection.${day}.range`]: `${Archive.firstDay},NOW`,
          [`projection.${day}.interval`]: '1',
          [`projection.${day}.interval.unit`]: 'DAYS',
          'storage.location.template': `${archive.location(Archive.factsPrefix)}${day}=\${${day}}/`,
        },
        storageDescriptor: {
          location: archive.location(Archive.factsPrefix),
          columns: props.columns.map(({ name, type, comment }) => ({ name, type, comment })),
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          compressed: true,
          serdeInfo: {
            serializationLibrary: JSON_SERDE,
            // A line the archiver wrote and Athena cannot read is a defect to see, not a row to skip.
            parameters: { 'ignore.malformed.json': 'false' },
          },
        },
      },
    });
    this.factsTable.node.addDependency(this.database);

    this.workGroup = new CfnWorkGroup(this, 'WorkGroup', {
      name: props.workGroupName,
      description: 'notice-ledger: queries of the audit archive (docs/archive.md)',
      recursiveDeleteOption: false,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery,
        managedQueryResultsConfiguration: { enabled: true },
        engineVersion: { selectedEngineVersion: 'AUTO' },
      },
    });

    const stack = Stack.of(this);
    const facts = archive.objectsArn(Archive.factsPrefix);
    this.queryPolicy = new ManagedPolicy(this, 'QueryPolicy', {
      managedPolicyName: `${props.policyNamePrefix}-archive-query-${stack.region}`,
      description: 'notice-ledger: query the audit archive with Athena (docs/archive.md)',
      statements: [
        new PolicyStatement({
          sid: 'RunArchiveQueries',
          actions: [
            'athena:StartQueryExecution',
            'athena:GetQueryExecution',
            'athena:GetQueryResults',
            'athena:StopQueryExecution',
            'athena:GetWorkGroup',
          ],
          resources: [
            stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: props.workGroupName }),
          ],
        }),
        new PolicyStatement({
          sid: 'ReadArchiveTable',
          actions: ['glue:GetDatabase', 'glue:GetTable'],
          resources: [
            stack.formatArn({ service: 'glue', resource: 'catalog' }),
            stack.formatArn({ service: 'glue', resource: 'database', resourceName: Archive.glueDatabase }),
            stack.formatArn({
              service: 'glue',
              resource: 'table',
              resourceName: `${Archive.glueDatabase}/${Archive.glueFactsTable}`,
            }),
          ],
        }),
        new PolicyStatement({ sid: 'ReadArchivedFacts', actions: ['s3:GetObject'], resources: [facts] }),
        new PolicyStatement({
          sid: 'ListArchivedFacts',
          actions: ['s3:ListBucket'],
          resources: [archive.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${Archive.factsPrefix}*`] } },
        }),
        new PolicyStatement({
          sid: 'LocateArchive',
          actions: ['s3:GetBucketLocation'],
          resources: [archive.bucketArn],
        }),
      ],
    });
    acknowledgeWildcardResources(
      this.queryPolicy,
      [facts],
      'A query reads the objects of the days it selects, named per stream batch at run time; the grant covers ' +
        'the facts/ prefix only, read-only.',
    );
  }

  get workGroupName(): string {
    return this.workGroup.name;
  }
}
