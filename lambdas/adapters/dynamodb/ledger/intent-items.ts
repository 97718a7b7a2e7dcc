import type { Channel } from '../../../domain/channel.ts';
import {
  type FallbackSpec,
  type Intent,
  inOpenIndex,
  type MutableIntentField,
  type TransitionRecord,
} from '../../../domain/intent.ts';
import type { Priority } from '../../../domain/priority.ts';
import type { IntentState } from '../../../domain/state-machine.ts';
import type { Item } from './table-client.ts';

/*
 * The intent row's item (docs/table-design.md): keys `N#<noticeId>` / `C#<channel>`, the fixed
 * fields, the mutable ones, the open-index keys that follow `dueAt`, and the history in short
 * keys. Every write pays per started KB, hence the short names.
 */

export const intentPk = (noticeId: string) => `N#${noticeId}`;
export const channelSk = (channel: Channel) => `C#${channel}`;

/** Stored form of a transition record: short keys, since every write pays per started KB. */
interface StoredRecord {
  n: number;
  at: number;
  fr?: string;
  to: string;
  r: string;
  a?: number;
  d?: string;
  /** actor: only on records written by a person or a business caller. */
  by?: string;
}

/** Intent fields stored under a shorter attribute name (every write pays per started KB). */
const STORED_NAMES: Partial<Record<MutableIntentField, string>> = {
  escalatedAt: 'escAt',
  acceptedAt: 'accAt',
  fallbackDueAt: 'fbAt',
  fallbackEnvelope: 'fbEnv',
};

/** Stored form of a channel fallback's spec (short keys: every write pays per started KB). */
export interface StoredFallback {
  to: string;
  w: number;
  fp: string;
  m: string;
  cd: string;
  se?: string;
  sg?: number;
  sc?: number;
  tz?: string;
}

export function toStoredFallback(spec: FallbackSpec): StoredFallback {
  return {
    to: spec.to,
    w: spec.withinMs,
    fp: spec.destination.fingerprint,
    m: spec.destination.masked,
    cd: spec.contentDigest,
    ...(spec.sms ? { se: spec.sms.encoding, sg: spec.sms.segments, sc: spec.sms.characters } : {}),
    ...(spec.timeZone !== undefined ? { tz: spec.timeZone } : {}),
  };
}

export function fromStoredFallback(stored: StoredFallback): FallbackSpec {
  return {
    to: stored.to as Channel,
    withinMs: stored.w,
    destination: { fingerprint: stored.fp, masked: stored.m },
    contentDigest: stored.cd,
    ...(stored.se !== undefined
      ? {
          sms: {
            encoding: stored.se as 'GSM-7' | 'UCS-2',
            segments: stored.sg as number,
            characters: stored.sc as number,
          },
        }
      : {}),
    ...(stored.tz !== undefined ? { timeZone: stored.tz } : {}),
  };
}
export const storedName = (field: MutableIntentField): string => STORED_NAMES[field] ?? field;

export function toStoredRecord(record: TransitionRecord): StoredRecord {
  return {
    n: record.seq,
    at: record.at,
    ...(record.from !== null ? { fr: record.from } : {}),
    to: record.to,
    r: record.reason,
    ...(record.attempt !== undefined ? { a: record.attempt } : {}),
    ...(record.detail !== undefined ? { d: record.detail } : {}),
    ...(record.actor !== undefined ? { by: record.actor } : {}),
  };
}

function fromStoredRecord(stored: StoredRecord): TransitionRecord {
  return {
    seq: stored.n,
    at: stored.at,
    from: (stored.fr ?? null) as IntentState | null,
    to: stored.to as IntentState,
    reason: stored.r as TransitionRecord['reason'],
    ...(stored.a !== undefined ? { attempt: stored.a } : {}),
    ...(stored.d !== undefined ? { detail: stored.d } : {}),
    ...(stored.by !== undefined ? { actor: stored.by } : {}),
  };
}

/**
 * The submitter as stored (`sub`): its normal form without `arn:aws:iam::`, the prefix of every
 * principal in the commercial partition (`123456789012:role/billing`, 31 bytes for 44). Any other
 * form (another partition, a federated user) is stored whole; an `arn:` start tells them apart.
 */
const COMMERCIAL_IAM = 'arn:aws:iam::';
export const storedSubmitter = (principal: string): string =>
  principal.startsWith(COMMERCIAL_IAM) ? principal.slice(COMMERCIAL_IAM.length) : principal;
export const submitterOf = (stored: string): string =>
  stored.startsWith('arn:') ? stored : `${COMMERCIAL_IAM}${stored}`;

