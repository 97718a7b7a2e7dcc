/**
 * The write-once archive (issue 22) as synthesized: the Object Lock bucket and its catalog in the
 * stateful stack; the archiver, its event source on the ledger stream, its grants and alarms in
 * the delivery stack; the http function's read of archived rows.
 */
import { Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyTableDefinition } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { ARCHIVE_FACT_COLUMNS, Archive } from '../../lambdas/contract/archive.ts';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import { FUNCTION_NAMES } from '../../lambdas/contract/functions.ts';
import { KeyTable } from '../../lambdas/contract/key-table.ts';
import { LedgerTable as Schema } from '../../lambdas/contract/ledger-table.ts';
import { readConfig } from '../../lib/config.ts';
import { JSON_SERDE } from '../../lib/constructs/archive-catalog.ts';
import { KEY_TABLE_NO_PITR_REASON } from '../../lib/constructs/key-table.ts';
import { ARCHIVER_STREAM } from '../../lib/constructs/ledger-archiver.ts';
import { checkTargets, synthesizeTarget } from '../../lib/deploy-check.ts';
import {
  actionsOf,
  grantsOf,
  identityStatements,
  logicalId,
  roleStatements,
  type Statement,
  type Synthesized,
  synthesize,
} from './synth.ts';

let synth: Synthesized;
let stateful: Template;
let delivery: Template;

beforeAll(() => {
  synth = synthesize({ bundle: false });
  stateful = synth.statefulTemplate;
  delivery = synth.deliveryTemplate;
});

const ref = (construct: Parameters<typeof logicalId>[0], attr?: string) =>
  attr ? { 'Fn::GetAtt': [logicalId(construct), attr] } : { Ref: logicalId(construct) };
/** A string holding the archive bucket's name, as both stacks write it (environment-agnostic). */
const withBucketName = (before: string, after = '') => ({
  'Fn::Join': [
    '',
    [
      `${before}notice-ledger-archive-`,
      { Ref: 'AWS::AccountId' },
      '-',
      { Ref: 'AWS::Region' },
      ...(after ? [after] : []),
    ],
  ],
});
const BUCKET_NAME = withBucketName('');
/** The bucket's ARN, or an object pattern of it (`/facts/*`), as the grants write it. */
const bucketArn = (suffix = '') => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':s3:::notice-ledger-archive-',
      { Ref: 'AWS::AccountId' },
      '-',
      { Ref: 'AWS::Region' },
      ...(suffix ? [suffix] : []),
    ],
  ],
});
const objects = (prefix: string) => bucketArn(`/${prefix}*`);
const BUCKET_ARN = bucketArn();

function objectLockOf(template: Template): unknown {
  const buckets = Object.values(template.findResources('AWS::S3::Bucket')).filter(
    (b) => b.Properties.ObjectLockEnabled === true,
  );
  expect(buckets).toHaveLength(1);
  return buckets[0]?.Properties.ObjectLockConfiguration;
}

describe('archive bucket (stateful stack)', () => {
  it('locks every object in compliance mode for six years by default, versioned, retained', () => {
    stateful.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BucketName: BUCKET_NAME,
        ObjectLockEnabled: true,
        ObjectLockConfiguration: {
          ObjectLockEnabled: 'Enabled',
          Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 6 } },
        },
        VersioningConfiguration: { Status: 'Enabled' },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LoggingConfiguration: { DestinationBucketName: ref(synth.stateful.archive.accessLogs) },
      }),
    });
    expect(synth.config.archive.retentionYears).toBe(6);
  });

  it('has no lifecycle rule that could expire or move an object', () => {
    const archive = stateful.findResources('AWS::S3::Bucket', {
      Properties: { ObjectLockEnabled: true },
    });
    for (const bucket of Object.values(archive))
      expect(bucket.Properties.LifecycleConfiguration).toBeUndefined();
  });

  it('refuses, for everyone, a request without TLS and an upload that could overwrite (no If-None-Match)', () => {
    const policy = Object.values(stateful.findResources('AWS::S3::BucketPolicy')).find(
      (p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify(ref(synth.stateful.archive.bucket)),
    );
    const statements = policy?.Properties.PolicyDocument.Statement as Statement[];
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    expect(statements).toContainEqual({
      Sid: 'WriteOnceOnly',
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 's3:PutObject',
      Resource: { 'Fn::Join': ['', [ref(synth.stateful.archive.bucket, 'Arn'), '/*']] },
      Condition: { Null: { 's3:if-none-match': 'true' } },
    });
    // Nothing in the stateful stack allows anything on the archive.
    expect(statements.filter((s) => s.Effect === 'Allow')).toEqual([]);
  });

  it('takes its retention from archiveRetentionYears', () => {
    const longer = synthesize({ bundle: false, settings: { archiveRetentionYears: 7 } });
    expect(objectLockOf(longer.statefulTemplate)).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 7 } },
    });
  });

  it('refuses a retention under six years, and deploy:check with it', () => {
    expect(() => readConfig({ archiveRetentionYears: 5 })).toThrow(ConfigError);
    expect(() => readConfig({ archiveRetentionYears: 5 })).toThrow(/archiveRetentionYears/);
    const [target] = checkTargets({ archiveRetentionYears: 5 });
    const result = synthesizeTarget(target as NonNullable<typeof target>, {
      outdir: `${process.env.TMPDIR ?? '/tmp'}/notice-ledger-archive-check-${process.pid}`,
      bundle: false,
    });
    expect(result.error).toMatch(/archiveRetentionYears/);
    expect(result.stacks).toEqual([]);
  });
});

