/**
 * The archive's S3 adapter (lambdas/adapters/s3/archive-objects.ts) against the local S3 store
 * (local/s3/: s3rver behind its strict front, which answers conditional writes and Object Lock as
 * S3 does), with the S3 client the archiver's wiring builds (path-style for a local endpoint).
 */
import { gunzipSync } from 'node:zlib';
import {
  CreateBucketCommand,
  GetObjectCommand,
  GetObjectRetentionCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectLockConfigurationCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3ArchiveObjects } from '../../lambdas/adapters/s3/archive-objects.ts';
import { Archive } from '../../lambdas/contract/archive.ts';
import { type ArchiveChange, archivePartsOf } from '../../lambdas/domain/archive-record.ts';
import { archiveChanges } from '../../lambdas/use-cases/archive-changes.ts';
import { archiveS3Client } from '../../lambdas/wiring/archive.ts';
import { type LocalS3, startLocalS3 } from '../../local/s3/server.ts';
import { batchOf, changeStream, MemoryKeyRecords } from '../helpers/archive.ts';
import { makeDataDir } from '../helpers/local-stack.ts';

const BUCKET = 'archive-adapter-test';
let store: LocalS3 | undefined;
let s3: S3Client;
let archive: S3ArchiveObjects;

beforeAll(async () => {
  const dataDir = await makeDataDir('notice-ledger-archive-');
  store = await startLocalS3({
    directory: `${dataDir}/s3`,
    journalFile: `${dataDir}/s3.jsonl`,
  });
  // What the local stack gives a function: the store's endpoint, a Region, local credentials.
  vi.stubEnv('AWS_ENDPOINT_URL_S3', store.endpoint);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  s3 = archiveS3Client({ AWS_ENDPOINT_URL_S3: store.endpoint }, (client) => client);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET, ObjectLockEnabledForBucket: true }));
  await s3.send(
    new PutObjectLockConfigurationCommand({
      Bucket: BUCKET,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Years: 6 } },
      },
    }),
  );
  archive = new S3ArchiveObjects(s3, BUCKET);
});

afterAll(async () => {
  s3?.destroy();
  vi.unstubAllEnvs();
  await store?.close();
});

async function linesOf(key: string): Promise<Record<string, unknown>[]> {
  const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  const text = gunzipSync(await (got.Body?.transformToByteArray() ?? new Uint8Array())).toString('utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function keysUnder(prefix: string): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key as string);
}

describe('S3ArchiveObjects: write once', () => {
  it('an absent name: no reach; written gzip’d JSON Lines, Glacier IR, last-sequence, locked six years', async () => {
    const key = 'facts/day=2027-03-01/label/100.jsonl.gz';
    expect(await archive.lastSequenceOf(key)).toBeUndefined();
    expect(await archive.putIfAbsent(key, [{ kind: 'transition', seq: 1 }, { kind: 'expired' }], '180')).toBe(
      'written',
    );
    expect(await archive.lastSequenceOf(key)).toBe('180');
    expect(await linesOf(key)).toEqual([{ kind: 'transition', seq: 1 }, { kind: 'expired' }]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.StorageClass).toBe('GLACIER_IR');
    const retention = await s3.send(new GetObjectRetentionCommand({ Bucket: BUCKET, Key: key }));
    expect(retention.Retention?.Mode).toBe('COMPLIANCE');
    const years =
      ((retention.Retention?.RetainUntilDate?.getTime() ?? 0) - Date.now()) / (365.25 * 86_400_000);
    expect(years).toBeGreaterThan(5.99);
  });

  it('a name that exists: `exists` (S3’s 412), the object unchanged', async () => {
    const key = 'facts/day=2027-03-01/label/200.jsonl.gz';
    expect(await archive.putIfAbsent(key, [{ first: true }], '210')).toBe('written');
    expect(await archive.putIfAbsent(key, [{ second: true }], '290')).toBe('exists');
    expect(await linesOf(key)).toEqual([{ first: true }]);
    expect(await archive.lastSequenceOf(key)).toBe('210');
  });

  it('twenty writers racing for one name: exactly one writes', async () => {
    const key = 'facts/day=2027-03-01/label/300.jsonl.gz';
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => archive.putIfAbsent(key, [{ writer: i }], '399')),
    );
    expect(outcomes.filter((outcome) => outcome === 'written')).toHaveLength(1);
    const winner = outcomes.indexOf('written');
    expect(await linesOf(key)).toEqual([{ writer: winner }]);
  });

  it('an object without last-sequence (not the archiver’s) is refused, never overwritten', async () => {
    const key = 'facts/day=2027-03-01/label/400.jsonl.gz';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
    await expect(archive.lastSequenceOf(key)).rejects.toThrow(/no last-sequence metadata/);
  });
});

