import { KMSClient } from '@aws-sdk/client-kms';
import { AesGcmEnvelopeSealer, StaticDataKeySource } from '../adapters/crypto/aes-gcm-envelope-sealer.ts';
import { KmsDataKeySource } from '../adapters/crypto/kms-data-key-source.ts';
import { ConfigError } from '../contract/config-error.ts';
import type { Config } from '../edge/config.ts';
import type { AwsClients } from './aws-clients.ts';
import { key32 } from './core.ts';
import type { HeldKey } from './ledger.ts';

/**
 * The envelope sealer: KMS-wrapped data keys in AWS (ENVELOPE_KMS_KEY_ID), one local key
 * otherwise (ENVELOPE_LOCAL_KEY). A local key is also returned as a held key, for the check
 * against the table's recorded keys; a KMS key needs none (the ciphertext names its key).
 */
export function buildSealer(
  config: Config,
  clients: AwsClients,
): { sealer: AesGcmEnvelopeSealer; held: HeldKey[] } {
  if (config.ENVELOPE_KMS_KEY_ID) {
    return {
      sealer: new AesGcmEnvelopeSealer(
        new KmsDataKeySource(clients.adopt(new KMSClient({})), config.ENVELOPE_KMS_KEY_ID),
      ),
      held: [],
    };
  }
  if (config.ENVELOPE_LOCAL_KEY) {
    const key = key32(config.ENVELOPE_LOCAL_KEY, 'ENVELOPE_LOCAL_KEY');
    return {
      sealer: new AesGcmEnvelopeSealer(new StaticDataKeySource(key)),
      held: [{ which: 'envelope', key, variable: 'ENVELOPE_LOCAL_KEY' }],
    };
  }
  throw new ConfigError('ENVELOPE_KMS_KEY_ID or ENVELOPE_LOCAL_KEY is required');
}
