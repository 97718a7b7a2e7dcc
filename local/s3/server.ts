/**
 * The local S3-compatible store: s3rver (npm, MIT; files on disk, in this process) behind the
 * strict front of ./front.ts, both on 127.0.0.1. Why s3rver: a pure-Node S3 emulator that keeps
 * objects, user metadata, Content-Encoding and storage class as files in the data dir and answers
 * the SDK v3's PutObject / HeadObject / GetObject / ListObjectsV2 as S3 does, with three small
 * dependencies' worth of start-up (milliseconds, no JVM, no container); what it lacks (conditional
 * writes, Object Lock, all-or-nothing writes) the front adds. Measured in local/README.md,
 * "The archive store".
 *
 * Objects are files under `<dir>/<bucket>/<key>._S3rver_object` (metadata beside them); the
 * front's journal (./object-lock.ts) is `<journal>`.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join, relative, sep } from 'node:path';
import { DeleteObjectCommand, ListBucketsCommand, ListObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { closeServer } from '../loopback-server.ts';
import { type S3Front, startS3Front } from './front.ts';
import { StoreJournal } from './journal.ts';

const require = createRequire(import.meta.url);

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  readonly httpServer: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = require('s3rver') as S3rverClass;

/**
 * s3rver 3.7.1 (2020) predates the storage classes S3 added since (Glacier Instant Retrieval,
 * 2021, is the archive's) and refuses them as InvalidStorageClass; its list is extended with
 * them, and it keeps and answers the class as it does the older ones.
 */
const { STORAGE_CLASSES } = require('s3rver/lib/models/object.js') as { STORAGE_CLASSES: string[] };
for (const storageClass of ['GLACIER_IR', 'EXPRESS_ONEZONE', 'SNOW']) {
  if (!STORAGE_CLASSES.includes(storageClass)) STORAGE_CLASSES.push(storageClass);
}

export interface LocalS3 {
  /** The front's `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_S3`. */
  readonly endpoint: string;
  /** Objects a kill left half-written, removed at start-up. */
  readonly rolledBack: number;
  close(): Promise<void>;
}

export interface LocalS3Options {
  /** s3rver's files. */
  readonly directory: string;
  /** The front's journal (JSON Lines). */
  readonly journalFile: string;
  /** The front's port; 0 (default): any free port. */
  readonly port?: number;
  readonly region: string;
  readonly now?: () => number;
}

export async function startLocalS3(options: LocalS3Options): Promise<LocalS3> {
  await mkdir(options.directory, { recursive: true });
  const journal = new StoreJournal(options.journalFile);
  const torn = await removeTornObjects(options.directory, journal);
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, directory: options.directory, silent: true });
  const address = await s3rver.run();
  const upstream = `http://127.0.0.1:${address.port}`;
  let front: S3Front | undefined;
  try {
    const rolledBack = torn + (await reconcile(upstream, options.region, journal));
    front = await startS3Front({
      upstream,
      journal,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    const started = front;
    let closing: Promise<void> | undefined;
    return {
      endpoint: started.endpoint,
      rolledBack,
      close() {
        closing ??= (async () => {
          await started.close();
          await closeServer(s3rver.httpServer);
        })();
        return closing;
      },
    };
  } catch (error) {
    await front?.close();
    await closeServer(s3rver.httpServer);
    throw error;
  }
}

const METADATA_SUFFIX = '._S3rver_metadata.json';
const OBJECT_SUFFIX = '._S3rver_object';

/**
 * Before s3rver starts: an object whose metadata file a kill cut mid-write (s3rver writes the
 * object, then its metadata, then answers) makes s3rver answer every listing of its bucket with
 * a 500, so the store could not start again. Such an object was never acknowledged, so the journal
 * does not name it: its files are removed, as S3 would never have stored it. One the journal
 * names is left for s3rver to report. Answers how many were removed.
 */
async function removeTornObjects(directory: string, journal: StoreJournal): Promise<number> {
  let removed = 0;
  const files = await readdir(directory, { recursive: true, encoding: 'utf8' });
  for (const file of files.filter((f) => f.endsWith(METADATA_SUFFIX))) {
    const path = join(directory, file);
    try {
      JSON.parse(await readFile(path, 'utf8'));
      continue;
    } catch {
      // Torn (or emptied) by a kill: below.
    }
    const [bucket = '', ...rest] = relative(directory, path).split(sep);
    const key = rest.join('/').slice(0, -METADATA_SUFFIX.length);
    if (journal.object(bucket, key)) continue;
    const objectPath = path.slice(0, -METADATA_SUFFIX.length) + OBJECT_SUFFIX;
    await Promise.all([path, objectPath, `${objectPath}.md5`].map((f) => rm(f, { force: true })));
    removed += 1;
  }
  return removed;
}

/**
 * Before the front answers anything: every object s3rver holds that the journal does not name was
 * never acknowledged (a kill cut its PUT), so it is removed, as S3 would never have stored it; the
 * journal forgets objects s3rver no longer holds, and is rewritten compacted. Answers how many
 * objects were removed.
 */
async function reconcile(upstream: string, region: string, journal: StoreJournal): Promise<number> {
  const client = new S3Client({
    endpoint: upstream,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  try {
    const present = new Set<string>();
    const id = (bucket: string, key: string) => `${bucket}\n${key}`;
    let removed = 0;
    const { Buckets = [] } = await client.send(new ListBucketsCommand({}));
    for (const { Name: bucket } of Buckets) {
      if (!bucket) continue;
      // Version 1 paged by marker: s3rver's V2 continuation token needs a cipher OpenSSL 3 lacks
      // (a truncated V2 listing answers 500).
      let marker: string | undefined;
      do {
        const page = await client.send(new ListObjectsCommand({ Bucket: bucket, Marker: marker }));
        const keys = (page.Contents ?? []).flatMap((c) => (c.Key === undefined ? [] : [c.Key]));
        for (const key of keys) {
          if (journal.object(bucket, key)) {
            present.add(id(bucket, key));
          } else {
            await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
            removed += 1;
          }
        }
        marker = page.IsTruncated ? keys[keys.length - 1] : undefined;
      } while (marker);
    }
    journal.compact((bucket, key) => present.has(id(bucket, key)));
    return removed;
  } finally {
    client.destroy();
  }
}
