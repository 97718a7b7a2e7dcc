import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Archive } from '../../contract/archive.ts';
import type { ArchivedIntent } from '../../domain/archive-record.ts';
import type { Channel } from '../../domain/channel.ts';
import type { ArchiveObjectStore } from '../../ports/archive-writer.port.ts';
import type { ArchivedRowReader } from '../../ports/notice-archive.port.ts';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/*
 * The archive bucket (docs/archive.md): gzip'd JSON Lines objects, written once. In AWS the
 * bucket's Object Lock (compliance mode, default retention) refuses every overwrite and delete;
 * the archiver itself never overwrites either: `If-None-Match: *` makes S3 refuse a PUT whose
 * name exists (412), so of two writers racing for one name one wins and the other looks again.
 *
 * Needs s3:GetObject (HeadObject, GetObject), s3:PutObject, and s3:ListBucket on the bucket:
 * without ListBucket S3 answers a missing object with 403, not 404, and the archiver could not
 * tell "not written yet" from "refused".
 */

/**
 * Glacier Instant Retrieval: six years of objects read back rarely (a timeline past the hot
 * window), in milliseconds when they are; batched objects are well above its 128 KB minimum at
 * volume. A local store may ignore the class.
 */
const STORAGE_CLASS = 'GLACIER_IR';

/** S3's answers to a conditional PUT that lost: the name exists (412) or a concurrent conditional write is in flight (409). */
const CONDITIONAL_LOSSES: ReadonlySet<number> = new Set([409, 412]);

const statusOf = (error: unknown) =>
  error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;

export class S3ArchiveObjects implements ArchiveObjectStore, ArchivedRowReader {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async lastSequenceOf(key: string): Promise<string | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const last = head.Metadata?.[Archive.lastSequenceMetadata];
      if (last === undefined || !/^\d+$/.test(last)) {
        // Not an object of this archiver's (it always says how far it reaches): never overwritten.
        throw new Error(`archive object ${key} has no ${Archive.lastSequenceMetadata} metadata`);
      }
      return last;
    } catch (error) {
      if (error instanceof NotFound || statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async putIfAbsent(
    key: string,
    lines: readonly object[],
    lastSequence: string,
  ): Promise<'written' | 'exists'> {
    const body = await gzipAsync(Buffer.from(lines.map((line) => `${JSON.stringify(line)}\n`).join('')));
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: 'application/gzip',
          StorageClass: STORAGE_CLASS,
          IfNoneMatch: '*',
          Metadata: { [Archive.lastSequenceMetadata]: lastSequence },
        }),
      );
      return 'written';
    } catch (error) {
      if (CONDITIONAL_LOSSES.has(statusOf(error) ?? 0)) return 'exists';
      throw error;
    }
  }

  /** The row's line in a `rows/` object (the last, should an object hold it twice); undefined when absent. */
  async archivedRow(
    objectKey: string,
    noticeId: string,
    channel: Channel,
  ): Promise<ArchivedIntent | undefined> {
    let bytes: Uint8Array;
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      bytes = (await out.Body?.transformToByteArray()) ?? new Uint8Array();
    } catch (error) {
      if (error instanceof NoSuchKey || statusOf(error) === 404) return undefined;
      throw error;
    }
    const text = (await gunzipAsync(bytes)).toString('utf8');
    let found: ArchivedIntent | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as ArchivedIntent;
      if (row.noticeId === noticeId && row.channel === channel) found = row;
    }
    return found;
  }
}
