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

/** The row as the archive's `rows/` objects keep it: without what never leaves the table. */
export function toArchivedIntent(row: Intent): ArchivedIntent {
  const {
    envelope: _envelope,
    fallbackEnvelope: _fallbackEnvelope,
    leaseOwner: _leaseOwner,
    leaseExpiresAt: _leaseExpiresAt,
    dueAt: _dueAt,
    ...archived
  } = row;
  return archived;
}

/** A resolved row's key record, pointing at the `rows/` object that holds the row. */
export function toKeyRecord(row: ArchivedIntent, rowsObject: string): KeyRecord {
  return {
    noticeId: row.noticeId,
    channel: row.channel,
    state: row.state,
    submitter: row.submitter,
    templateId: row.templateId,
    templateVersion: row.templateVersion,
    destination: row.destination,
    contentDigest: row.contentDigest,
    variableDigests: row.variableDigests,
    priority: row.priority,
    fallback: row.fallback,
    createdAt: row.createdAt,
    rowsObject,
  };
}
