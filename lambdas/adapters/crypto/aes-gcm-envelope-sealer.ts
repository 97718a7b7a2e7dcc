import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  type EnvelopeSealer,
  EnvelopeUnreadableError,
  type SendEnvelope,
} from '../../ports/envelope-sealer.port.ts';

/** Where the AES-256 data key comes from: a fixed local key, or KMS-wrapped data keys in AWS. */
export interface DataKeySource {
  /** The key to seal with now, and its wrapped form to store beside the ciphertext. */
  current(): Promise<{ readonly plaintext: Uint8Array; readonly wrapped: string }>;
  /** Recovers the key a stored envelope was sealed with. */
  unwrap(wrapped: string): Promise<Uint8Array>;
}

const FORMAT = 'e1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM envelope: `e1.<wrapped key>.<iv>.<ciphertext‖tag>` (base64url parts). The
 * additional authenticated data is `noticeId|channel`, so an envelope copied onto another
 * row fails to open instead of sending one patient's data to another.
 */
export class AesGcmEnvelopeSealer implements EnvelopeSealer {
  constructor(private readonly keys: DataKeySource) {}

  async seal(envelope: SendEnvelope, context: { noticeId: string; channel: string }): Promise<string> {
    const { plaintext, wrapped } = await this.keys.current();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', plaintext, iv);
    cipher.setAAD(Buffer.from(`${context.noticeId}|${context.channel}`, 'utf8'));
    // Short keys keep the ledger item small: every write pays per started KB.
    const body = Buffer.from(JSON.stringify({ d: envelope.destination, v: envelope.variables }), 'utf8');
    const sealed = Buffer.concat([cipher.update(body), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, wrapped, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  async open(sealed: string, context: { noticeId: string; channel: string }): Promise<SendEnvelope> {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== FORMAT)
      throw new EnvelopeUnreadableError('unknown envelope format');
    const [, wrapped, ivText, bodyText] = parts as [string, string, string, string];
    const key = await this.keys.unwrap(wrapped);
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES)
      throw new EnvelopeUnreadableError('truncated envelope');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(`${context.noticeId}|${context.channel}`, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(body.subarray(0, body.length - TAG_BYTES)),
        decipher.final(),
      ]);
      const parsed = JSON.parse(plain.toString('utf8')) as { d: string; v: Record<string, unknown> };
      return { destination: parsed.d, variables: parsed.v };
    } catch {
      throw new EnvelopeUnreadableError('envelope failed authentication');
    }
  }
}

/** A single local key (local stack, tests). `wrapped` is just its id. */
export class StaticDataKeySource implements DataKeySource {
  private readonly key: Uint8Array;
  constructor(
    key: Uint8Array,
    private readonly keyId = 'local',
  ) {
    if (key.length !== 32) throw new Error('envelope key must be 32 bytes (AES-256)');
    this.key = key;
  }
  async current() {
    return { plaintext: this.key, wrapped: this.keyId };
  }
  async unwrap(wrapped: string): Promise<Uint8Array> {
    if (wrapped !== this.keyId) throw new EnvelopeUnreadableError('envelope sealed with another key');
    return this.key;
  }
}
