import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { ENVELOPE_ENCRYPTION_CONTEXT } from '../../contract/envelope.ts';
import { EnvelopeUnreadableError } from '../../ports/envelope-sealer.port.ts';
import type { DataKeySource } from './aes-gcm-envelope-sealer.ts';

const ENCRYPTION_CONTEXT = ENVELOPE_ENCRYPTION_CONTEXT;

/**
 * KMS-wrapped data keys, reused for a bounded time and count (as the AWS Encryption SDK's
 * caching does): one GenerateDataKey per few thousand notices instead of one per notice,
 * and Decrypt results cached by wrapped key for the senders.
 */
export class KmsDataKeySource implements DataKeySource {
  private currentKey: { plaintext: Uint8Array; wrapped: string; expiresAt: number; uses: number } | undefined;
  private readonly unwrapped = new Map<string, Uint8Array>();

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
    private readonly options: { maxAgeMs?: number; maxUses?: number; cacheSize?: number } = {},
  ) {}

  async current() {
    const now = Date.now();
    const maxUses = this.options.maxUses ?? 5_000;
    if (!this.currentKey || this.currentKey.expiresAt <= now || this.currentKey.uses >= maxUses) {
      const out = await this.kms.send(
        new GenerateDataKeyCommand({
          KeyId: this.keyId,
          KeySpec: 'AES_256',
          EncryptionContext: ENCRYPTION_CONTEXT,
        }),
      );
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
      this.currentKey = {
        plaintext: out.Plaintext,
        wrapped: Buffer.from(out.CiphertextBlob).toString('base64url'),
        expiresAt: now + (this.options.maxAgeMs ?? 300_000),
        uses: 0,
      };
      this.remember(this.currentKey.wrapped, out.Plaintext);
    }
    this.currentKey.uses += 1;
    return { plaintext: this.currentKey.plaintext, wrapped: this.currentKey.wrapped };
  }

  async unwrap(wrapped: string): Promise<Uint8Array> {
    const cached = this.unwrapped.get(wrapped);
    if (cached) return cached;
    try {
      const out = await this.kms.send(
        new DecryptCommand({
          CiphertextBlob: Buffer.from(wrapped, 'base64url'),
          EncryptionContext: ENCRYPTION_CONTEXT,
        }),
      );
      if (!out.Plaintext) throw new Error('KMS returned no plaintext');
      this.remember(wrapped, out.Plaintext);
      return out.Plaintext;
    } catch (error) {
      if (error instanceof Error && /InvalidCiphertext|IncorrectKey/.test(error.name)) {
        throw new EnvelopeUnreadableError('data key cannot be unwrapped');
      }
      throw error;
    }
  }

  private remember(wrapped: string, plaintext: Uint8Array): void {
    if (this.unwrapped.size >= (this.options.cacheSize ?? 64)) {
      const oldest = this.unwrapped.keys().next().value;
      if (oldest !== undefined) this.unwrapped.delete(oldest);
    }
    this.unwrapped.set(wrapped, plaintext);
  }
}
