import { type Caller, canSee, canSeeKeyRecord } from '../domain/caller.ts';
import type { Intent } from '../domain/intent.ts';
import type { NoticeReader } from '../ports/intent-ledger.port.ts';
import type { ArchivedIntent, ArchivedRowReader, KeyRecordReader } from '../ports/notice-archive.port.ts';

/** Where a channel's story was read: the ledger table, or the archive once its row left the table. */
export type StorySource = 'ledger' | 'archive';

/** A channel of a notice: its row as the table holds it, or as the archive's `rows/` object keeps it (no envelope, no lease). */
export type ReadChannel =
  | { readonly row: Intent; readonly source: 'ledger' }
  | { readonly row: ArchivedIntent; readonly source: 'archive' };

/**
 * The timeline: every channel of a notice the caller may see, with its full transition history.
 * A channel whose row is in the table is read there; a channel whose resolved row left the table
 * (HOT_RETENTION, docs/archive.md) is read from the archive, through its key record. Both reads
 * run side by side (one Query each): the channels of one notice resolve, and leave the table, at
 * different times, and a channel added by a later replay may be in the table while the first is
 * archived — the story shows every channel wherever it is.
 *
 * None (no such notice, or none of its channels the caller's): undefined, the same answer either
 * way, so a notice id tells a submitter nothing about other submitters' notices. Visibility is the
 * rows' rule (`canSee`) applied to the table's rows and to key records alike (`canSeeKeyRecord`:
 * a key record keeps its submitter's digest).
 */
export async function readNotice(
  noticeId: string,
  caller: Caller,
  deps: {
    readonly store: NoticeReader;
    readonly keyRecords: KeyRecordReader;
    readonly archivedRows: ArchivedRowReader;
  },
): Promise<ReadChannel[] | undefined> {
  const [rows, keyRecords] = await Promise.all([
    deps.store.getNotice(noticeId),
    deps.keyRecords.keyRecordsOf(noticeId),
  ]);
  const inTable = new Set(rows.map((row) => row.channel));
  const archived = await Promise.all(
    keyRecords
      .filter((record) => !inTable.has(record.channel) && canSeeKeyRecord(caller, record))
      .map(async (record) => {
        const row = await deps.archivedRows.archivedRow(record.rowsObject, noticeId, record.channel);
        // The archiver writes the object before the key record that names it, and objects are
        // write-once: a key record without its row is a broken archive, not a notice to show
        // without that channel.
        if (!row) throw new ArchiveMissingRowError(record.rowsObject, record.channel);
        return row;
      }),
  );
  const channels: ReadChannel[] = [
    ...rows.filter((row) => canSee(caller, row)).map((row) => ({ row, source: 'ledger' as const })),
    ...archived.map((row) => ({ row, source: 'archive' as const })),
  ].sort((a, b) => a.row.channel.localeCompare(b.row.channel));
  return channels.length > 0 ? channels : undefined;
}

/** A key record names an archive object that does not hold its row. */
export class ArchiveMissingRowError extends Error {
  constructor(objectKey: string, channel: string) {
    super(`archive object ${objectKey} holds no ${channel} row of the notice its key record names`);
    this.name = 'ArchiveMissingRowError';
  }
}
