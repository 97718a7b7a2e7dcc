import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Svix signatures (the Standard Webhooks scheme) as Resend sends them: `svix-id`,
 * `svix-timestamp` (epoch seconds) and `svix-signature` (space-separated `v1,<base64>` entries).
 * The key is the base64 after `whsec_` of the endpoint's signing secret; the signed content is
 * `id.timestamp.body` over the raw body; HMAC-SHA256. test/providers/svix.test.ts checks this
 * against the Standard Webhooks test vectors.
 */

/** Timestamps further than this from our clock are refused (replays, skewed senders). */
export const TOLERANCE_SECONDS = 5 * 60;

export function signingKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new RangeError('the webhook signing secret is empty');
  return key;
}

/** `v1,<base64 HMAC>` for one message: what a sender puts in `svix-signature`. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

export type SvixCheck =
  | { readonly ok: true; readonly id: string }
  | { readonly ok: false; readonly status: 401 | 403; readonly detail: string };

/**
 * Checks one delivery. Missing headers → 401 (no credentials presented); a timestamp out of
 * tolerance, or no `v1` entry that matches → 403. Every presented `v1` entry is compared in
 * constant time; other versions are skipped.
 */
export function verify(
  secret: string,
  header: (name: string) => string | undefined,
  body: string,
  nowMs: number,
): SvixCheck {
  const id = header('svix-id') ?? header('webhook-id');
  const timestamp = header('svix-timestamp') ?? header('webhook-timestamp');
  const signatures = header('svix-signature') ?? header('webhook-signature');
  if (!id || !timestamp || !signatures) {
    return { ok: false, status: 401, detail: 'svix-id, svix-timestamp and svix-signature are required' };
  }
  if (!/^\d{1,12}$/.test(timestamp))
    return { ok: false, status: 403, detail: 'svix-timestamp is not epoch seconds' };
  const seconds = Number(timestamp);
  if (Math.abs(nowMs / 1000 - seconds) > TOLERANCE_SECONDS) {
    return { ok: false, status: 403, detail: 'svix-timestamp is more than 5 minutes off' };
  }
  const expected = Buffer.from(sign(secret, id, seconds, body).slice('v1,'.length), 'base64');
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const presented = Buffer.from(value, 'base64');
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) matched = true;
  }
  return matched ? { ok: true, id } : { ok: false, status: 403, detail: 'svix-signature does not verify' };
}
