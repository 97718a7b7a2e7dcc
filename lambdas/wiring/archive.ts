import { S3Client } from '@aws-sdk/client-s3';
import { dynamoDbKeyRecords } from '../adapters/dynamodb/key-records.ts';
import { S3ArchiveObjects } from '../adapters/s3/archive-objects.ts';
import { ConfigError } from '../contract/config-error.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { ArchiverDependencies } from '../use-cases/archive-changes.ts';
import { type AwsClients, buildAwsClients } from './aws-clients.ts';
import { keyTable } from './ledger.ts';
import { once } from './once.ts';

export { archiveBatchOf } from '../adapters/dynamodb/ledger/stream-changes.ts';

/**
 * The archive bucket's S3 client, the function's own (./aws-clients.ts, so the local stack's IAM
 * check sees its calls). Path-style addressing when AWS_ENDPOINT_URL_S3 names a local store: the
 * SDK otherwise puts the bucket in the host name (`<bucket>.127.0.0.1:…`), which no loopback
 * server answers. In AWS the endpoint is unset and buckets are addressed virtual-hosted, as S3
 * wants.
 */
export function archiveS3Client(
  config: Pick<Config, 'AWS_ENDPOINT_URL_S3'>,
  adopt: AwsClients['adopt'],
): S3Client {
  return adopt(new S3Client(config.AWS_ENDPOINT_URL_S3 ? { forcePathStyle: true } : {}));
}

/**
 * The archive bucket (ARCHIVE_BUCKET) as its functions use it: the archiver writes its objects,
 * the http function reads a timeline past the hot window from its `rows/` objects.
 */
export function archiveObjects(
  config: Pick<Config, 'ARCHIVE_BUCKET' | 'AWS_ENDPOINT_URL_S3'>,
  adopt: AwsClients['adopt'],
  user: string,
): S3ArchiveObjects {
  if (!config.ARCHIVE_BUCKET) throw new ConfigError(`invalid configuration: ${user} needs ARCHIVE_BUCKET`);
  return new S3ArchiveObjects(archiveS3Client(config, adopt), config.ARCHIVE_BUCKET);
}

/** The archiver's ports: the archive bucket, and the key table it writes key records to. */
export function buildArchiverRuntime(
  env: Record<string, string | undefined> = process.env,
  clients: AwsClients = buildAwsClients('archiver'),
): ArchiverDependencies {
  const config = readConfig(env);
  return {
    store: archiveObjects(config, clients.adopt, 'the archiver'),
    keyRecords: dynamoDbKeyRecords(keyTable(config, clients.dynamodb), {
      bucketChars: config.KEY_BUCKET_CHARS,
    }),
    clock: systemClock,
    retentionYears: config.ARCHIVE_RETENTION_YEARS,
  };
}

export const getArchiverRuntime = once(async () => buildArchiverRuntime());
