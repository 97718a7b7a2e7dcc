import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Archive } from '../../lambdas/contract/archive.ts';
import { ENVELOPE_ENCRYPTION_CONTEXT } from '../../lambdas/contract/envelope.ts';
import { FUNCTIONS, type FunctionName } from '../../lambdas/contract/functions.ts';
import { METRIC_NAMESPACE, SERVICE_NAME } from '../../lambdas/contract/metrics.ts';
import { LANE_SETTINGS } from '../../lambdas/contract/settings.ts';
import { acknowledge, acknowledgeWildcardResources } from '../nag.ts';
import type { ArchiveBucket } from './archive-bucket.ts';
import { type BundleSelection, cdkBundling, handlerEntry, REPO_ROOT } from './bundling.ts';
import type { ChannelQueue, LaneName } from './channel-queue.ts';
import { type FunctionLogging, functionLogging, functionLoggingProps } from './function-logging.ts';
import type { KeyTable } from './key-table.ts';
import type { LedgerTable } from './ledger-table.ts';
import { ManagedPolicyRole } from './managed-policy-role.ts';
import type { RetryScheduler } from './retry-scheduler.ts';
import type { WatchQueue } from './watch-queue.ts';

export { ENVELOPE_ENCRYPTION_CONTEXT, REPO_ROOT };

export type LedgerItemAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem'
  | 'Query';

export interface LedgerAccess {
  /** Item-level actions on the table itself (not its indexes). */
  readonly items: readonly LedgerItemAction[];
  /**
   * Query on the open-intent index (the reconciler's sweep).
   * @default false
   */
  readonly openIndexQuery?: boolean;
}

export interface NoticeFunctionProps {
  /** Which function (lambdas/contract/functions.ts): its handler is the bundle's entry. */
  readonly name: FunctionName;
  /** What its bundle carries (lib/constructs/bundling.ts); everything else is left out. */
  readonly bundle: BundleSelection;
  /** Every provider id the runtime registry holds (what the bundle leaves out unless selected). */
  readonly registeredProviders: readonly string[];
  readonly description: string;
  readonly timeout: Duration;
  /**
   * @default 512
   */
  readonly memorySize?: number;
  readonly logRetention: RetentionDays;
  /** Key of the function's log group (HIPAA: log groups encrypted with a customer key). */
  readonly logEncryptionKey: IKey;
  /** Settings shared by every function (lambdas/contract/settings.ts names); bind* helpers add resource ones. */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * How the function is invoked. `sync` (API Gateway, SQS event source) has no use for a
   * function DLQ: failures go back to the caller or to the queue's redrive DLQ.
   */
  readonly invocation: 'sync' | 'async';
  /**
   * DLQ for failed asynchronous invocations (events the function could not process after
   * Lambda's retries).
   * @default - none
   */
  readonly deadLetterQueue?: IQueue;
  /**
   * @default - unreserved (see SETTING_DEFAULTS.reservedConcurrency)
   */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * A `NodejsFunction` with the project's defaults, and `bind*` helpers that grant a permission and
 * set the environment variable that goes with it in one call, so the environment of a function
 * lists exactly what it was granted.
 *
 * Defaults: Node.js 24, ARM64, ESM bundle (SDK included: the SDK tested is the SDK shipped),
 * source maps, an explicit log group (retention + customer key), Lambda's advanced logging
 * controls where the Region has them (./function-logging.ts: no START/END/REPORT lines), and its
 * own role whose permissions live in one customer-managed policy.
 */
export class NoticeFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: ManagedPolicyRole;
  readonly logGroup: LogGroup;
  /** How its log lines reach CloudWatch Logs (./function-logging.ts). */
  readonly logging: FunctionLogging;
  private ledgerKey: { readonly key: IKey; readonly statement: PolicyStatement } | undefined;

