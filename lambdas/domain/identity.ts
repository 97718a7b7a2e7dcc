import { createHash, createHmac } from 'node:crypto';
import type { Channel } from './channel.ts';

const NOTICE_ID_PREFIX = 'ntc_';
/** 26 base32 characters = 130 bits of the digest: collision-free for any realistic volume. */
const NOTICE_ID_DIGEST_CHARS = 26;
const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/**
 * Deterministic notice id: `ntc_` + base32(SHA-256(eventType LF eventId LF recipientId)),
 * cut to 26 characters. Intake rejects control characters in all three fields, so the
 * line-feed separator cannot be forged and a business system can compute the id itself.
 */
export function deriveNoticeId(eventType: string, eventId: string, recipientId: string): string {
  const digest = createHash('sha256').update(`${eventType}\n${eventId}\n${recipientId}`, 'utf8').digest();
  return NOTICE_ID_PREFIX + base32(digest).slice(0, NOTICE_ID_DIGEST_CHARS);
}

/** `local@domain.tld` anywhere in the text: something before the @, a domain with an alphabetic TLD. */
const EMBEDDED_EMAIL = /[^\s@]@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
/** `+` and at least 8 digits, however they are grouped (`+1 (555) 123-4567`, `tel:+15551234567`). */
const EMBEDDED_PHONE = /\+[\s(]*\d(?:[\s().-]{0,2}\d){7,}/;

/**
 * Whether an identifier carries contact data: an @-address or an E.164-like number. Identifiers
 * (`eventId`, `recipient.id`) are stored raw, derive the noticeId and are shown by the timeline
 * and logs, so an address there would be the one way a raw destination enters the ledger; intake
 * refuses them (422 `contact_data_in_identifier`). Digits without a `+` (record numbers) pass.
 */
export function containsContactData(value: string): boolean {
  return EMBEDDED_EMAIL.test(value) || EMBEDDED_PHONE.test(value);
}

/** `ntc_` + 26 base32 characters (lower case, RFC 4648 alphabet). */
export const NOTICE_ID_PATTERN = /^ntc_[a-z2-7]{26}$/;

export function isNoticeId(value: string): boolean {
  return NOTICE_ID_PATTERN.test(value);
}

/** The correlation id providers carry back to us (a message tag, a callback query): `<noticeId>-<channel>`. */
export function correlationId(ref: { readonly noticeId: string; readonly channel: Channel }): string {
  return `${ref.noticeId}-${ref.channel}`;
}

export function parseCorrelationId(value: string): { noticeId: string; channel: Channel } | undefined {
  const match = /^(ntc_[a-z2-7]{26})-(email|sms)$/.exec(value);
  return match ? { noticeId: match[1] as string, channel: match[2] as Channel } : undefined;
}

/** Sent to providers that accept one (an `Idempotency-Key` header): identical for every attempt. */
export function idempotencyKey(noticeId: string, channel: Channel): string {
  return `${noticeId}.${channel}`;
}

/** The key of one provider batch call: its own, the same on every replay of that call. */
export function batchIdempotencyKey(batchId: string): string {
  return `batch.${batchId}`;
}

/** JSON with object keys sorted at every depth, so equal content always hashes equal. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export interface ContentRevision {
  readonly templateId: string;
  readonly templateVersion: string;
}

/**
 * What makes two requests for the same (noticeId, channel) "the same intent": template,
 * version, variables and destination. Keyed (HMAC) because the inputs are personal data and
 * short values such as a first name would fall to a dictionary attack on a plain hash.
 */
export function contentDigest(
  key: Uint8Array,
  input: ContentRevision & {
    variables: Record<string, unknown>;
    destinationFingerprint: string;
    /** Part of the revision when not `standard`: rows from before priorities keep their digest. */
    priority?: string | undefined;
    /** A channel fallback the row carries (./fallback.ts `fallbackDigestPart`); absent: none. */
    fallback?: string | undefined;
  },
): string {
  return createHmac('sha256', key)
    .update(
      canonicalJson({
        t: input.templateId,
        v: input.templateVersion,
        vars: input.variables,
        d: input.destinationFingerprint,
        ...(input.priority !== undefined && input.priority !== 'standard' ? { p: input.priority } : {}),
        ...(input.fallback !== undefined ? { f: input.fallback } : {}),
      }),
    )
    .digest('base64url');
}

/**
 * A key check value: what a ledger table records of the keys it was first used with, so that a
 * process holding other keys refuses to start instead of splitting fingerprints or failing every
 * envelope. An HMAC of a fixed text, cut to 96 bits: it identifies the key, it does not reveal it.
 */
export function keyCheckValue(key: Uint8Array): string {
  return createHmac('sha256', key)
    .update('notice-ledger key check v1', 'utf8')
    .digest('base64url')
    .slice(0, 16);
}

/** Characters kept of each variable's digest: 48 bits, enough to say which one differs. */
const VARIABLE_DIGEST_CHARS = 8;

/**
 * One short keyed digest per variable, so that a 409 can name the variables that differ from
 * the recorded intent without storing (or returning) their values. Only an explanation: whether
 * two requests are the same intent is still decided by the full `contentDigest`. Domain-separated
 * from it by the `var` prefix and the variable's name.
 */
export function variableDigests(
  key: Uint8Array,
  variables: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (value === undefined) continue;
    digests[name] = createHmac('sha256', key)
      .update(`var\n${name}\n${canonicalJson(value)}`)
      .digest('base64url')
      .slice(0, VARIABLE_DIGEST_CHARS);
  }
  return digests;
}
