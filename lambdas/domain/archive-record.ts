import { type ArchiveFactColumn, ArchiveFactKind } from '../contract/archive.ts';
import { principalDigest } from './caller.ts';
import type { Channel } from './channel.ts';
import { canonicalJson } from './identity.ts';
import type { Intent, TransitionRecord } from './intent.ts';
import { isTerminal } from './state-machine.ts';
import type { SuppressionRecord } from './suppression.ts';

/*
 * What the archive keeps of a ledger change (docs/archive.md): the facts it adds (one line each,
 * each fact once), the row it leaves resolved, and that row's key record. Pure: the archiver's
 * adapters parse the stream and write the objects; this decides what goes in them. Every line and
 * row is built field by field from named fields, never by spreading an item, so nothing sealed
 * (the envelopes), raw (a destination, a variable) or table-internal (a lease, an index key) can
 * reach the archive because someone added it to the row.
 */

/**
 * A resolved row as the archive keeps it (`rows/`): the intent without what never leaves the
 * table (the sealed envelopes, the lease, the index keys).
 */
export type ArchivedIntent = Omit<
  Intent,
  'envelope' | 'fallbackEnvelope' | 'leaseOwner' | 'leaseExpiresAt' | 'dueAt'
>;

/**
 * The compact key record of a (notice, channel) whose row resolved (the key table,
 * lambdas/contract/key-table.ts), kept for the archive's retention: enough to answer a replay
 * after the row left the table (whether the content is the same, the state it resolved to, whose
 * it is; no history), and where its resolved row is in the archive. What differs, when the
 * content does, is read from that row (lambdas/use-cases/submit-notice.ts).
 */
export interface KeyRecord extends Pick<Intent, 'noticeId' | 'channel' | 'state'> {
  /** The row's content digest cut to {@link KEY_DIGEST_CHARS}: compared with a request's cut alike ({@link isSameKeyedContent}). */
  readonly contentDigest: string;
  /** The submitter's principal digest (./caller.ts `principalDigest`); absent: a row without a submitter. */
  readonly submitterDigest?: string | undefined;
  /** The archive object (`rows/…`) holding the row's latest resolved form. */
  readonly rowsObject: string;
}

/**
 * Characters of the content digest (base64url of HMAC-SHA-256, 43) a key record keeps: 22, 132
 * bits. Two requests are the same intent when their digests agree; cut to 132 bits, a different
 * content passing for the same (a replay answered 200 instead of 409) takes a 2^-132 chance,
 * and nobody can aim for one without the HMAC key.
 */
export const KEY_DIGEST_CHARS = 22;

/** A content digest as a key record keeps it. */
export function keyDigestOf(contentDigest: string): string {
  return contentDigest.slice(0, KEY_DIGEST_CHARS);
}

/** Whether a request's content is the key record's row's (both digests cut alike). */
export function isSameKeyedContent(
  record: Pick<KeyRecord, 'contentDigest'>,
  requested: Pick<Intent, 'contentDigest'>,
): boolean {
  return record.contentDigest === keyDigestOf(requested.contentDigest);
}

/** One change of the ledger table the archive keeps something of, in stream order. */
export type ArchiveChange = IntentChange | SuppressionChange;

interface ChangeBase {
  /** The change stream record's sequence number (digits; unique within the stream). */
  readonly sequence: string;
  /** When the change was made (the stream record's creation time), epoch ms. */
  readonly createdAt: number;
}

/** An intent row inserted, modified or removed (TTL is the only deleter of intent rows). */
export interface IntentChange extends ChangeBase {
  readonly family: 'intent';
  readonly oldImage?: Intent | undefined;
  readonly newImage?: Intent | undefined;
}

/** A suppression history record appended (`S#<channel>#<fingerprint>` / `H#…`). */
export interface SuppressionChange extends ChangeBase {
  readonly family: 'suppression';
  readonly channel: Channel;
  readonly fingerprint: string;
  /** Absent on history records written before they carried it. */
  readonly masked?: string | undefined;
  readonly record: SuppressionRecord;
}

/** A position in the change stream. */
export interface StreamPosition {
  /** The record's sequence number: digits, ordered as integers within a shard. */
  readonly sequence: string;
  /** The record's creation time, epoch ms. */
  readonly createdAt: number;
}

