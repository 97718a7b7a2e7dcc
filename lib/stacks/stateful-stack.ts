import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ARCHIVE_FACT_COLUMNS } from '../../lambdas/contract/archive.ts';
import type { NoticeLedgerConfig } from '../config.ts';
import { ArchiveBucket } from '../constructs/archive-bucket.ts';
import { ArchiveCatalog } from '../constructs/archive-catalog.ts';
import { ChannelQueue, type LaneName, queueLabel } from '../constructs/channel-queue.ts';
import { KeyTable } from '../constructs/key-table.ts';
import { NoticeKeys } from '../constructs/keys.ts';
import { LedgerTable } from '../constructs/ledger-table.ts';
import { RetryScheduler } from '../constructs/retry-scheduler.ts';
import { NoticeSecrets } from '../constructs/secrets.ts';
import { WatchQueue } from '../constructs/watch-queue.ts';
import { acknowledge } from '../nag.ts';
import type { ProviderResources } from '../providers/binding.ts';
import { pascal, secretFields } from '../providers/provider-secret.ts';
import { deployedBindings } from '../providers/registry.ts';

/** The watch function's timeout (its queue's visibility timeout is six times this). */
export const WATCH_TIMEOUT = Duration.seconds(30);

export interface StatefulStackProps extends StackProps {
  readonly config: NoticeLedgerConfig;
}

/**
 * Everything that holds data or identity and must outlive compute redeploys: keys, the ledger
 * table, the key table, the write-once archive and its catalog, the channel queues and their DLQs, the retry
 * schedule group and its role, the secrets.
 * Retained on deletion and termination-protected; the delivery stack can be destroyed and
 * recreated freely around it.
 */
export class StatefulStack extends Stack {
  readonly keys: NoticeKeys;
  readonly ledger: LedgerTable;
  /** Key records of resolved rows, for the archive's retention (derived from the archive: no PITR). */
  readonly keyTable: KeyTable;
  /** The write-once audit archive the ledger stream feeds (issue 22, lambdas/contract/archive.ts). */
  readonly archive: ArchiveBucket;
  /** Its Glue table and Athena workgroup. */
  readonly archiveCatalog: ArchiveCatalog;
  readonly queues: { readonly email: ChannelQueue; readonly sms: ChannelQueue };
  /** The critical and bulk lanes' queues per channel (docs/architecture.md §11). */
  readonly lanes: {
    readonly email: Readonly<Record<LaneName, ChannelQueue>>;
    readonly sms: Readonly<Record<LaneName, ChannelQueue>>;
  };
  readonly retryScheduler: RetryScheduler;
  /** Intake's watches (docs/table-design.md "Watched rows") and their DLQ. */
  readonly watch: WatchQueue;
  readonly secrets: NoticeSecrets;
  /** What each deployed provider's binding keeps in this stack, by provider id. */
  readonly providerResources = new Map<string, ProviderResources>();

