import type { ArchivedIntent, KeyRecord } from '../domain/archive-record.ts';
import type { Channel } from '../domain/channel.ts';

/*
 * The archive's ports (docs/archive.md). The archived row and the key record are domain shapes
 * (lambdas/domain/archive-record.ts decides what they hold); the read side is here, the write
 * side the archiver's own (./archive-writer.port.ts).
 */
export type { ArchivedIntent, KeyRecord };

/** Intake's and the timeline's view of notices whose rows left the table (one Query). */
export interface KeyRecordReader {
  keyRecordsOf(noticeId: string): Promise<readonly KeyRecord[]>;
}

/** The archive's read side: a resolved row by its key record. */
export interface ArchivedRowReader {
  /** The row of (noticeId, channel) in the named `rows/` object; undefined when it is not there. */
  archivedRow(objectKey: string, noticeId: string, channel: Channel): Promise<ArchivedIntent | undefined>;
}