/** The row's item; `shardOf` places it in the open index while it has a `dueAt`. */
export function itemFromIntent(intent: Intent, shardOf: (noticeId: string) => string): Item {
  return {
    pk: intentPk(intent.noticeId),
    sk: channelSk(intent.channel),
    eventId: intent.eventId,
    eventType: intent.eventType,
    recipientId: intent.recipientId,
    templateId: intent.templateId,
    templateVersion: intent.templateVersion,
    contentDigest: intent.contentDigest,
    // Short name: every write pays per started KB.
    varDigests: intent.variableDigests,
    destFingerprint: intent.destination.fingerprint,
    destMasked: intent.destination.masked,
    createdAt: intent.createdAt,
    deadline: intent.deadline,
    smsEncoding: intent.sms?.encoding,
    smsSegments: intent.sms?.segments,
    smsCharacters: intent.sms?.characters,
    priority: intent.priority,
    // Short name: every write pays per started KB.
    sub: intent.submitter !== undefined ? storedSubmitter(intent.submitter) : undefined,
    state: intent.state,
    version: intent.version,
    attempts: intent.attempts,
    provider: intent.provider,
    providerReceiptId: intent.providerReceiptId,
    nextAttemptAt: intent.nextAttemptAt,
    leaseOwner: intent.leaseOwner,
    leaseExpiresAt: intent.leaseExpiresAt,
    batch: intent.batch,
    dueAt: intent.dueAt,
    // A watched row has its due time but no index partition: it is in no index until it needs one.
    openShard: inOpenIndex(intent) ? shardOf(intent.noticeId) : undefined,
    envelope: intent.envelope,
    escalationPending: intent.escalationPending ? true : undefined,
    // Short name: projected into the open index.
    escAt: intent.escalatedAt,
    accAt: intent.acceptedAt,
    // Short names: every write pays per started KB.
    nb: intent.notBefore,
    fb: intent.fallback !== undefined ? toStoredFallback(intent.fallback) : undefined,
    fbAt: intent.fallbackDueAt,
    fbEnv: intent.fallbackEnvelope,
    transitions: intent.transitions.map(toStoredRecord),
  };
}

export function intentFromItem(item: Item): Intent {
  const sms =
    item.smsEncoding !== undefined
      ? {
          encoding: item.smsEncoding as 'GSM-7' | 'UCS-2',
          segments: item.smsSegments as number,
          characters: item.smsCharacters as number,
        }
      : undefined;
  return {
    noticeId: (item.pk as string).slice(2),
    channel: (item.sk as string).slice(2) as Channel,
    eventId: item.eventId as string,
    eventType: item.eventType as string,
    recipientId: item.recipientId as string,
    templateId: item.templateId as string,
    templateVersion: item.templateVersion as string,
    contentDigest: item.contentDigest as string,
    variableDigests: item.varDigests as Record<string, string> | undefined,
    destination: { fingerprint: item.destFingerprint as string, masked: item.destMasked as string },
    createdAt: item.createdAt as number,
    deadline: item.deadline as number,
    sms,
    ...(item.priority !== undefined ? { priority: item.priority as Priority } : {}),
    ...(typeof item.sub === 'string' ? { submitter: submitterOf(item.sub) } : {}),
    state: item.state as IntentState,
    version: item.version as number,
    attempts: item.attempts as number,
    provider: item.provider as string | undefined,
    providerReceiptId: item.providerReceiptId as string | undefined,
    nextAttemptAt: item.nextAttemptAt as number | undefined,
    leaseOwner: item.leaseOwner as string | undefined,
    leaseExpiresAt: item.leaseExpiresAt as number | undefined,
    batch: item.batch as string | undefined,
    dueAt: item.dueAt as number | undefined,
    ...(item.dueAt !== undefined && item.openShard === undefined ? { watched: true as const } : {}),
    envelope: item.envelope as string | undefined,
    escalationPending: item.escalationPending === true ? true : undefined,
    escalatedAt: item.escAt as number | undefined,
    acceptedAt: item.accAt as number | undefined,
    ...(item.nb !== undefined ? { notBefore: item.nb as number } : {}),
    ...(item.fb !== undefined ? { fallback: fromStoredFallback(item.fb as StoredFallback) } : {}),
    ...(item.fbAt !== undefined ? { fallbackDueAt: item.fbAt as number } : {}),
    ...(item.fbEnv !== undefined ? { fallbackEnvelope: item.fbEnv as string } : {}),
    transitions: ((item.transitions as StoredRecord[] | undefined) ?? []).map(fromStoredRecord),
  };
}
