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

/** `ntc_` + 26 base32 characters (lower case, RFC 4648 alphabet). */
export const NOTICE_ID_PATTERN = /^ntc_[a-z2-7]{26}$/;

export function isNoticeId(value: string): boolean {
  return NOTICE_ID_PATTERN.test(value);
}

/** Sent to providers that accept one (Resend `Idempotency-Key`): identical for every attempt. */
export function idempotencyKey(noticeId: string, channel: Channel): string {
  return `${noticeId}.${channel}`;
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
  input: ContentRevision & { variables: Record<string, unknown>; destinationFingerprint: string },
): string {
  return createHmac('sha256', key)
    .update(
      canonicalJson({
        t: input.templateId,
        v: input.templateVersion,
        vars: input.variables,
        d: input.destinationFingerprint,
      }),
    )
    .digest('base64url');
}
