import { createPublicKey, type KeyObject, verify } from 'node:crypto';

/**
 * The Signed Event Webhook: `X-Twilio-Email-Event-Webhook-Signature` is a base64 DER ECDSA
 * signature (P-256, SHA-256) over the `X-Twilio-Email-Event-Webhook-Timestamp` header value
 * immediately followed by the raw body bytes, verifiable with the account's public key (base64
 * DER, SubjectPublicKeyInfo). Plain node:crypto; test/providers/sendgrid-signature.test.ts
 * checks it against SendGrid's published test vector.
 */
export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** The configured key as a key object; a value that is no P-256 public key is a configuration error. */
export function publicKeyOf(base64Der: string): KeyObject {
  const key = createPublicKey({ key: Buffer.from(base64Der.trim(), 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new RangeError('SENDGRID_WEBHOOK_PUBLIC_KEY is not an ECDSA P-256 public key');
  }
  return key;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Deliveries signed further than this from our clock, either way, are refused: a genuine
 * delivery replayed later, or a sender's clock far off. Ten minutes, as Standard Webhooks
 * receivers allow; SendGrid signs each attempt (its retries too) when it makes it.
 */
export const FRESHNESS_SECONDS = 10 * 60;

export type DeliveryCheck = { readonly ok: true } | { readonly ok: false; readonly detail: string };

/**
 * One delivery: both headers present, a timestamp of epoch seconds within
 * {@link FRESHNESS_SECONDS} of `nowMs`, and a signature that verifies over it and the raw body.
 * The detail names what failed, never a value.
 */
export function checkDelivery(
  key: KeyObject,
  signatureBase64: string | undefined,
  timestamp: string | undefined,
  rawBody: string,
  nowMs: number,
): DeliveryCheck {
  if (!signatureBase64 || !timestamp) {
    return {
      ok: false,
      detail:
        'X-Twilio-Email-Event-Webhook-Signature and X-Twilio-Email-Event-Webhook-Timestamp are required',
    };
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, detail: 'X-Twilio-Email-Event-Webhook-Timestamp is not epoch seconds' };
  }
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > FRESHNESS_SECONDS) {
    return {
      ok: false,
      detail: `X-Twilio-Email-Event-Webhook-Timestamp is more than ${FRESHNESS_SECONDS / 60} minutes off`,
    };
  }
  if (!verifySignature(key, signatureBase64, timestamp, rawBody)) {
    return { ok: false, detail: 'X-Twilio-Email-Event-Webhook-Signature does not verify for this request' };
  }
  return { ok: true };
}

/** Never throws: a missing, malformed or wrong signature is `false`. */
export function verifySignature(
  key: KeyObject,
  signatureBase64: string | undefined,
  timestamp: string | undefined,
  rawBody: string,
): boolean {
  if (!signatureBase64 || !timestamp || !BASE64.test(signatureBase64) || signatureBase64.length > 200)
    return false;
  try {
    return verify(
      'sha256',
      Buffer.concat([Buffer.from(timestamp, 'utf8'), Buffer.from(rawBody, 'utf8')]),
      { key, dsaEncoding: 'der' },
      Buffer.from(signatureBase64, 'base64'),
    );
  } catch {
    return false;
  }
}
