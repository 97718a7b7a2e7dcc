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
