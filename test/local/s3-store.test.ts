/**
 * The local S3 store (local/s3/): s3rver behind the strict front, driven with the real AWS SDK S3
 * client as the archiver drives it. What s3rver honours by itself (user metadata, gzip bodies,
 * HeadObject, ListObjectsV2 paging) and what the front emulates (conditional writes, Object Lock
 * in compliance mode, checksums, all-or-nothing writes across a kill), each shown failing where S3
 * fails.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  S3Client,
  type S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startLocalS3 } from '../../local/s3/server.ts';
import { makeDataDir } from '../helpers/local-stack.ts';

const REGION = 'us-east-1';
const BUCKET = 'archive-test';
const YEAR_MS = 365 * 86_400_000;

let dataDir: string;
let store: LocalS3 | undefined;
const clients: S3Client[] = [];

const storeOptions = () => ({
  directory: join(dataDir, 's3'),
  journalFile: join(dataDir, 's3-journal.jsonl'),
});

function client(options: { checksums?: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED' } = {}): S3Client {
  const made = new S3Client({
    endpoint: store?.endpoint,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestChecksumCalculation: options.checksums ?? 'WHEN_SUPPORTED',
  });
  clients.push(made);
  return made;
}

/** The S3 error a call fails with (its name and HTTP status), or `ok`. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    const e = error as S3ServiceException;
    return `${e.name} ${e.$metadata?.httpStatusCode}`;
  }
}

async function bodyOf(s3: S3Client, key: string): Promise<Buffer> {
  const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array()));
}

async function lockedBucket(s3: S3Client, bucket = BUCKET): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
  await s3.send(
    new PutObjectLockConfigurationCommand({
      Bucket: bucket,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 6 } },
      },
    }),
  );
}

beforeAll(async () => {
  dataDir = await makeDataDir('notice-ledger-s3-');
  store = await startLocalS3(storeOptions());
  await lockedBucket(client());
});

afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
});

afterAll(async () => {
  await store?.close();
});

describe('local S3 store: what s3rver honours', () => {
  it('keeps user metadata, Content-Encoding gzip, Content-Type and the storage class (GLACIER_IR), and the bytes', async () => {
    const s3 = client();
    const lines = '{"kind":"transition","seq":1}\n{"kind":"transition","seq":2}\n';
    const body = gzipSync(Buffer.from(lines));
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'facts/day=2027-03-01/shard-1/000100.jsonl.gz',
        Body: body,
        IfNoneMatch: '*',
        ContentType: 'application/x-ndjson',
        ContentEncoding: 'gzip',
        StorageClass: 'GLACIER_IR',
        Metadata: { 'last-sequence': '000200' },
      }),
    );
    const head = await s3.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'facts/day=2027-03-01/shard-1/000100.jsonl.gz' }),
    );
    expect(head).toMatchObject({
      Metadata: { 'last-sequence': '000200' },
      ContentEncoding: 'gzip',
      ContentType: 'application/x-ndjson',
      StorageClass: 'GLACIER_IR',
      ContentLength: body.length,
    });
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'facts/day=2027-03-01/' }),
    );
    expect(listed.Contents?.map((c) => [c.Key, c.Size, c.StorageClass])).toEqual([
      ['facts/day=2027-03-01/shard-1/000100.jsonl.gz', body.length, 'GLACIER_IR'],
    ]);
    const got = await bodyOf(s3, 'facts/day=2027-03-01/shard-1/000100.jsonl.gz');
    expect(got.equals(body)).toBe(true);
    expect(gunzipSync(got).toString('utf8')).toBe(lines);
  });

  it('HeadObject of a missing key is NotFound (404), GetObject NoSuchKey', async () => {
    const s3 = client();
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'nope' })))).toBe(
      'NotFound 404',
    );
    expect(await outcome(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'nope' })))).toBe(
      'NoSuchKey 404',
    );
  });

  it('ListObjectsV2: prefix, delimiter and paging with continuation tokens', async () => {
    const s3 = client();
    const keys = Array.from({ length: 5 }, (_, i) => `rows/day=2027-03-0${i + 1}/shard-1/${i}.jsonl.gz`);
    for (const key of keys) {
      await s3.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: gzipSync('{}\n'), IfNoneMatch: '*' }),
      );
    }
    const days = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'rows/', Delimiter: '/' }));
    expect(days.CommonPrefixes?.map((p) => p.Prefix)).toEqual(
      keys.map((k) => `${k.split('/').slice(0, 2).join('/')}/`),
    );
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'rows/', MaxKeys: 2, ContinuationToken: token }),
      );
      pages += 1;
      seen.push(...(page.Contents ?? []).map((c) => c.Key as string));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual(keys);
  });
});

describe('local S3 store: what the front emulates', () => {
  it('a bucket created with Object Lock answers its compliance-mode default retention and versioning Enabled', async () => {
    const s3 = client();
    const config = await s3.send(new GetObjectLockConfigurationCommand({ Bucket: BUCKET }));
    expect(config.ObjectLockConfiguration).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 6 } },
    });
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: BUCKET }))).Status).toBe('Enabled');
    await s3.send(new CreateBucketCommand({ Bucket: 'plain-bucket' }));
    expect(await outcome(s3.send(new GetObjectLockConfigurationCommand({ Bucket: 'plain-bucket' })))).toBe(
      'ObjectLockConfigurationNotFoundError 404',
    );
  });

  it('PutObject with If-None-Match: * is 412 PreconditionFailed when the key exists; the first body stays', async () => {
    const s3 = client();
    const key = 'facts/day=2027-03-02/shard-1/000300.jsonl.gz';
    const first = gzipSync('{"first":true}\n');
    expect(
      await outcome(
        s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: first, IfNoneMatch: '*' })),
      ),
    ).toBe('ok');
    expect(
      await outcome(
        s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: key,
            Body: gzipSync('{"second":true}\n'),
            IfNoneMatch: '*',
          }),
        ),
      ),
    ).toBe('PreconditionFailed 412');
    expect((await bodyOf(s3, key)).equals(first)).toBe(true);
  });

  it('of 12 concurrent conditional PUTs of one key exactly one wins, and its body is the object', async () => {
    const s3 = client();
    const key = 'facts/day=2027-03-03/shard-1/race.jsonl.gz';
    const bodies = Array.from({ length: 12 }, (_, i) => gzipSync(`{"writer":${i}}\n`));
    const results = await Promise.all(
      bodies.map((Body) =>
        outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body, IfNoneMatch: '*' }))),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r === 'PreconditionFailed 412')).toHaveLength(11);
    const winner = results.indexOf('ok');
    expect((await bodyOf(s3, key)).equals(bodies[winner] as Buffer)).toBe(true);
  });

  it('compliance mode: an overwrite and a delete of a retained object are AccessDenied (403), DeleteObjects per key; it stays', async () => {
    const s3 = client();
    const key = 'rows/day=2027-03-04/shard-1/locked.jsonl.gz';
    const body = gzipSync('{"row":1}\n');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    expect(
      await outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: gzipSync('x') }))),
    ).toBe('AccessDenied 403');
    expect(await outcome(s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key })))).toBe(
      'AccessDenied 403',
    );
    const many = await s3.send(
      new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: key }] } }),
    );
    expect(many.Errors?.map((e) => [e.Key, e.Code])).toEqual([[key, 'AccessDenied']]);
    expect(many.Deleted ?? []).toEqual([]);
    expect((await bodyOf(s3, key)).equals(body)).toBe(true);
  });

  it('each object gets its bucket’s default retention: compliance until six years after the write', async () => {
    const s3 = client();
    const key = 'facts/day=2027-03-05/shard-1/retained.jsonl.gz';
    const before = Date.now();
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: gzipSync('{}\n') }));
    const { Retention } = await s3.send(new GetObjectRetentionCommand({ Bucket: BUCKET, Key: key }));
    expect(Retention?.Mode).toBe('COMPLIANCE');
    const until = Retention?.RetainUntilDate?.getTime() ?? 0;
    expect(until).toBeGreaterThan(before + 6 * YEAR_MS);
    expect(until).toBeLessThan(Date.now() + 6 * YEAR_MS + 2 * 86_400_000);
  });

  it('a write into the Object Lock bucket without Content-MD5 or a checksum is refused (400), as S3 refuses it', async () => {
    const bare = client({ checksums: 'WHEN_REQUIRED' });
    expect(
      await outcome(bare.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'facts/no-checksum', Body: 'x' }))),
    ).toBe('InvalidRequest 400');
    // Into a bucket without Object Lock the same write passes.
    expect(
      await outcome(
        bare.send(new PutObjectCommand({ Bucket: 'plain-bucket', Key: 'no-checksum', Body: 'x' })),
      ),
    ).toBe('ok');
  });

  it('a checksum that does not match the body is BadDigest (400), and nothing is stored', async () => {
    const s3 = client();
    expect(
      await outcome(
        s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: 'facts/bad-digest',
            Body: 'abc',
            ChecksumCRC32: 'AAAAAA==',
          }),
        ),
      ),
    ).toBe('BadDigest 400');
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'facts/bad-digest' })))).toBe(
      'NotFound 404',
    );
  });

  it('a bucket without Object Lock overwrites and deletes as S3 does', async () => {
    const s3 = client();
    await s3.send(new PutObjectCommand({ Bucket: 'plain-bucket', Key: 'k', Body: 'one' }));
    await s3.send(new PutObjectCommand({ Bucket: 'plain-bucket', Key: 'k', Body: 'two' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'plain-bucket', Key: 'k' }));
    expect(await got.Body?.transformToString()).toBe('two');
    await s3.send(new DeleteObjectCommand({ Bucket: 'plain-bucket', Key: 'k' }));
    expect(await outcome(s3.send(new HeadObjectCommand({ Bucket: 'plain-bucket', Key: 'k' })))).toBe(
      'NotFound 404',
    );
  });

  it('across a restart: an object whose metadata a kill cut mid-write is removed, and the store starts', async () => {
    const s3 = client();
    const kept = 'facts/day=2027-03-07/shard-1/kept.jsonl.gz';
    const torn = 'facts/day=2027-03-07/shard-1/torn.jsonl.gz';
    for (const key of [kept, torn]) {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: gzipSync('{}\n') }));
    }
    await store?.close();
    // A kill inside s3rver's write: the object's file is there, its metadata file cut short, and
    // the front never answered (so never journaled) it.
    const journalFile = storeOptions().journalFile;
    const lines = (await readFile(journalFile, 'utf8')).trimEnd().split('\n');
    await writeFile(journalFile, `${lines.filter((l) => !l.includes('torn.jsonl.gz')).join('\n')}\n`);
    await writeFile(join(dataDir, 's3', BUCKET, `${torn}._S3rver_metadata.json`), '{"content-ty');

    store = await startLocalS3(storeOptions());
    expect(store.rolledBack).toBe(1);
    const again = client();
    const listed = await again.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'facts/day=2027-03-07/' }),
    );
    expect(listed.Contents?.map((c) => c.Key)).toEqual([kept]);
    expect(await outcome(again.send(new HeadObjectCommand({ Bucket: BUCKET, Key: torn })))).toBe(
      'NotFound 404',
    );
  });

  it('across a restart: objects, metadata and locks stay; an object a kill left unacknowledged is gone', async () => {
    const s3 = client();
    const kept = 'facts/day=2027-03-06/shard-1/kept.jsonl.gz';
    const torn = 'facts/day=2027-03-06/shard-1/torn.jsonl.gz';
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: kept,
        Body: gzipSync('{}\n'),
        Metadata: { 'last-sequence': '9' },
      }),
    );
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: torn, Body: gzipSync('{}\n') }));
    await store?.close();
    // A kill between s3rver's write and the front's journal line: the journal never names the object.
    const journalFile = storeOptions().journalFile;
    const lines = (await readFile(journalFile, 'utf8')).trimEnd().split('\n');
    await writeFile(journalFile, `${lines.filter((l) => !l.includes('torn.jsonl.gz')).join('\n')}\n`);

    store = await startLocalS3(storeOptions());
    expect(store.rolledBack).toBe(1);
    const again = client();
    expect(await outcome(again.send(new HeadObjectCommand({ Bucket: BUCKET, Key: torn })))).toBe(
      'NotFound 404',
    );
    const head = await again.send(new HeadObjectCommand({ Bucket: BUCKET, Key: kept }));
    expect(head.Metadata).toEqual({ 'last-sequence': '9' });
    expect(await outcome(again.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: kept })))).toBe(
      'AccessDenied 403',
    );
    expect(
      await outcome(
        again.send(new PutObjectCommand({ Bucket: BUCKET, Key: kept, Body: 'x', IfNoneMatch: '*' })),
      ),
    ).toBe('PreconditionFailed 412');
  });
});
