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
