import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { Archive } from '../../lambdas/contract/archive.ts';
import { acknowledge } from '../nag.ts';

export interface ArchiveBucketProps {
  /** The deployment's resource prefix (kebab-case stack prefix): the bucket's name starts with it. */
  readonly namePrefix: string;
  /**
   * Default retention of every object, in whole years, in compliance mode
   * (ARCHIVE_RETENTION_YEARS, deploy key `archiveRetentionYears`).
   */
  readonly retentionYears: number;
}

/** Room for the prefix in a bucket name (63) beside `-archive-`, an account id and the longest Region code. */
const NAME_PREFIX_MAX = 63 - '-archive-'.length - 12 - 1 - 'ap-southeast-2'.length;

/**
 * The archive bucket's name: `<prefix>-archive-<account>-<region>` (as the CDK bootstrap bucket
 * is named), written from the stack's account and Region rather than read back from the bucket,
 * so that the functions' grants on its objects name it without a reference to the stateful
 * stack (and cdk-nag's findings on those grants can be acknowledged by name, lib/nag.ts).
 */
export function archiveBucketName(scope: Construct, namePrefix: string): string {
  const stack = Stack.of(scope);
  const prefix = namePrefix.slice(0, NAME_PREFIX_MAX).replace(/-+$/, '');
  return `${prefix}-archive-${stack.account}-${stack.region}`;
}

/** The archive's two prefixes (lambdas/contract/archive.ts). */
export type ArchivePrefix = typeof Archive.factsPrefix | typeof Archive.rowsPrefix;

/**
 * The write-once audit archive (issue 22, lambdas/contract/archive.ts): an S3 bucket with Object
 * Lock in COMPLIANCE mode, so that for `retentionYears` after its creation no object version can
 * be deleted or overwritten by anyone, the account's root user included, and the retention can
 * neither be shortened nor switched off. Object Lock needs versioning, and can only be enabled
 * when the bucket is created.
 *
 * Encryption: SSE-S3 (AES-256, keys held by S3), not the stack's `data` KMS key. A customer key can
 * be disabled or scheduled for deletion by whoever administers keys, and every object encrypted
 * with it becomes unreadable: a locked archive could be shredded within the retention Object Lock
 * promises. With SSE-S3 nothing outlives the lock but the lock. It also keeps the reads and writes
 * free of KMS grants, requests and throttling.
 *
 * No lifecycle rule: nothing may expire or transition objects (the archiver writes them in their
 * final storage class). Objects past their retention stay until an operator decides otherwise.
 *
 * Every write must be conditional (`If-None-Match`, the bucket policy refuses others): a key is
 * written once, so the archive never holds two versions of one object (the archiver's dedup
 * rests on that, lambdas/contract/archive.ts). Server access logs go to a bucket of their own:
 * who read the audit archive is itself audit evidence.
 */
export class ArchiveBucket extends Construct {
  readonly bucket: Bucket;
  /** Server access logs of the archive (SSE-S3: the only encryption S3 log delivery writes to). */
  readonly accessLogs: Bucket;
  readonly retentionYears: number;
  /** Its name (ARCHIVE_BUCKET), the same string in either stack of the deployment. */
  readonly bucketName: string;
  readonly bucketArn: string;

  constructor(scope: Construct, id: string, props: ArchiveBucketProps) {
    super(scope, id);
    this.retentionYears = props.retentionYears;
    this.bucketName = archiveBucketName(this, props.namePrefix);
    this.bucketArn = `arn:${Stack.of(this).partition}:s3:::${this.bucketName}`;
    const common = {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
    } as const;

    this.accessLogs = new Bucket(this, 'AccessLogs', {
      ...common,
      // Kept as long as the records whose reads they tell of.
      lifecycleRules: [
        {
          id: 'expire-with-the-archive',
          expiration: Duration.days(366 * props.retentionYears),
          noncurrentVersionExpiration: Duration.days(1),
        },
      ],
    });
    // cdk-nag's packs know a bucket that receives server access logs: nothing to acknowledge.

    this.bucket = new Bucket(this, 'Bucket', {
      ...common,
      bucketName: this.bucketName,
      objectLockEnabled: true,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'archive/',
    });
    // Written as whole years: the CDK's `ObjectLockRetention` renders days (6 × 365 days falls
    // one or two leap days short of six years).
    (this.bucket.node.defaultChild as CfnBucket).objectLockConfiguration = {
      objectLockEnabled: 'Enabled',
      rule: { defaultRetention: { mode: 'COMPLIANCE', years: props.retentionYears } },
    };
    // Write-once: an upload without If-None-Match (which would add a second version of a key)
    // is refused for everyone, whatever their identity policy grants.
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'WriteOnceOnly',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects('*')],
        conditions: { Null: { 's3:if-none-match': 'true' } },
      }),
    );

    for (const bucket of [this.bucket, this.accessLogs]) {
      acknowledge(
        bucket,
        {
          rule: 'HIPAA.Security-S3DefaultEncryptionKMS',
          reason:
            'SSE-S3 on purpose: a customer key can be disabled or deleted, which would make the Object Lock ' +
            'archive unreadable within its compliance retention (and S3 access logs can only be SSE-S3).',
        },
        {
          rule: 'HIPAA.Security-S3BucketReplicationEnabled',
          reason:
            'S3 stores objects across three Availability Zones; a cross-Region copy is an organisation ' +
            'disaster-recovery decision (a second Object Lock bucket in another Region), not this stack’s.',
        },
      );
    }
  }

  /** The ARN pattern of every object under a prefix of the layout (`…/facts/*`). */
  objectsArn(prefix: ArchivePrefix): string {
    return `${this.bucketArn}/${prefix}*`;
  }

  /** `s3://<bucket>/<prefix>`: where a prefix's objects are, as Athena and Glue name it. */
  location(prefix: ArchivePrefix): string {
    return `s3://${this.bucketName}/${prefix}`;
  }
}
