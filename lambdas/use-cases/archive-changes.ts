import { Archive, archiveObjectKey } from '../contract/archive.ts';
import {
  type ArchiveBatch,
  type ArchivedIntent,
  archivePartsOf,
  keyRecordExpiry,
  keyRecordOf,
} from '../domain/archive-record.ts';
import type { ArchiveObjectStore, KeyRecordWrite, KeyRecordWriter } from '../ports/archive-writer.port.ts';
import type { Clock } from '../ports/clock.port.ts';

/*
 * The archiver (docs/archive.md): one batch of the ledger table's change stream → a `facts/`
 * object, a `rows/` object, then the key records, in that order. The stream hands every change
 * at least once; the archive holds each fact once in content:
 *
 * - An object is named by its first stream record and says (metadata `last-sequence`) how far it
 *   reaches. Before writing, the archiver asks whether the name exists: absent, it writes
 *   (if-none-match: a concurrent writer who won makes it ask again); present, the records up to
 *   its reach are done and only the rest is written, under the rest's first record. Each prefix
 *   on its own, so a crash between the two writes leaves the second to the next delivery.
 * - A failure of any step answers the batch's FIRST record: the event source hands the whole
 *   batch again from the same checkpoint (no bisect, lib/ wiring), so the next attempt looks up
 *   the same names. Naming a later record would start the next batch there, under a name no
 *   object has, and write the records past it a second time.
 * - Key records are written last, each as a whole (the same record written twice is one record),
 *   pointing at the object that holds the row, so a key record never names an object not there.
 */

export interface ArchiverDependencies {
  readonly store: ArchiveObjectStore;
  readonly keyRecords: KeyRecordWriter;
  readonly clock: Clock;
  /** ARCHIVE_RETENTION_YEARS: how long a key record is kept after its row resolved. */
  readonly retentionYears: number;
}

export interface ArchiveResult {
  /** Fact lines this call wrote. */
  readonly factsArchived: number;
  /** Resolved rows this call wrote (at most one line per row per object). */
  readonly rowsArchived: number;
  readonly keyRecordsWritten: number;
  readonly objectsWritten: number;
  /** Lines of the batch the archive already held (a batch handed again): not written twice. */
  readonly duplicatesSkipped: number;
  /** Now − the batch's first change: how far the archive is behind the table. */
  readonly lagMs: number;
  /**
   * An object that reaches past this batch's last record: the batch was handed shorter than an
   * earlier delivery of it, so the next batch may write facts of that object again (never lost;
   * the event source must hand the same batch or a longer one). Said, so it is never silent.
   */
  readonly overreaching?: string | undefined;
  /** Set when a step failed: the batch's first record, which the event source hands again with the rest. */
  readonly failedAt?: string | undefined;
  readonly error?: unknown;
}

/** A line bound for an object, with the stream record it came from. */
interface Entry<Line extends object> {
  readonly sequence: string;
  readonly createdAt: number;
  readonly line: Line;
  /** Lines with the same key are one line in an object: the last one written. */
  readonly key?: string | undefined;
}

interface Placement {
  /** sequence → the object that holds that record's line. */
  readonly objectOf: ReadonlyMap<string, string>;
  readonly linesWritten: number;
  readonly objectsWritten: number;
  readonly skipped: number;
  /** An object found reaching past the batch's last record (the batch came shorter than before). */
  readonly overreaching?: string | undefined;
}

/** Another writer taking the same name between our look and our write: look again, this often at most. */
const MAX_NAME_RACES = 4;

const utcDay = (epochMs: number) => new Date(epochMs).toISOString().slice(0, 10);

/** Sequence numbers are digit strings of varying length: compared as integers. */
const after = (sequence: string, reach: string) => BigInt(sequence) > BigInt(reach);

/** The last entry of each key, in stream order (entries without a key all stay). */
function lastOfEach<Line extends object>(entries: readonly Entry<Line>[]): Entry<Line>[] {
  const lastIndex = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (entry.key !== undefined) lastIndex.set(entry.key, index);
  });
  return entries.filter((entry, index) => entry.key === undefined || lastIndex.get(entry.key) === index);
}

/**
 * Writes the entries once under `prefix`, however often the batch is handed: each round looks
 * the name of the first pending entry up, skips what an object of that name already covers, and
 * writes the rest if-absent.
 */
