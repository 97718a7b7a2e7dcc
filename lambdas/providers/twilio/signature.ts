import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's `X-Twilio-Signature`: HMAC-SHA1, keyed with the account's Auth Token, over the full
 * URL Twilio called (query string included) followed by every POST parameter, sorted by name,
 * as `name + value` with no separators; base64.
 *
 * Keys are sorted by UTF-16 code unit (`Array.prototype.sort`), as Twilio's own Node library
 * does, so that both sides agree on ordering for any parameter name.
 */
export function computeTwilioSignature(
  authToken: string,
  url: string,
  params: Readonly<Record<string, string>>,
): string {
  const hmac = createHmac('sha1', authToken);
  hmac.update(url, 'utf8');
  for (const key of Object.keys(params).sort()) {
    hmac.update(key, 'utf8');
    hmac.update(params[key] ?? '', 'utf8');
  }
  return hmac.digest('base64');
}

/** Base64 of a 20-byte SHA-1 digest is always 28 characters ending in one `=`. */
const SHA1_BASE64 = /^[A-Za-z0-9+/]{27}=$/;

/**
 * Checks a status callback's signature. Returns false, never throws, for a missing, repeated or
 * malformed header, so that a handler can answer 403 for all of them alike.
 *
 * Like Twilio's libraries, the URL is also tried with its default port added or removed: a
 * proxy or API Gateway may present `https://host/path` to us while Twilio signed
 * `https://host:443/path`, or the reverse. Nothing else about the URL is forgiven.
 */
export function verifyTwilioSignature(
  authToken: string,
  signatureHeader: string | readonly string[] | null | undefined,
  url: string,
  params: Readonly<Record<string, string>>,
): boolean {
  if (typeof signatureHeader !== 'string' || !SHA1_BASE64.test(signatureHeader)) return false;
  const presented = Buffer.from(signatureHeader, 'utf8');
  let valid = false;
  // Every candidate is compared (no early exit) so timing does not reveal which variant matched.
  for (const candidate of urlVariants(url)) {
    const expected = Buffer.from(computeTwilioSignature(authToken, candidate, params), 'utf8');
    if (expected.length === presented.length && timingSafeEqual(expected, presented)) valid = true;
  }
  return valid;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

function urlVariants(url: string): string[] {
  const variants = [url];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return variants;
  }
  const defaultPort = DEFAULT_PORTS[parsed.protocol];
  if (defaultPort === undefined) return variants;
  // WHATWG URL drops a default port on parse, so re-insert it by hand into the authority.
  const authority = `${parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : ''}${parsed.hostname}`;
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`;
  const withoutPort = `${parsed.protocol}//${authority}${rest}`;
  const withPort = `${parsed.protocol}//${authority}:${defaultPort}${rest}`;
  const explicitPort = parsed.port;
  if (explicitPort === '') {
    if (url !== withPort) variants.push(withPort);
    if (url !== withoutPort) variants.push(withoutPort);
  }
  return variants;
}