  constructor(scope: Construct, id: string, props: NoticeFunctionProps) {
    super(scope, id);
    const entry = handlerEntry(props.name);
    if (!existsSync(entry)) throw new Error(`handler of ${props.name} does not exist at ${entry}`);

    this.role = new ManagedPolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `notice-ledger ${FUNCTIONS[props.name].handler}`,
    });
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      encryptionKey: props.logEncryptionKey,
      // Logs are evidence (what was attempted, when); they expire by retention, not by deploys.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Only its own log group: no logs:CreateLogGroup, no other group (replaces the AWS managed
    // AWSLambdaBasicExecutionRole, which grants both on `*`).
    this.logGroup.grantWrite(this.role);

    this.logging = functionLogging(Stack.of(this).region);
    const logging = functionLoggingProps(this.logging);
    this.function = new NodejsFunction(this, 'Function', {
      entry,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      ...logging.props,
      ...(props.deadLetterQueue ? { deadLetterQueue: props.deadLetterQueue } : {}),
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
        ...logging.environment,
        ...props.environment,
      },
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      bundling: cdkBundling(props.bundle, props.registeredProviders),
    });

    acknowledge(this.function, {
      rule: 'HIPAA.Security-LambdaInsideVPC',
      reason:
        'The function reaches only AWS APIs (DynamoDB, SQS, KMS, Secrets Manager, Scheduler, EventBridge, ' +
        'provider APIs) over TLS with IAM auth or provider credentials; it holds no network-reachable resource ' +
        'a VPC would protect, and a VPC would add NAT gateways (cost, an egress single point) for no isolation gain.',
    });
    if (props.reservedConcurrentExecutions === undefined) {
      acknowledge(this.function, {
        rule: 'HIPAA.Security-LambdaConcurrency',
        reason:
          'Concurrency is bounded where it is consumed: SQS event-source maximum concurrency per channel, API ' +
          'stage throttling, one scheduled reconciler per minute. Reserved concurrency is opt-in through the ' +
          'reservedConcurrency context because accounts below 110 concurrent executions cannot reserve any.',
      });
    }
    if (props.invocation === 'sync') {
      acknowledge(this.function, {
        rule: 'HIPAA.Security-LambdaDLQ',
        reason:
          'Invoked synchronously only (API Gateway or the SQS event source); a function DLQ catches failed ' +
          'asynchronous invocations and would never receive anything. SQS failures go to the redrive DLQ.',
      });
    }
  }

  private addEnvironment(name: string, value: string): void {
    this.function.addEnvironment(name, value);
  }

  /**
   * Ledger table access: item actions on the table, optionally Query on the open index, and the
   * table key's use through DynamoDB only. Sets LEDGER_TABLE_NAME and OPEN_INDEX_SHARDS (the
   * table's layout travels with the grant; HOT_RETENTION, like every operator setting, reaches
   * every function).
   */
  bindTable(ledger: LedgerTable, access: LedgerAccess): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'LedgerItems',
        actions: access.items.map((a) => `dynamodb:${a}`),
        resources: [ledger.tableArn],
      }),
    );
    if (access.openIndexQuery) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'LedgerOpenIndex',
          actions: ['dynamodb:Query'],
          resources: [ledger.openIndexArn],
        }),
      );
    }
    const writes = access.items.some(
      (a) => a === 'PutItem' || a === 'UpdateItem' || a === 'DeleteItem' || a === 'BatchWriteItem',
    );
    this.useTableKey(ledger.encryptionKey, [
      'kms:Decrypt',
      'kms:DescribeKey',
      ...(writes ? ['kms:Encrypt', 'kms:GenerateDataKey'] : []),
    ]);
    this.addEnvironment('LEDGER_TABLE_NAME', ledger.tableName);
    this.addEnvironment('OPEN_INDEX_SHARDS', String(ledger.openIndexShards));
  }

  /**
   * The key table (lambdas/contract/key-table.ts): `write` (the archiver: a record set in its
   * bucket) UpdateItem only, `read` (the http function: intake's replay, the timeline, operators'
   * acts: a notice's bucket) GetItem only; the table key through DynamoDB (the ledger's key). Sets
   * KEY_TABLE_NAME.
   */
  bindKeyTable(keyTable: KeyTable, use: 'write' | 'read'): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: use === 'write' ? 'WriteKeyRecords' : 'ReadKeyRecords',
        actions: [use === 'write' ? 'dynamodb:UpdateItem' : 'dynamodb:GetItem'],
        resources: [keyTable.tableArn],
      }),
    );
    this.useTableKey(keyTable.encryptionKey, [
      'kms:Decrypt',
      'kms:DescribeKey',
      ...(use === 'write' ? ['kms:Encrypt', 'kms:GenerateDataKey'] : []),
    ]);
    this.addEnvironment('KEY_TABLE_NAME', keyTable.tableName);
  }

  /** `sqs:SendMessage` (and SendMessageBatch) on a channel queue; sets <CHANNEL>_QUEUE_URL/_ARN. */
  bindChannelQueue(channelQueue: ChannelQueue): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: `Enqueue${channelQueue.channel === 'email' ? 'Email' : 'Sms'}`,
        actions: ['sqs:SendMessage'],
        resources: [channelQueue.queue.queueArn],
      }),
    );
    const prefix = channelQueue.channel.toUpperCase();
    this.addEnvironment(`${prefix}_QUEUE_URL`, channelQueue.queue.queueUrl);
    this.addEnvironment(`${prefix}_QUEUE_ARN`, channelQueue.queue.queueArn);
  }

  /**
   * `sqs:SendMessage` on a channel's lane queues (docs/architecture.md §11); sets
   * <CHANNEL>_<LANE>_QUEUE_URL/_ARN. A reference goes to its row's lane.
   */
  bindLaneQueues(lanes: Readonly<Record<LaneName, ChannelQueue>>): void {
    const queues = [lanes.critical, lanes.bulk];
    const channel = lanes.critical.channel;
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: `EnqueueLanes${channel === 'email' ? 'Email' : 'Sms'}`,
        actions: ['sqs:SendMessage'],
        resources: queues.map((q) => q.queue.queueArn),
      }),
    );
    for (const q of queues) {
      const lane = q.lane as LaneName;
      this.addEnvironment(LANE_SETTINGS[channel].queueUrls[lane], q.queue.queueUrl);
      this.addEnvironment(LANE_SETTINGS[channel].queueArns[lane], q.queue.queueArn);
    }
  }

  /** `sqs:GetQueueAttributes` on queues whose backlog the function estimates from (deadline risk). */
  bindQueueDepth(queues: readonly ChannelQueue[]): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadQueueDepth',
        actions: ['sqs:GetQueueAttributes'],
        resources: queues.map((q) => q.queue.queueArn),
      }),
    );
  }

  /**
   * Makes the function the consumer of a channel queue: partial batch responses (a failed
   * record is retried alone) and a maximum concurrency that caps in-flight provider calls.
   */
  consumeChannelQueue(
    channelQueue: ChannelQueue,
    options: { batchSize: number; maxConcurrency: number; maxBatchingWindowSeconds?: number },
  ): void {
    this.function.addEventSource(
      new SqsEventSource(channelQueue.queue, {
        batchSize: options.batchSize,
        maxConcurrency: options.maxConcurrency,
        reportBatchItemFailures: true,
        ...(options.maxBatchingWindowSeconds
          ? { maxBatchingWindow: Duration.seconds(options.maxBatchingWindowSeconds) }
          : {}),
      }),
    );
  }

  /** `sqs:SendMessage` on the watch queue (docs/table-design.md "Watched rows"); sets WATCH_QUEUE_URL. */
  bindWatchQueue(watch: WatchQueue): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'SendWatches',
        actions: ['sqs:SendMessage'],
        resources: [watch.queue.queueArn],
      }),
    );
    this.addEnvironment('WATCH_QUEUE_URL', watch.queue.queueUrl);
    this.addEnvironment('WATCH_QUEUE_ARN', watch.queue.queueArn);
  }

  /**
   * Makes the function the watch queue's consumer: up to 100 watches per invocation (gathered for
   * up to 5 s, which Lambda requires above 10), their rows read together, partial batch responses.
   */
  consumeWatchQueue(watch: WatchQueue): void {
    this.addEnvironment('WATCH_QUEUE_ARN', watch.queue.queueArn);
    this.function.addEventSource(
      new SqsEventSource(watch.queue, {
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(5),
        maxConcurrency: 5,
        reportBatchItemFailures: true,
      }),
    );
  }

  /**
   * The envelope key (ENVELOPE_KMS_KEY_ID). `seal`: GenerateDataKey only (intake); `open`:
   * Decrypt only (senders, reconciler); `none`: the variable alone, which the runtime requires
   * at start-up even where it never opens an envelope. Both grants are bound to the envelope
   * encryption context, so these roles cannot use the key for anything else.
   */
  bindEnvelopeKey(key: IKey, use: 'seal' | 'open' | 'none'): void {
    this.addEnvironment('ENVELOPE_KMS_KEY_ID', key.keyArn);
    if (use === 'none') return;
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: use === 'seal' ? 'SealEnvelopes' : 'OpenEnvelopes',
        actions: [use === 'seal' ? 'kms:GenerateDataKey' : 'kms:Decrypt'],
        resources: [key.keyArn],
        conditions: {
          StringEquals: { 'kms:EncryptionContext:purpose': ENVELOPE_ENCRYPTION_CONTEXT.purpose },
        },
      }),
    );
  }

  /**
   * Read access to a secret and, when it has a customer key, Decrypt on that key through Secrets
   * Manager only; sets the named variable. Written out instead of `secret.grantRead`, whose key
   * grant goes through a principal wrapper and lands in the key policy of the stateful stack,
   * naming this role there (a reference back from the stateful stack: a dependency cycle).
   */
  bindSecret(secret: ISecret, variable: string | undefined): void {
    if (!variable) throw new Error('bindSecret needs the variable that names the secret');
    // FINGERPRINT_KEY_SECRET_ARN → FingerprintKey: statement ids say whose secret it is.
    const sid = variable
      .replace(/_SECRET_ARN$/, '')
      .toLowerCase()
      .replace(/(^|_)([a-z0-9])/g, (_, _u: string, c: string) => c.toUpperCase());
    const arn = secret.secretFullArn ?? secret.secretArn;
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: `Read${sid}Secret`,
        actions: ['secretsmanager:GetSecretValue'],
        resources: [arn],
      }),
    );
    if (secret.encryptionKey) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: `Decrypt${sid}Secret`,
          actions: ['kms:Decrypt'],
          resources: [secret.encryptionKey.keyArn],
          conditions: {
            StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(this).region}.amazonaws.com` },
          },
        }),
      );
    }
    this.addEnvironment(variable, arn);
  }

  /** Create retry schedules and pass the scheduler role; sets SCHEDULE_GROUP_NAME/SCHEDULER_ROLE_ARN. */
  bindRetryScheduler(scheduler: RetryScheduler): void {
    scheduler.grantCreateSchedules(this.role);
    this.addEnvironment('SCHEDULE_GROUP_NAME', scheduler.groupName);
    this.addEnvironment('SCHEDULER_ROLE_ARN', scheduler.role.roleArn);
    acknowledgeWildcardResources(
      this.role,
      [scheduler.schedulesArn()],
      'Retry schedules are named per (notice, channel, attempt) at run time, so CreateSchedule needs the ' +
        'group wildcard; the group holds only these one-time retries and the role cannot update or delete.',
    );
  }

  /** `events:PutEvents` on the escalation bus only; sets ESCALATION_EVENT_BUS. */
  bindEscalations(bus: IEventBus): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'PublishEscalations',
        actions: ['events:PutEvents'],
        resources: [bus.eventBusArn],
      }),
    );
    this.addEnvironment('ESCALATION_EVENT_BUS', bus.eventBusName);
  }

  /**
   * Reads the ledger table's change stream (a consumer's event source reads it as the function's
   * role): the three reads on this stream alone (Lambda names the stream by its ARN, so no
   * ListStreams, which would take Resource "*"), and the table key through DynamoDB to decrypt
   * its records. Sets LEDGER_TABLE_STREAM_ARN.
   */
  bindLedgerStream(ledger: LedgerTable): void {
    const { streamArn } = ledger;
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadLedgerStream',
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator', 'dynamodb:GetRecords'],
        resources: [streamArn],
      }),
    );
    this.useTableKey(ledger.encryptionKey, ['kms:Decrypt']);
    this.addEnvironment('LEDGER_TABLE_STREAM_ARN', streamArn);
  }

  /**
   * The tables' key (the ledger's and the key table's: one customer key) through DynamoDB only:
   * one statement, whichever bindings need it.
   */
  private useTableKey(key: IKey, actions: readonly string[]): void {
    if (!this.ledgerKey) {
      const statement = new PolicyStatement({
        sid: 'LedgerTableKeyThroughDynamoDB',
        resources: [key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Stack.of(this).region}.amazonaws.com` } },
      });
      this.role.addToPrincipalPolicy(statement);
      this.ledgerKey = { key, statement };
    }
    if (this.ledgerKey.key !== key) throw new Error('the ledger and key tables are encrypted with one key');
    const { statement } = this.ledgerKey;
    const granted = new Set(statement.actions);
    statement.addActions(...actions.filter((a) => !granted.has(a)));
  }

  /**
   * The audit archive (lambdas/contract/archive.ts); sets ARCHIVE_BUCKET. `write` (the archiver):
   * PutObject and GetObject (which HeadObject is authorized as) under `facts/` and `rows/`, and
   * ListBucket, without which S3 answers a HeadObject of a key that does not exist yet with 403
   * instead of 404 (the archiver's dedup tells "not written yet" from "written" by it). Nothing
   * else: no DeleteObject, no retention or legal-hold change (compliance mode refuses them to
   * everyone anyway). `readRows` (the timeline after the hot window): GetObject under `rows/`.
   */
  bindArchive(archive: ArchiveBucket, use: 'write' | 'readRows'): void {
    const objects =
      use === 'write'
        ? [archive.objectsArn(Archive.factsPrefix), archive.objectsArn(Archive.rowsPrefix)]
        : [archive.objectsArn(Archive.rowsPrefix)];
    if (use === 'write') {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'WriteArchive',
          actions: ['s3:PutObject', 's3:GetObject'],
          resources: objects,
        }),
      );
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'ListArchive',
          actions: ['s3:ListBucket'],
          resources: [archive.bucketArn],
        }),
      );
    } else {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'ReadArchivedRows',
          actions: ['s3:GetObject'],
          resources: objects,
        }),
      );
    }
    acknowledgeWildcardResources(
      this.role,
      objects,
      'Archive objects are named per stream batch at run time (lambdas/contract/archive.ts), so object grants ' +
        'need the prefix wildcard; the grant covers only this prefix of the archive bucket.',
    );
    this.addEnvironment('ARCHIVE_BUCKET', archive.bucketName);
  }

  /** The origin providers call back (webhook URLs, signature checks): PUBLIC_BASE_URL. */
  bindPublicBaseUrl(url: string): void {
    this.addEnvironment('PUBLIC_BASE_URL', url);
  }
}