describe('archive catalog (stateful stack)', () => {
  const table = () => {
    const tables = Object.values(stateful.findResources('AWS::Glue::Table'));
    expect(tables).toHaveLength(1);
    return tables[0]?.Properties;
  };

  it('defines the facts table over facts/ with the contract’s columns, read by the JSON SerDe', () => {
    stateful.hasResourceProperties('AWS::Glue::Database', {
      CatalogId: { Ref: 'AWS::AccountId' },
      DatabaseInput: { Name: Archive.glueDatabase },
    });
    const { DatabaseName, TableInput } = table();
    expect(DatabaseName).toBe(Archive.glueDatabase);
    expect(TableInput.Name).toBe(Archive.glueFactsTable);
    expect(TableInput.TableType).toBe('EXTERNAL_TABLE');
    expect(TableInput.StorageDescriptor.Columns).toEqual(
      ARCHIVE_FACT_COLUMNS.map(({ name, type, comment }) => ({ Name: name, Type: type, Comment: comment })),
    );
    expect(TableInput.StorageDescriptor).toMatchObject({
      Location: withBucketName('s3://', `/${Archive.factsPrefix}`),
      InputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
      SerdeInfo: { SerializationLibrary: JSON_SERDE },
    });
    expect(JSON_SERDE).toBe('org.openx.data.jsonserde.JsonSerDe');
  });

  it('projects the day partitions from the first day to now: nothing to add as days go by', () => {
    const { TableInput } = table();
    expect(TableInput.PartitionKeys).toEqual([{ Name: Archive.partitionKey, Type: 'string' }]);
    expect(TableInput.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.day.type': 'date',
      'projection.day.format': 'yyyy-MM-dd',
      'projection.day.range': `${Archive.firstDay},NOW`,
      'storage.location.template': withBucketName('s3://', `/facts/day=\${day}/`),
    });
  });

  it('queries in a workgroup whose results stay in Athena (24 h, encrypted), with a scan cutoff', () => {
    stateful.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'notice-ledger-archive',
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        ManagedQueryResultsConfiguration: { Enabled: true },
        BytesScannedCutoffPerQuery: synth.config.archive.bytesScannedCutoffPerQuery,
      },
    });
  });

  it('gives people who query it the workgroup, the table and facts/ read-only: never rows/, never a write', () => {
    const policy = Object.values(stateful.findResources('AWS::IAM::ManagedPolicy')).find((p) =>
      JSON.stringify(p.Properties.ManagedPolicyName).includes('archive-query'),
    );
    const statements = (policy?.Properties.PolicyDocument.Statement ?? []) as Statement[];
    const g = grantsOf(statements);
    expect([...g.keys()].sort()).toEqual([
      'athena:GetQueryExecution',
      'athena:GetQueryResults',
      'athena:GetWorkGroup',
      'athena:StartQueryExecution',
      'athena:StopQueryExecution',
      'glue:GetDatabase',
      'glue:GetTable',
      's3:GetBucketLocation',
      's3:GetObject',
      's3:ListBucket',
    ]);
    expect(g.get('s3:GetObject')).toEqual([JSON.stringify(objects(Archive.factsPrefix))]);
    const list = statements.find((s) => s.Sid === 'ListArchivedFacts');
    expect(list?.Condition).toEqual({ StringLike: { 's3:prefix': ['facts/*'] } });
  });
});

