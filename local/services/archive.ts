import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type _Record, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  NotFound,
  PutObjectLockConfigurationCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { LEDGER_STREAM_FILTERS, passesLedgerStreamFilters } from '../../lambdas/contract/ledger-stream.ts';
import { LedgerTable } from '../../lambdas/contract/ledger-table.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { type CrashPointSpec, installArchiveCrashPoints } from '../crash-points.ts';
import { startTtlSweeper } from '../dynamodb/ttl-sweeper.ts';
import type { LocalIam } from '../iam/enforce.ts';
import { startLocalS3 } from '../s3/server.ts';
import type { LocalService } from '../service.ts';
import { servicePort } from '../settings.ts';
import { startLedgerStreamConsumer } from './stream-consumer.ts';

/** The archive bucket's name when ARCHIVE_BUCKET is unset. */
export const LOCAL_ARCHIVE_BUCKET = 'notice-ledger-archive';
/** Where the store keeps its objects and its journal, in the data dir. */
export const S3_DIR = 's3';
export const S3_JOURNAL_FILE = 's3-journal.jsonl';
/** How often expired items are deleted (AWS: within days; here within about a second). */
export const TTL_SWEEP_INTERVAL_MS = 1_000;
/** The sweeper's own stream checkpoint, in the data dir. */
export const TTL_CHECKPOINT_FILE = 'ttl-checkpoint.json';
/**
 * The archiver's mapping, locally: as the CDK's (lib/constructs/ledger-archiver.ts: batches of up
 * to 1000, no bisect, so a batch always starts at the shard's checkpoint; retried until taken; the
 * records that hold facts only) but a one-second batching window instead of minutes, so the archive
 * keeps up with a hot window as short as PT10S.
 */
export const LOCAL_ARCHIVER_MAPPING = {
  batchSize: 1000,
  maxBatchingWindowMs: 1_000,
  bisectOnError: false,
  retryAttempts: -1,
  // Intent rows, every change; suppression history records (S#…/H#…) as they are inserted.
  filter: (record: _Record) => passesLedgerStreamFilters(LEDGER_STREAM_FILTERS.archive, record),
} as const;

/**
 * The S3-compatible store (local/s3/: s3rver behind a strict front) unless `AWS_ENDPOINT_URL_S3`
 * names one; `LOCAL_S3_PORT` fixes the front's port. Its objects and journal survive restarts.
 */
export const s3Service: LocalService = {
  name: 's3',
  label: 'S3',
  external: (env) => env.AWS_ENDPOINT_URL_S3 || undefined,
  async start({ env, dataDir, log }) {
    const directory = join(dataDir, S3_DIR);
    const store = await startLocalS3({
      directory,
      journalFile: join(dataDir, S3_JOURNAL_FILE),
      port: servicePort(env, 's3'),
    });
    if (store.rolledBack > 0) log(`S3: ${store.rolledBack} write(s) a kill left unacknowledged removed`);
    return {
      env: { AWS_ENDPOINT_URL_S3: store.endpoint },
      endpoint: store.endpoint,
      describe: `started (s3rver behind its Object Lock front, objects in ${directory})`,
      stop: () => store.close(),
    };
  },
};

/**
 * The archive bucket, as the CDK makes it (lib/): created with Object Lock when missing, default
 * retention compliance mode for ARCHIVE_RETENTION_YEARS (set again on every start: S3 lets a
 * bucket's default change; objects keep the retention they were written with).
 */
export const archiveBucketService: LocalService = {
  name: 'archive',
  label: 'Archive',
  async start({ env, region }) {
    const bucket = env.ARCHIVE_BUCKET || LOCAL_ARCHIVE_BUCKET;
    const years = readConfig(env).ARCHIVE_RETENTION_YEARS;
    const s3 = new S3Client({ endpoint: env.AWS_ENDPOINT_URL_S3, region, forcePathStyle: true });
    try {
      try {
        await s3.send(new HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        if (!(error instanceof NotFound)) throw error;
        await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
      }
      await s3.send(
        new PutObjectLockConfigurationCommand({
          Bucket: bucket,
          ObjectLockConfiguration: {
            ObjectLockEnabled: 'Enabled',
            Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: years } },
          },
        }),
      );
    } finally {
      s3.destroy();
    }
    return {
      env: { ARCHIVE_BUCKET: bucket },
      endpoint: `${env.AWS_ENDPOINT_URL_S3}/${bucket}`,
      describe: `bucket ${bucket}: Object Lock, compliance mode, ${years} years; list it: curl '${env.AWS_ENDPOINT_URL_S3}/${bucket}?list-type=2&prefix=facts/'`,
      stop: async () => undefined,
    };
  },
};

/**
 * DynamoDB Local never deletes for TTL: the sweeper (local/dynamodb/ttl-sweeper.ts) deletes the
 * ledger table's expired items, so their REMOVEs reach the stream (and the archive) as in AWS.
 */
export const ttlService: LocalService = {
  name: 'ttl',
  label: 'TTL',
  async start({ env, dataDir, region, log }) {
    const tableName = readConfig(env).LEDGER_TABLE_NAME;
    const client = new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region });
    const streams = new DynamoDBStreamsClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region });
    const sweeper = startTtlSweeper({
      client,
      streams,
      streamArn: env.LEDGER_TABLE_STREAM_ARN as string,
      region,
      checkpointFile: join(dataDir, TTL_CHECKPOINT_FILE),
      tableName,
      keyAttributes: [LedgerTable.partitionKey, LedgerTable.sortKey],
      ttlAttribute: LedgerTable.ttlAttribute,
      intervalMs: TTL_SWEEP_INTERVAL_MS,
      log,
    });
    return {
      describe: `emulated: items of ${tableName} whose ${LedgerTable.ttlAttribute} is past are deleted every ${TTL_SWEEP_INTERVAL_MS / 1000} s`,
      async stop() {
        await sweeper.stop();
        client.destroy();
        streams.destroy();
      },
    };
  },
};

/**
 * After the functions: the archiver on the ledger table's stream, as its role, with its own
 * checkpoint; with an archive CRASH_POINT (../crash-points.ts), its runtime dies where it says.
 */
export function archiverService(iam: LocalIam, crashPoint: CrashPointSpec | undefined): LocalService {
  return {
    name: 'archiver',
    label: 'Archiver',
    async start(context) {
      const { handler } = await import('../../lambdas/handlers/archiver.ts');
      const { getArchiverRuntime } = await import('../../lambdas/wiring/archive.ts');
      // A missing bucket setting stops the start, named, as a cold start would fail.
      const runtime = await getArchiverRuntime();
      if (crashPoint) installArchiveCrashPoints(runtime, crashPoint);
      const consumer = await startLedgerStreamConsumer(context, iam, {
        role: 'archiver',
        name: 'archiver',
        handler,
        checkpointFile: 'archiver-checkpoint.json',
        failureQueue: 'notice-ledger-archive-failures',
        ...LOCAL_ARCHIVER_MAPPING,
      });
      return {
        describe: `on the ledger stream: batches of up to ${LOCAL_ARCHIVER_MAPPING.batchSize}, a ${LOCAL_ARCHIVER_MAPPING.maxBatchingWindowMs / 1000} s window, failures to notice-ledger-archive-failures`,
        stop: () => consumer.stop(),
      };
    },
  };
}
