import { createHmac } from 'node:crypto';
import type { Channel } from './channel.ts';
import { InvalidDestinationError } from './errors.ts';

/** E.164: a plus sign, a non-zero country digit, at most 15 digits in all. */
const E164 = /^\+[1-9]\d{1,14}$/;
/** Deliberately loose: the provider is the authority on deliverability; this only rejects garbage. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw new InvalidDestinationError('not an email address');
  return email;
}

/** Accepts common visual separators (spaces, dashes, dots, parentheses) around an E.164 number. */
export function normalizePhone(raw: string): string {
  const phone = raw.trim().replace(/[\s\-.()]/g, '');
  if (!E164.test(phone)) throw new InvalidDestinationError('not an E.164 phone number');
  return phone;
}

export function normalizeDestination(channel: Channel, raw: string): string {
  return channel === 'email' ? normalizeEmail(raw) : normalizePhone(raw);
}

/** `patient@example.com` → `p*****t@example.com`: enough for an operator to recognise, not to contact. */
export function maskEmail(normalized: string): string {
  const at = normalized.lastIndexOf('@');
  const local = normalized.slice(0, at);
  const domain = normalized.slice(at + 1);
  const maskedLocal =
    local.length <= 2
      ? `${local[0] ?? ''}${'*'.repeat(Math.max(1, local.length - 1))}`
      : `${local[0]}${'*'.repeat(local.length - 2)}${local[local.length - 1]}`;
  return `${maskedLocal}@${domain}`;
}

/** `+15551234567` → `+1******4567`: first digit and last four kept. */
export function maskPhone(normalized: string): string {
  const digits = normalized.slice(1);
  if (digits.length <= 5) return `+${digits[0]}${'*'.repeat(digits.length - 1)}`;
  return `+${digits[0]}${'*'.repeat(digits.length - 5)}${digits.slice(-4)}`;
}

export function maskDestination(channel: Channel, normalized: string): string {
  return channel === 'email' ? maskEmail(normalized) : maskPhone(normalized);
}

/**
 * Keyed HMAC-SHA-256 of the normalised destination, scoped by channel. Without the key the
 * fingerprint cannot be reversed by enumerating phone numbers; with it, the same address
 * always maps to the same suppression entry.
 */
export function fingerprintDestination(key: Uint8Array, channel: Channel, normalized: string): string {
  return `fp_${createHmac('sha256', key).update(`${channel}:${normalized}`, 'utf8').digest('base64url')}`;
}

export interface Destination {
  readonly fingerprint: string;
  readonly masked: string;
}

export interface ResolvedDestination extends Destination {
  readonly normalized: string;
}

export function resolveDestination(key: Uint8Array, channel: Channel, raw: string): ResolvedDestination {
  const normalized = normalizeDestination(channel, raw);
  return {
    normalized,
    fingerprint: fingerprintDestination(key, channel, normalized),
    masked: maskDestination(channel, normalized),
  };
}