  constructor(scope: Construct, id: string, props: StatefulStackProps) {
    super(scope, id, { terminationProtection: true, ...props });
    const { config } = props;

    this.keys = new NoticeKeys(this, 'Keys', { aliasPrefix: config.resourcePrefix });
    this.ledger = new LedgerTable(this, 'Ledger', {
      encryptionKey: this.keys.data,
      openIndexShards: config.openIndexShards,
      capacity: config.tableCapacity,
    });
    acknowledge(this.ledger.table, {
      rule: 'HIPAA.Security-DynamoDBInBackupPlan',
      reason:
        'Recovery is point-in-time recovery (35 days, continuous) plus deletion protection and RETAIN; ' +
        'long-term AWS Backup plans are set by organisation backup policy, not by this application stack.',
    });

    this.keyTable = new KeyTable(this, 'KeyRecords', {
      encryptionKey: this.keys.data,
      capacity: config.tableCapacity,
    });

    this.archive = new ArchiveBucket(this, 'Archive', {
      namePrefix: config.resourcePrefix,
      retentionYears: config.archive.retentionYears,
    });
    this.archiveCatalog = new ArchiveCatalog(this, 'ArchiveCatalog', {
      archive: this.archive,
      columns: ARCHIVE_FACT_COLUMNS,
      workGroupName: config.archive.workGroupName,
      policyNamePrefix: config.resourcePrefix,
      bytesScannedCutoffPerQuery: config.archive.bytesScannedCutoffPerQuery,
    });

    const consumerTimeout = Duration.seconds(config.senderTimeoutSeconds);
    this.queues = {
      email: new ChannelQueue(this, 'EmailQueue', { channel: 'email', consumerTimeout }),
      sms: new ChannelQueue(this, 'SmsQueue', { channel: 'sms', consumerTimeout }),
    };
    const lane = (channel: 'email' | 'sms', name: LaneName) =>
      new ChannelQueue(
        this,
        `${channel === 'email' ? 'Email' : 'Sms'}${name === 'critical' ? 'Critical' : 'Bulk'}Queue`,
        {
          channel,
          lane: name,
          consumerTimeout,
        },
      );
    this.lanes = {
      email: { critical: lane('email', 'critical'), bulk: lane('email', 'bulk') },
      sms: { critical: lane('sms', 'critical'), bulk: lane('sms', 'bulk') },
    };

    this.watch = new WatchQueue(this, 'WatchQueue', { consumerTimeout: WATCH_TIMEOUT });

    this.retryScheduler = new RetryScheduler(this, 'RetryScheduler', {
      groupName: `${config.resourcePrefix}-retries`,
      targetQueues: [
        this.queues.email.queue,
        this.queues.sms.queue,
        ...[this.lanes.email, this.lanes.sms].flatMap((l) => [l.critical.queue, l.bulk.queue]),
      ],
    });

    this.secrets = new NoticeSecrets(this, 'Secrets', {
      encryptionKey: this.keys.data,
      namePrefix: config.resourcePrefix,
    });
    acknowledge(
      this.secrets.fingerprintKey,
      ...['AwsSolutions-SMG4', 'HIPAA.Security-SecretsManagerRotationEnabled'].map((rule) => ({
        rule,
        reason:
          'The fingerprint HMAC key must stay constant: suppression entries and ledger rows are keyed by ' +
          'fingerprints made with it, so a rotation would silently un-suppress every destination.',
      })),
    );
    // What each deployed provider keeps here (its credentials' secret), and nothing of the others.
    for (const binding of deployedBindings(config.providers)) {
      const resources = binding.stateful?.(this.secrets, { config, secretsKey: this.keys.data }) ?? {};
      this.providerResources.set(binding.descriptor.id, resources);
      if (resources.secret) {
        this.secrets.providers.set(binding.descriptor.id, resources.secret);
        new CfnOutput(this, `${pascal(binding.descriptor.id)}SecretArn`, {
          value: resources.secret.secretArn,
          description: `Fill with { ${secretFields(binding.descriptor).join(', ')} } (docs/deploy.md)`,
        });
      }
    }

    new CfnOutput(this, 'LedgerTableName', { value: this.ledger.tableName });
    new CfnOutput(this, 'KeyTableName', {
      value: this.keyTable.tableName,
      description: 'Key records past the hot window: rebuilt from the archive, no PITR (docs/deploy.md)',
    });
    new CfnOutput(this, 'ArchiveBucketName', {
      value: this.archive.bucketName,
      description: `The write-once archive (Object Lock, compliance, ${config.archive.retentionYears} years)`,
    });
    new CfnOutput(this, 'ArchiveWorkGroupName', {
      value: this.archiveCatalog.workGroupName,
      description: 'Athena workgroup of archive queries (docs/archive.md)',
    });
    new CfnOutput(this, 'ArchiveQueryPolicyArn', {
      value: this.archiveCatalog.queryPolicy.managedPolicyArn,
      description: 'Attach to the roles of people who query the archive with Athena',
    });
    new CfnOutput(this, 'ArchiveQueryPolicyName', {
      value: this.archiveCatalog.queryPolicy.managedPolicyName,
      description: 'Customer-managed policy reference for archive queries in a permission set',
    });
    new CfnOutput(this, 'FingerprintKeySecretArn', { value: this.secrets.fingerprintKey.secretArn });
    // What a redrive names (`aws sqs start-message-move-task --source-arn`): each work queue's DLQ,
    // labelled as its alarm is (`<Label>DeadLetters`).
    const { email, sms } = this.lanes;
    for (const q of [
      this.queues.email,
      this.queues.sms,
      email.critical,
      email.bulk,
      sms.critical,
      sms.bulk,
    ]) {
      new CfnOutput(this, `${queueLabel(q)}DeadLetterQueueArn`, {
        value: q.deadLetterQueue.queueArn,
        description: `Dead-letter queue of the ${queueLabel(q)} queue: redrive with start-message-move-task (docs/deploy.md)`,
      });
    }
    new CfnOutput(this, 'WatchDeadLetterQueueArn', {
      value: this.watch.deadLetterQueue.queueArn,
      description: 'Dead-letter queue of the watches: redrive with start-message-move-task (docs/deploy.md)',
    });
  }
}
