import type { KeyRecord } from '../domain/archive-record.ts';

/**
 * The archive's write side, as the archiver needs it (lambdas/use-cases/archive-changes.ts):
 * write-once objects named by their first stream record, which say how far they reach.
 */
export interface ArchiveObjectStore {
  /**
   * The stream sequence number of the last record the named object covers (its `last-sequence`
   * metadata), or undefined when there is no such object.
   */
  lastSequenceOf(key: string): Promise<string | undefined>;
  /**
   * Writes the lines as the named object, covering the stream up to `lastSequence`, only if no
   * object has that name: `exists` when one does (another writer won), never an overwrite.
   */
  putIfAbsent(key: string, lines: readonly object[], lastSequence: string): Promise<'written' | 'exists'>;
}

/** A key record to write, and when it expires (epoch ms): the row's resolution + the archive's retention. */
export interface KeyRecordWrite {
  readonly record: KeyRecord;
  readonly expiresAt: number;
}

/** The key records in the key table (lambdas/contract/key-table.ts). */
export interface KeyRecordWriter {
  /** Writes each (idempotent: a record written again is the same record); throws if any was not written. */
  writeKeyRecords(writes: readonly KeyRecordWrite[]): Promise<void>;
}
