/**
 * What the local S3 store (./server.ts) keeps beside s3rver, which has no Object Lock and no
 * index of its own that a kill leaves consistent: each bucket's Object Lock configuration, and
 * each object the store acknowledged (ETag, size, time, storage class, retention). One JSON Lines
 * file, appended before the front (./front.ts) answers, read back at start-up and rewritten
 * compacted.
 *
 * Being journalled is what makes an object exist. s3rver writes an object's file and metadata in
 * steps and answers before the file is flushed, so a kill -9 can leave a partial object; the front
 * journals an object only once it read it back whole, and at start-up every object s3rver holds
 * that the journal does not name is removed: a PUT is all or nothing, as S3's is. Listings are
 * answered from the journal too (./listing.ts).
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BucketLock, RetentionMode } from './object-lock.ts';

export interface StoredObject {
  readonly etag: string;
  readonly size: number;
  /** ISO 8601, as the store stamped the write. */
  readonly lastModified: string;
  readonly storageClass: string;
  readonly mode?: RetentionMode;
  /** ISO 8601. */
  readonly retainUntil?: string;
}

type JournalLine =
  | { readonly bucket: string; readonly lock: BucketLock | null }
  | { readonly bucket: string; readonly key: string; readonly put: StoredObject }
  | { readonly bucket: string; readonly key: string; readonly deleted: true };

export class StoreJournal {
  readonly #file: string;
  readonly #buckets = new Map<string, BucketLock>();
  /** Per bucket, per key. */
  readonly #objects = new Map<string, Map<string, StoredObject>>();

  constructor(file: string) {
    this.#file = file;
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // None yet.
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        this.#apply(JSON.parse(line) as JournalLine);
      } catch {
        // A kill -9 mid-append tears at most the last line: that write was never answered.
      }
    }
  }

  bucketLock(bucket: string): BucketLock | undefined {
    return this.#buckets.get(bucket);
  }

  object(bucket: string, key: string): StoredObject | undefined {
    return this.#objects.get(bucket)?.get(key);
  }

  /** The bucket's objects, in no particular order. */
  objectsOf(bucket: string): ReadonlyMap<string, StoredObject> {
    return this.#objects.get(bucket) ?? new Map();
  }

  setBucketLock(bucket: string, lock: BucketLock | null): void {
    this.#append({ bucket, lock });
  }

  putObject(bucket: string, key: string, object: StoredObject): void {
    this.#append({ bucket, key, put: object });
  }

  deleteObject(bucket: string, key: string): void {
    this.#append({ bucket, key, deleted: true });
  }

  /** Keeps only the objects `present(bucket, key)` says the store holds; rewrites the file compacted. */
  compact(present: (bucket: string, key: string) => boolean): void {
    const lines: JournalLine[] = [...this.#buckets].map(([bucket, lock]) => ({ bucket, lock }));
    for (const [bucket, objects] of this.#objects) {
      for (const [key, put] of [...objects]) {
        if (present(bucket, key)) lines.push({ bucket, key, put });
        else objects.delete(key);
      }
    }
    mkdirSync(dirname(this.#file), { recursive: true });
    writeFileSync(`${this.#file}.tmp`, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    renameSync(`${this.#file}.tmp`, this.#file);
  }

  #append(entry: JournalLine): void {
    mkdirSync(dirname(this.#file), { recursive: true });
    appendFileSync(this.#file, `${JSON.stringify(entry)}\n`);
    this.#apply(entry);
  }

  #apply(entry: JournalLine): void {
    if ('lock' in entry) {
      if (entry.lock) this.#buckets.set(entry.bucket, entry.lock);
      else this.#buckets.delete(entry.bucket);
      return;
    }
    let objects = this.#objects.get(entry.bucket);
    if (!objects) {
      objects = new Map();
      this.#objects.set(entry.bucket, objects);
    }
    if ('put' in entry) objects.set(entry.key, entry.put);
    else objects.delete(entry.key);
  }
}

/** One lock per object: the front's per-key serialization key. */
export function objectId(bucket: string, key: string): string {
  return `${bucket}/${key}`;
}