describe('archiver (delivery stack)', () => {
  const archiver = () => synth.delivery.functions.archiver;
  const mappingOf = (fn: 'archiver' | 'outcomeStream') =>
    Object.values(delivery.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) =>
        JSON.stringify(m.Properties.FunctionName) ===
        JSON.stringify(ref(synth.delivery.functions[fn].function)),
    );

  it('reads the ledger stream: batches of 1000 within 5 minutes, never bisected, one per shard, failures to its queue', () => {
    const mappings = mappingOf('archiver');
    expect(mappings).toHaveLength(1);
    const [outcome] = mappingOf('outcomeStream');
    expect(mappings[0]?.Properties).toEqual({
      FunctionName: ref(archiver().function),
      // The same stream as the outcome events'.
      EventSourceArn: outcome?.Properties.EventSourceArn,
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10_000,
      MaximumBatchingWindowInSeconds: 300,
      BisectBatchOnFunctionError: false,
      ParallelizationFactor: 1,
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 12 * 3600,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: ref(synth.delivery.archiving.failureQueue, 'Arn') } },
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ dynamodb: { Keys: { pk: { S: [{ prefix: 'N#' }] } } } }) },
          {
            Pattern: JSON.stringify({
              eventName: ['INSERT'],
              dynamodb: { Keys: { pk: { S: [{ prefix: 'S#' }] }, sk: { S: [{ prefix: 'H#' }] } } },
            }),
          },
        ],
      },
    });
    expect(JSON.stringify(outcome?.Properties.EventSourceArn)).toContain('StreamArn');
    // Within the 15 minutes: the window and the alarm's bound leave room for the write.
    expect(ARCHIVER_STREAM.maxBatchingWindow.toSeconds()).toBeLessThan(
      ARCHIVER_STREAM.iteratorAgeAlarm.toSeconds(),
    );
    expect(ARCHIVER_STREAM.iteratorAgeAlarm.toMinutes()).toBeLessThan(15);
    // Given up while the stream (24 h) still holds the batch and what is queued behind it.
    expect(ARCHIVER_STREAM.maxRecordAge.toHours()).toBeLessThan(24);
  });

  it('may write the archive’s two prefixes, the key table and its failure queue, read the stream: nothing else', () => {
    const statements = roleStatements(delivery, logicalId(archiver().role));
    const g = grantsOf(statements);
    const outcomeGrants = grantsOf(
      roleStatements(delivery, logicalId(synth.delivery.functions.outcomeStream.role)),
    );
    const own = (construct: Parameters<typeof logicalId>[0], attr: string) => [
      JSON.stringify(ref(construct, attr)),
    ];
    const failures = synth.delivery.archiving.failureQueue;
    expect(Object.fromEntries(g)).toEqual({
      'logs:CreateLogStream': own(archiver().logGroup, 'Arn'),
      'logs:PutLogEvents': own(archiver().logGroup, 'Arn'),
      'dynamodb:DescribeStream': outcomeGrants.get('dynamodb:DescribeStream'),
      'dynamodb:GetRecords': outcomeGrants.get('dynamodb:GetRecords'),
      'dynamodb:GetShardIterator': outcomeGrants.get('dynamodb:GetShardIterator'),
      'kms:Decrypt': outcomeGrants.get('kms:Decrypt'),
      'kms:DescribeKey': outcomeGrants.get('kms:Decrypt'),
      'kms:Encrypt': outcomeGrants.get('kms:Decrypt'),
      'kms:GenerateDataKey': outcomeGrants.get('kms:Decrypt'),
      's3:PutObject': [JSON.stringify(objects('facts/')), JSON.stringify(objects('rows/'))],
      's3:GetObject': [JSON.stringify(objects('facts/')), JSON.stringify(objects('rows/'))],
      's3:ListBucket': [JSON.stringify(BUCKET_ARN)],
      'dynamodb:UpdateItem': [keyTableArn()],
      'sqs:SendMessage': own(failures, 'Arn'),
      'sqs:GetQueueAttributes': own(failures, 'Arn'),
      'sqs:GetQueueUrl': own(failures, 'Arn'),
    });
    // The key table only: nothing of the ledger table (no item of it, so no LeadingKeys to bound);
    // the tables' key through DynamoDB only.
    expect(keyTableArn()).not.toEqual(ledgerTableArn());
    expect(statements.find((s) => actionsOf(s).includes('dynamodb:UpdateItem'))?.Condition).toBeUndefined();
    expect(
      JSON.stringify(statements.find((s) => s.Sid === 'LedgerTableKeyThroughDynamoDB')?.Condition),
    ).toContain('dynamodb.');
  });

  it('grants no one a delete, a retention change or a bypass on any S3 object', () => {
    for (const template of [stateful, delivery]) {
      for (const statement of identityStatements(template).filter((s) => s.Effect === 'Allow')) {
        for (const action of actionsOf(statement)) {
          expect(action).not.toMatch(
            /^s3:(\*|Delete|PutObjectRetention|PutObjectLegalHold|Bypass|PutBucket)/,
          );
        }
      }
    }
  });

  it('lets the http function read archived rows (rows/ only), and no other function touch the archive', () => {
    const http = roleStatements(delivery, logicalId(synth.delivery.functions.http.role));
    const s3 = http.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    expect(s3).toEqual([
      {
        Sid: 'ReadArchivedRows',
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: objects(Archive.rowsPrefix),
      },
    ]);
    // It finds a notice's key records with a GetItem of its bucket, and may do nothing else there.
    const keyTableGrants = [...grantsOf(http)].filter(([, resources]) => resources?.includes(keyTableArn()));
    expect(keyTableGrants.map(([action]) => action)).toEqual(['dynamodb:GetItem']);
    for (const name of FUNCTION_NAMES.filter((n) => n !== 'http' && n !== 'archiver')) {
      const statements = roleStatements(delivery, logicalId(synth.delivery.functions[name].role));
      expect(
        statements.flatMap(actionsOf).filter((a) => a.startsWith('s3:')),
        name,
      ).toEqual([]);
    }
    for (const name of ['http', 'archiver'] as const) {
      const variables = delivery.findResources('AWS::Lambda::Function', {
        Properties: { FunctionName: Match.absent() },
      });
      const fn = variables[logicalId(synth.delivery.functions[name].function)];
      expect(fn?.Properties.Environment.Variables.ARCHIVE_BUCKET, name).toEqual(BUCKET_NAME);
    }
  });

  it('alarms on given-up batches, on reading more than 10 minutes behind, and on errors', () => {
    const alarms = synth.delivery.monitoring.alarms.map((a) => a.node.id);
    expect(alarms).toEqual(
      expect.arrayContaining(['ArchiverDeadLetters', 'ArchiverIteratorAge', 'ArchiverErrors']),
    );
    delivery.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: ref(synth.delivery.archiving.failureQueue, 'QueueName') }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    delivery.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: ref(archiver().function) }],
      Statistic: 'Maximum',
      Threshold: 10 * 60_000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    delivery.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(archiver().function) }],
    });
  });
});

