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
import { mkdir, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join, sep } from 'node:path';
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
  readonly now?: () => number;
}

export async function startLocalS3(options: LocalS3Options): Promise<LocalS3> {
  await mkdir(options.directory, { recursive: true });
  const journal = new StoreJournal(options.journalFile);
  const rolledBack = await reconcile(options.directory, journal);
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, directory: options.directory, silent: true });
  const address = await s3rver.run();
  const upstream = `http://127.0.0.1:${address.port}`;
  let front: S3Front | undefined;
  try {
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

const OBJECT_SUFFIX = '._S3rver_object';
const METADATA_SUFFIX = '._S3rver_metadata.json';
/** An object's files: s3rver writes the object, its checksum and its metadata, then answers. */
const OBJECT_FILES = [OBJECT_SUFFIX, `${OBJECT_SUFFIX}.md5`, METADATA_SUFFIX] as const;

/**
 * Before s3rver starts, on its files (`<bucket>/<key>` + a suffix; s3rver encodes keys only on
 * Windows): every object the journal does not name was never acknowledged (a kill cut its PUT,
 * perhaps mid-way through its metadata file, which would make s3rver answer every listing of the
 * bucket 500), so its files are removed, as S3 would never have stored it; the journal forgets
 * objects whose files are gone, and is rewritten compacted. Answers how many objects were removed.
 */
async function reconcile(directory: string, journal: StoreJournal): Promise<number> {
  const present = new Set<string>();
  const unacknowledged = new Set<string>();
  for (const file of await readdir(directory, { recursive: true, encoding: 'utf8' })) {
    const suffix = [OBJECT_SUFFIX, METADATA_SUFFIX].find((s) => file.endsWith(s));
    if (!suffix) continue;
    const stem = file.slice(0, -suffix.length);
    const [bucket = '', ...key] = stem.split(sep);
    const id = `${bucket}\n${key.join('/')}`;
    if (!journal.object(bucket, key.join('/'))) unacknowledged.add(stem);
    else if (suffix === OBJECT_SUFFIX) present.add(id);
  }
  for (const stem of unacknowledged) {
    await Promise.all(OBJECT_FILES.map((suffix) => rm(join(directory, `${stem}${suffix}`), { force: true })));
  }
  journal.compact((bucket, key) => present.has(`${bucket}\n${key}`));
  return unacknowledged.size;
}