describe('S3ArchiveObjects: the row read back', () => {
  it('the row of (notice, channel) in a rows/ object; undefined for another row or a missing object', async () => {
    const key = 'rows/day=2027-03-01/label/500.jsonl.gz';
    const row = { noticeId: 'ntc_a', channel: 'sms', state: 'delivered', transitions: [] };
    await archive.putIfAbsent(key, [{ noticeId: 'ntc_b', channel: 'sms' }, row], '510');
    expect(await archive.archivedRow(key, 'ntc_a', 'sms')).toEqual(row);
    expect(await archive.archivedRow(key, 'ntc_a', 'email')).toBeUndefined();
    expect(
      await archive.archivedRow('rows/day=2027-03-01/label/nothing.jsonl.gz', 'ntc_a', 'sms'),
    ).toBeUndefined();
  });
});

describe('the archiver over the real store: each fact once', () => {
  const expected = (changes: readonly ArchiveChange[]) =>
    changes
      .flatMap((change) => archivePartsOf(change).facts)
      .map((line) => JSON.stringify(line))
      .sort();
  const archived = async (label: string) => {
    const keys = await keysUnder(Archive.factsPrefix);
    const lines = await Promise.all(keys.filter((key) => key.includes(`/${label}/`)).map(linesOf));
    return lines
      .flat()
      .map((line) => JSON.stringify(line))
      .sort();
  };

  it('handed again, extended, and crashed between the objects: the bucket holds every fact once', async () => {
    const changes = changeStream(8);
    const label = 'redelivery';
    const keyRecords = new MemoryKeyRecords();
    let crashRows = true;
    const crashing = {
      lastSequenceOf: (key: string) => archive.lastSequenceOf(key),
      putIfAbsent: async (key: string, lines: readonly object[], last: string) => {
        if (crashRows && key.startsWith(Archive.rowsPrefix)) throw new Error('killed');
        return archive.putIfAbsent(key, lines, last);
      },
    };
    const deps = { store: crashing, keyRecords, clock: { now: () => Date.now() }, retentionYears: 6 };
    // A first delivery of part of the stream crashes after its facts object.
    const first = await archiveChanges(batchOf(changes, 0, 28, label), deps);
    expect(first.failedAt).toBe(changes[0]?.sequence);
    crashRows = false;
    // Handed again, longer; then again, whole; then the same again.
    for (const to of [36, changes.length, changes.length]) {
      const result = await archiveChanges(batchOf(changes, 0, to, label), deps);
      expect(result.error).toBeUndefined();
    }
    expect(await archived(label)).toEqual(expected(changes));
    expect(await keysUnder(`${Archive.factsPrefix}day=2026-11-30/${label}/`)).toHaveLength(1);
    // Every key record names an object that is there and holds its row.
    expect(keyRecords.records.size).toBe(8);
    for (const { record } of keyRecords.records.values()) {
      const row = await archive.archivedRow(record.rowsObject, record.noticeId, record.channel);
      expect(row?.transitions).toHaveLength(5);
      expect(row).not.toHaveProperty('envelope');
    }
  });
});