/** The cdk-nag rules acknowledged on a construct itself, with their reasons (as test/infra/compliance.test.ts reads them). */
function acknowledgedRules(construct: IConstruct): Record<string, string> {
  return Object.fromEntries(
    construct.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([id, reason]) => [id.replace(/^annotation::/i, ''), reason]),
  );
}

/** The key table's ARN as the delivery stack's grants write it (an import from the stateful stack). */
function keyTableArn(): string {
  const [arn] =
    grantsOf(roleStatements(delivery, logicalId(synth.delivery.functions.archiver.role))).get(
      'dynamodb:UpdateItem',
    ) ?? [];
  if (!arn) throw new Error('the archiver has no UpdateItem grant');
  expect(arn).toContain(logicalId(synth.stateful.keyTable.table));
  return arn;
}

function ledgerTableArn(): string {
  const [arn] =
    grantsOf(roleStatements(delivery, logicalId(synth.delivery.functions.http.role))).get(
      'dynamodb:UpdateItem',
    ) ?? [];
  if (!arn) throw new Error('the http function has no UpdateItem grant');
  return arn;
}

describe('key table', () => {
  const keyTable = () =>
    stateful.findResources('AWS::DynamoDB::Table')[logicalId(synth.stateful.keyTable.table)]?.Properties;
  const ledger = () =>
    stateful.findResources('AWS::DynamoDB::Table')[logicalId(synth.stateful.ledger.table)]?.Properties;

  it('is a table of its own: the contract’s keys, Standard-IA, provisioned, TTL on its expiry, no stream', () => {
    expect(keyTable()).toMatchObject({
      // Buckets of packed records: a partition key only.
      KeySchema: [{ AttributeName: KeyTable.partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: KeyTable.partitionKey, AttributeType: 'S' }],
      TableClass: 'STANDARD_INFREQUENT_ACCESS',
      // Provisioned with auto scaling by default (CloudFormation's default mode, left out by CDK):
      // test/infra/table-capacity.test.ts.
      ProvisionedThroughput: expect.any(Object),
      TimeToLiveSpecification: { AttributeName: KeyTable.ttlAttribute, Enabled: true },
    });
    expect(keyTable()).not.toHaveProperty('StreamSpecification');
    // What the local stack creates (lambdas/adapters/dynamodb/key-table.ts): the same table.
    const local = keyTableDefinition('t');
    expect(local.TableClass).toBe(keyTable()?.TableClass);
    expect(local.KeySchema).toEqual(keyTable()?.KeySchema);
    expect(local.AttributeDefinitions).toEqual(keyTable()?.AttributeDefinitions);
    expect(local.StreamSpecification).toBeUndefined();
  });

  it('has no point-in-time recovery (rebuilt from the archive), but deletion protection, RETAIN and the ledger’s key', () => {
    expect(keyTable()?.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: false });
    expect(ledger()?.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(keyTable()?.DeletionProtectionEnabled).toBe(true);
    expect(keyTable()?.SSESpecification).toEqual(ledger()?.SSESpecification);
    expect(keyTable()?.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
    const resource = stateful.findResources('AWS::DynamoDB::Table')[logicalId(synth.stateful.keyTable.table)];
    expect(resource?.DeletionPolicy).toBe('Retain');
    expect(resource?.UpdateReplacePolicy).toBe('Retain');
  });

  it('acknowledges the PITR rules with the reason: derived data, rebuilt from the archive', () => {
    const acknowledged = acknowledgedRules(synth.stateful.keyTable.table);
    expect(Object.keys(acknowledged).sort()).toEqual(
      [
        'AwsSolutions-DDB3',
        'HIPAA.Security-DynamoDBInBackupPlan',
        'HIPAA.Security-DynamoDBPITREnabled',
      ].sort(),
    );
    for (const reason of Object.values(acknowledged)) expect(reason).toBe(KEY_TABLE_NO_PITR_REASON);
    expect(KEY_TABLE_NO_PITR_REASON).toMatch(/rebuilt from the archive/);
  });

  it('is named to the two functions that use it (KEY_TABLE_NAME), and to no other', () => {
    const functions = delivery.findResources('AWS::Lambda::Function');
    for (const name of FUNCTION_NAMES) {
      const variables =
        functions[logicalId(synth.delivery.functions[name].function)]?.Properties.Environment.Variables;
      if (name === 'http' || name === 'archiver') expect(variables?.KEY_TABLE_NAME, name).toBeDefined();
      else expect(variables?.KEY_TABLE_NAME, name).toBeUndefined();
    }
  });
});

describe('hot window', () => {
  it('has TTL on the ledger table’s expiry attribute (terminal rows after the hot window)', () => {
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: Schema.ttlAttribute, Enabled: true },
    });
  });

  it('tells every function that writes rows the hot window, and the archiver the archive’s retention', () => {
    const variables = (name: (typeof FUNCTION_NAMES)[number]) =>
      delivery.findResources('AWS::Lambda::Function')[logicalId(synth.delivery.functions[name].function)]
        ?.Properties.Environment.Variables;
    // Whoever moves a row to a terminal state sets its TTL (lambdas/adapters/dynamodb/ledger/intents.ts).
    for (const name of ['http', 'sendEmail', 'sendSms', 'reconciler', 'providerEvents'] as const) {
      expect(variables(name)?.HOT_RETENTION, name).toBe('P35D');
    }
    // Key records expire with the archive (resolution + ARCHIVE_RETENTION_YEARS).
    expect(variables('archiver')?.ARCHIVE_RETENTION_YEARS).toBe('6');
  });
});
