import { createHmac } from 'node:crypto';
import type { Channel } from './channel.ts';
import { InvalidDestinationError } from './errors.ts';

/**
 * Destinations the providers will take, and nothing else. Nothing is repaired: an address or
 * number that is not already in the accepted form is refused with a code that says why, so the
 * caller can tell a typo from a policy (docs/api.md "Input rules").
 *
 * Email, by RFC 5321/5322 as the e-mail providers apply them:
 *  - ASCII only (providers send 7-bit envelopes; an internationalised domain goes in as its
 *    `xn--` A-labels), at most 254 octets, one `@` splitting local part and domain;
 *  - local part: a dot-atom (RFC 5322 atext, single dots inside) of at most 64 octets; quoted
 *    local parts (`"x"@…`) are refused, though RFC-valid, because providers and mailbox software
 *    disagree about them;
 *  - domain: LDH labels of 1–63 octets (letters, digits, inner hyphens), at least two, at most
 *    253 octets, the last not all digits; address literals (`[127.0.0.1]`) are refused;
 *  - no control, format (bidi, zero-width) or line-separator characters anywhere.
 * Normalisation: the whole address is lower-cased (domains are case-insensitive; providers
 * treat local parts the same way). That is what fingerprints, masks and sends use, unchanged
 * for every address that was valid before these rules.
 *
 * Phone: E.164 written as `+`, a country code not starting with 0, and 8–15 digits in all
 * (E.164's maximum is 15; the minimum of 8 refuses the 7-digit fixed lines of a few small
 * territories along with truncated input). Digits only: spaces, dashes, dots and parentheses
 * are refused, not stripped.
 */
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LDH_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const PHONE_SEPARATORS = /[\s().-]/;

export const DestinationLimits = {
  emailMaxOctets: 254,
  localPartMaxOctets: 64,
  domainMaxOctets: 253,
  phoneMinDigits: 8,
  phoneMaxDigits: 15,
} as const;

/** Why a destination was refused; each is its own `errors[].code`. */
export const DestinationRefusal = {
  emailControlCharacters: 'email_control_characters',
  emailTooLong: 'email_too_long',
  emailMissingAt: 'email_missing_at',
  emailQuotedLocalPart: 'email_quoted_local_part',
  emailAddressLiteral: 'email_address_literal',
  emailNotAscii: 'email_not_ascii',
  emailLocalPartTooLong: 'email_local_part_too_long',
  emailInvalidLocalPart: 'email_invalid_local_part',
  emailInvalidDomain: 'email_invalid_domain',
  phoneControlCharacters: 'phone_control_characters',
  phoneSeparators: 'phone_separators',
  phoneMissingPlus: 'phone_missing_plus',
  phoneInvalidCharacters: 'phone_invalid_characters',
  phoneTooShort: 'phone_too_short',
  phoneTooLong: 'phone_too_long',
  phoneInvalidCountryCode: 'phone_invalid_country_code',
} as const;

export type DestinationRefusal = (typeof DestinationRefusal)[keyof typeof DestinationRefusal];

export type DestinationCheck =
  | { readonly ok: true; readonly normalized: string }
  /** `message` states the rule; it never quotes the input. */
  | { readonly ok: false; readonly code: DestinationRefusal; readonly message: string };

const refuse = (code: DestinationRefusal, message: string): DestinationCheck => ({
  ok: false,
  code,
  message,
});
const octets = (value: string) => Buffer.byteLength(value, 'utf8');