/** One batch of the change stream, as the event source hands it (one shard, stream order). */
export interface ArchiveBatch {
  /** Names the stream in object keys (lambdas/contract/archive.ts `streamLabelOf`). */
  readonly streamLabel: string;
  /** The batch's first and last records, archived or not: the range it covers. */
  readonly first: StreamPosition;
  readonly last: StreamPosition;
  /** The changes the archive keeps something of (intent rows, suppression history), in stream order. */
  readonly changes: readonly ArchiveChange[];
}

/** One `facts/` line: the columns of lambdas/contract/archive.ts, absent where it has no value. */
export type FactLine = { readonly [Column in ArchiveFactColumn]?: string | number };

/** A row a change left settled, and since when (the key record's retention starts there). */
export interface ResolvedRow {
  readonly row: ArchivedIntent;
  /** Epoch ms: the row's first move into a terminal state, else its latest record (its removal, for a row removed unsettled). */
  readonly resolvedAt: number;
}

/** What the archive keeps of one change. */
export interface ArchiveParts {
  readonly facts: readonly FactLine[];
  /** The row to (re)write under `rows/`, and a key record for: absent when the change left none. */
  readonly resolved?: ResolvedRow | undefined;
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

/** The row's columns, repeated on each of its lines so that a query needs no join. */
function rowColumns(intent: Intent, sequence: string): FactLine {
  return {
    notice_id: intent.noticeId,
    channel: intent.channel,
    event_type: intent.eventType,
    event_id: intent.eventId,
    recipient_id: intent.recipientId,
    template_id: intent.templateId,
    template_version: intent.templateVersion,
    dest_fingerprint: intent.destination.fingerprint,
    dest_masked: intent.destination.masked,
    submitter: intent.submitter,
    provider: intent.provider,
    provider_receipt_id: intent.providerReceiptId,
    created_at: iso(intent.createdAt),
    deadline: iso(intent.deadline),
    stream_sequence: sequence,
  };
}

function transitionLine(intent: Intent, record: TransitionRecord, sequence: string): FactLine {
  return withoutAbsent({
    kind: ArchiveFactKind.transition,
    ...rowColumns(intent, sequence),
    seq: record.seq,
    at: iso(record.at),
    from_state: record.from ?? undefined,
    to_state: record.to,
    reason: record.reason,
    attempt: record.attempt,
    detail: record.detail,
    actor: record.actor,
  });
}

/** The row left the hot table (TTL, after HOT_RETENTION): its last state, at the removal. */
function expiredLine(intent: Intent, change: IntentChange): FactLine {
  return withoutAbsent({
    kind: ArchiveFactKind.expired,
    ...rowColumns(intent, change.sequence),
    seq: intent.version,
    at: iso(change.createdAt),
    to_state: intent.state,
  });
}

function suppressionLine(change: SuppressionChange): FactLine {
  const { record } = change;
  return withoutAbsent({
    kind: ArchiveFactKind.suppression,
    channel: change.channel,
    dest_fingerprint: change.fingerprint,
    dest_masked: change.masked,
    at: iso(record.at),
    action: record.action,
    reason: record.reason,
    source: record.source,
    actor: record.actor,
    detail: record.code,
    stream_sequence: change.sequence,
  });
}

/** A line holds only the columns it has a value for (JSON has no `undefined`; Athena reads NULL). */
function withoutAbsent(
  line: { readonly [Column in ArchiveFactColumn]?: string | number | undefined },
): FactLine {
  return Object.fromEntries(Object.entries(line).filter(([, value]) => value !== undefined)) as FactLine;
}

/**
 * The transition records a change appended: an insert's every record, a modification's those
 * above the old image's version (every write appends with seq = version + 1, so these are
 * exactly the new ones, however many one write appended).
 */
function appendedRecords(change: IntentChange): readonly TransitionRecord[] {
  const after = change.newImage;
  if (!after) return [];
  const seen = change.oldImage?.version ?? 0;
  return after.transitions.filter((record) => record.seq > seen);
}

/** The row as the archive keeps it, field by field: nothing sealed, no lease, no index key. */
export function archivedIntentOf(intent: Intent): ArchivedIntent {
  const row: { -readonly [Field in keyof ArchivedIntent]: ArchivedIntent[Field] } = {
    noticeId: intent.noticeId,
    channel: intent.channel,
    eventId: intent.eventId,
    eventType: intent.eventType,
    recipientId: intent.recipientId,
    templateId: intent.templateId,
    templateVersion: intent.templateVersion,
    contentDigest: intent.contentDigest,
    variableDigests: intent.variableDigests,
    destination: { fingerprint: intent.destination.fingerprint, masked: intent.destination.masked },
    createdAt: intent.createdAt,
    deadline: intent.deadline,
    sms: intent.sms,
    priority: intent.priority,
    submitter: intent.submitter,
    state: intent.state,
    version: intent.version,
    attempts: intent.attempts,
    provider: intent.provider,
    providerReceiptId: intent.providerReceiptId,
    nextAttemptAt: intent.nextAttemptAt,
    batch: intent.batch,
    escalationPending: intent.escalationPending,
    escalatedAt: intent.escalatedAt,
    acceptedAt: intent.acceptedAt,
    notBefore: intent.notBefore,
    fallback: intent.fallback && {
      to: intent.fallback.to,
      withinMs: intent.fallback.withinMs,
      destination: {
        fingerprint: intent.fallback.destination.fingerprint,
        masked: intent.fallback.destination.masked,
      },
      contentDigest: intent.fallback.contentDigest,
      sms: intent.fallback.sms,
      timeZone: intent.fallback.timeZone,
    },
    fallbackDueAt: intent.fallbackDueAt,
    transitions: intent.transitions.map((record) => ({
      seq: record.seq,
      at: record.at,
      from: record.from,
      to: record.to,
      reason: record.reason,
      attempt: record.attempt,
      detail: record.detail,
      actor: record.actor,
    })),
  };
  // Absent fields dropped as the JSON line drops them, so a row compares equal to its read-back.
  return JSON.parse(JSON.stringify(row)) as ArchivedIntent;
}

/**
 * Whether the system owes the row nothing more: a terminal state, or a row out of the open index
 * (an `accepted` row whose delivery follow-up ended, `delivery_unconfirmed`). Its archived form
 * and key record are written from then on, so a row can never leave the table before both exist.
 */
function isSettled(intent: Intent): boolean {
  return isTerminal(intent.state) || intent.dueAt === undefined;
}

/** When the row settled: its first move into a terminal state, else its latest record. */
function settledAtOf(intent: Intent): number {
  const terminal = intent.transitions.find((record) => record.from !== record.to && isTerminal(record.to));
  return terminal?.at ?? intent.transitions[intent.transitions.length - 1]?.at ?? intent.createdAt;
}

/**
 * The row a change leaves settled, to (re)write under `rows/` with its key record: a row that
 * settled with this change, or a settled row whose archived form it altered (a late fact, the
 * escalation marker cleared); or a row removed while not settled (TTL never removes one; if
 * anything did, its last form is kept all the same). A change that alters nothing the archive
 * keeps (the TTL attribute, say) writes nothing.
 */
function resolvedRowOf(change: IntentChange): ResolvedRow | undefined {
  const { oldImage, newImage } = change;
  if (!newImage) {
    if (!oldImage || isSettled(oldImage)) return undefined;
    return { row: archivedIntentOf(oldImage), resolvedAt: change.createdAt };
  }
  if (!isSettled(newImage)) return undefined;
  const row = archivedIntentOf(newImage);
  if (oldImage && isSettled(oldImage) && canonicalJson(archivedIntentOf(oldImage)) === canonicalJson(row)) {
    return undefined;
  }
  return { row, resolvedAt: settledAtOf(newImage) };
}

/** What the archive keeps of one change: its fact lines and the row it leaves resolved. */
export function archivePartsOf(change: ArchiveChange): ArchiveParts {
  if (change.family === 'suppression') return { facts: [suppressionLine(change)] };
  const { oldImage, newImage } = change;
  if (!newImage) {
    return {
      facts: oldImage ? [expiredLine(oldImage, change)] : [],
      resolved: resolvedRowOf(change),
    };
  }
  return {
    facts: appendedRecords(change).map((record) => transitionLine(newImage, record, change.sequence)),
    resolved: resolvedRowOf(change),
  };
}

/** The key record of a resolved row, field by field, pointing at the `rows/` object that holds it. */
export function keyRecordOf(row: ArchivedIntent, rowsObject: string): KeyRecord {
  return {
    noticeId: row.noticeId,
    channel: row.channel,
    state: row.state,
    contentDigest: keyDigestOf(row.contentDigest),
    ...(row.submitter !== undefined ? { submitterDigest: principalDigest(row.submitter) } : {}),
    rowsObject,
  };
}

/**
 * When a key record expires (epoch ms): its row's resolution plus the archive's retention in
 * calendar years (UTC), the same span Object Lock keeps the row's objects.
 */
export function keyRecordExpiry(resolvedAt: number, retentionYears: number): number {
  const end = new Date(resolvedAt);
  end.setUTCFullYear(end.getUTCFullYear() + retentionYears);
  return end.getTime();
}
