import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';

/**
 * A resolved row as the archive keeps it (lambdas/contract/archive.ts `rows/`): the intent
 * without what never leaves the table (the sealed envelopes, the lease, the index keys).
 */
export type ArchivedIntent = Omit<
  Intent,
  'envelope' | 'fallbackEnvelope' | 'leaseOwner' | 'leaseExpiresAt' | 'dueAt'
>;

/**
 * The compact key record of a (notice, channel) whose row resolved (`K#<noticeId>` /
 * `C#<channel>`), kept for the archive's retention: enough to answer a replay after the row left
 * the table (ids and content digests, the state it resolved to, who submitted it; no history),
 * and where its resolved row is in the archive.
 */
export interface KeyRecord
  extends Pick<
    Intent,
    | 'noticeId'
    | 'channel'
    | 'state'
    | 'submitter'
    | 'templateId'
    | 'templateVersion'
    | 'destination'
    | 'contentDigest'
    | 'variableDigests'
    | 'priority'
    | 'fallback'
    | 'createdAt'
  > {
  /** The archive object (`rows/…`) holding the row's latest resolved form. */
  readonly rowsObject: string;
}

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