async function writeOnce<Line extends object>(
  store: ArchiveObjectStore,
  prefix: typeof Archive.factsPrefix | typeof Archive.rowsPrefix,
  batch: ArchiveBatch,
  entries: readonly Entry<Line>[],
): Promise<Placement> {
  const objectOf = new Map<string, string>();
  let pending = entries;
  let linesWritten = 0;
  let objectsWritten = 0;
  let skipped = 0;
  let races = 0;
  let overreaching: string | undefined;
  while (pending.length > 0) {
    const first = pending[0] as Entry<Line>;
    const key = archiveObjectKey(prefix, {
      day: utcDay(first.createdAt),
      streamLabel: batch.streamLabel,
      sequence: first.sequence,
    });
    const reach = await store.lastSequenceOf(key);
    if (reach === undefined) {
      const lines = lastOfEach(pending);
      const outcome = await store.putIfAbsent(
        key,
        lines.map((entry) => entry.line),
        batch.last.sequence,
      );
      if (outcome === 'written') {
        for (const entry of pending) objectOf.set(entry.sequence, key);
        linesWritten += lines.length;
        objectsWritten += 1;
        break;
      }
      races += 1;
      if (races > MAX_NAME_RACES) throw new Error(`archive object ${key}: the name was taken ${races} times`);
      continue;
    }
    const done = pending.filter((entry) => !after(entry.sequence, reach));
    if (done.length === 0) {
      // Its name says it starts at our first record, its metadata that it ends before it: an
      // object this archiver did not write. Never overwritten; a person looks.
      throw new Error(`archive object ${key} ends (${reach}) before its own first record`);
    }
    for (const entry of done) objectOf.set(entry.sequence, key);
    skipped += lastOfEach(done).length;
    pending = pending.filter((entry) => after(entry.sequence, reach));
    // The object reaches past this batch: the batch was handed shorter than before, and the next
    // one starts inside the object under a name no object has (docs/archive.md "Each fact once").
    if (after(reach, batch.last.sequence)) overreaching = key;
  }
  return { objectOf, linesWritten, objectsWritten, skipped, overreaching };
}

/** Archives one batch of changes: facts, then rows, then key records. */
export async function archiveChanges(
  batch: ArchiveBatch,
  deps: ArchiverDependencies,
): Promise<ArchiveResult> {
  const lagMs = Math.max(0, deps.clock.now() - batch.first.createdAt);
  const factEntries: Entry<object>[] = [];
  const rowEntries: Entry<ArchivedIntent>[] = [];
  const resolvedAt = new Map<string, number>();
  for (const change of batch.changes) {
    const parts = archivePartsOf(change);
    for (const line of parts.facts) {
      factEntries.push({ sequence: change.sequence, createdAt: change.createdAt, line });
    }
    if (parts.resolved) {
      const { row } = parts.resolved;
      rowEntries.push({
        sequence: change.sequence,
        createdAt: change.createdAt,
        line: row,
        key: `${row.noticeId}#${row.channel}`,
      });
      resolvedAt.set(change.sequence, parts.resolved.resolvedAt);
    }
  }
  let facts: Placement | undefined;
  let rows: Placement | undefined;
  let keyRecordsWritten = 0;
  const progress = (): ArchiveResult => ({
    factsArchived: facts?.linesWritten ?? 0,
    rowsArchived: rows?.linesWritten ?? 0,
    keyRecordsWritten,
    objectsWritten: (facts?.objectsWritten ?? 0) + (rows?.objectsWritten ?? 0),
    duplicatesSkipped: (facts?.skipped ?? 0) + (rows?.skipped ?? 0),
    lagMs,
    overreaching: facts?.overreaching ?? rows?.overreaching,
  });
  try {
    facts = await writeOnce(deps.store, Archive.factsPrefix, batch, factEntries);
    rows = await writeOnce(deps.store, Archive.rowsPrefix, batch, rowEntries);
    const writes: KeyRecordWrite[] = lastOfEach(rowEntries).map((entry) => ({
      record: keyRecordOf(entry.line, rows?.objectOf.get(entry.sequence) as string),
      expiresAt: keyRecordExpiry(resolvedAt.get(entry.sequence) as number, deps.retentionYears),
    }));
    await deps.keyRecords.writeKeyRecords(writes);
    keyRecordsWritten = writes.length;
    return progress();
  } catch (error) {
    return { ...progress(), failedAt: batch.first.sequence, error };
  }
}