export function checkEmail(raw: string): DestinationCheck {
  const R = DestinationRefusal;
  if (FORBIDDEN.test(raw)) {
    return refuse(
      R.emailControlCharacters,
      'must not contain control, format (bidi, zero-width) or line-separator characters',
    );
  }
  if (octets(raw) > DestinationLimits.emailMaxOctets) {
    return refuse(R.emailTooLong, `must be at most ${DestinationLimits.emailMaxOctets} octets`);
  }
  const at = raw.lastIndexOf('@');
  if (at === -1) return refuse(R.emailMissingAt, 'must be an email address: local part, @, domain');
  const local = raw.slice(0, at);
  const domain = raw.slice(at + 1);
  if (local.startsWith('"')) return refuse(R.emailQuotedLocalPart, 'must not have a quoted local part');
  if (domain.startsWith('['))
    return refuse(R.emailAddressLiteral, 'must have a domain name, not an address literal');
  if (/[^\p{ASCII}]/u.test(raw)) {
    return refuse(R.emailNotAscii, 'must be ASCII (an internationalised domain as its xn-- form)');
  }
  if (local.length > DestinationLimits.localPartMaxOctets) {
    return refuse(
      R.emailLocalPartTooLong,
      `must have a local part of at most ${DestinationLimits.localPartMaxOctets} octets`,
    );
  }
  if (!DOT_ATOM.test(local)) {
    return refuse(
      R.emailInvalidLocalPart,
      "must have a local part of letters, digits and !#$%&'*+/=?^_`{|}~- with single dots inside",
    );
  }
  const labels = domain.split('.');
  const validDomain =
    domain.length <= DestinationLimits.domainMaxOctets &&
    labels.length >= 2 &&
    labels.every((label) => LDH_LABEL.test(label)) &&
    !/^\d+$/.test(labels[labels.length - 1] as string);
  if (!validDomain) {
    return refuse(
      R.emailInvalidDomain,
      'must have a domain of at least two dot-separated labels of letters, digits and inner hyphens',
    );
  }
  return { ok: true, normalized: raw.toLowerCase() };
}

export function checkPhone(raw: string): DestinationCheck {
  const R = DestinationRefusal;
  if (FORBIDDEN.test(raw)) {
    return refuse(R.phoneControlCharacters, 'must not contain control, format or line-separator characters');
  }
  if (PHONE_SEPARATORS.test(raw)) {
    return refuse(
      R.phoneSeparators,
      'must be + and digits only, without spaces, dashes, dots or parentheses',
    );
  }
  if (!raw.startsWith('+'))
    return refuse(R.phoneMissingPlus, 'must start with + and the country code (E.164)');
  const digits = raw.slice(1);
  if (!/^[0-9]*$/.test(digits))
    return refuse(R.phoneInvalidCharacters, 'must be + followed by digits 0-9 only');
  if (digits.length < DestinationLimits.phoneMinDigits) {
    return refuse(R.phoneTooShort, `must have at least ${DestinationLimits.phoneMinDigits} digits`);
  }
  if (digits.length > DestinationLimits.phoneMaxDigits) {
    return refuse(R.phoneTooLong, `must have at most ${DestinationLimits.phoneMaxDigits} digits (E.164)`);
  }
  if (digits.startsWith('0'))
    return refuse(R.phoneInvalidCountryCode, 'must start with a country code (not 0)');
  return { ok: true, normalized: raw };
}

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const L = DestinationLimits;

/**
 * What `checkEmail` accepts, as one regular expression, for documents that cannot run it (the
 * OpenAPI document): ASCII only because every character class is; one `@`; the lengths as
 * lookaheads. test/domain/destination.test.ts checks both agree on generated addresses.
 */
export const EMAIL_PATTERN = `^(?=.{1,${L.emailMaxOctets}}$)(?=[^@]{1,${L.localPartMaxOctets}}@)${ATEXT}+(?:\\.${ATEXT}+)*@(?=.{1,${L.domainMaxOctets}}$)(?:${LABEL}\\.)+(?![0-9]+$)${LABEL}$`;

/** What `checkPhone` accepts (E.164), as one regular expression; see `EMAIL_PATTERN`. */
export const PHONE_PATTERN = `^\\+[1-9][0-9]{${L.phoneMinDigits - 1},${L.phoneMaxDigits - 1}}$`;

export function checkDestination(channel: Channel, raw: string): DestinationCheck {
  return channel === 'email' ? checkEmail(raw) : checkPhone(raw);
}

function normalized(check: DestinationCheck): string {
  if (!check.ok) throw new InvalidDestinationError(check.code, check.message);
  return check.normalized;
}

/** The accepted address, lower-cased; throws `InvalidDestinationError` otherwise. */
export function normalizeEmail(raw: string): string {
  return normalized(checkEmail(raw));
}

/** The accepted E.164 number, as given; throws `InvalidDestinationError` otherwise. */
export function normalizePhone(raw: string): string {
  return normalized(checkPhone(raw));
}

export function normalizeDestination(channel: Channel, raw: string): string {
  return normalized(checkDestination(channel, raw));
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
