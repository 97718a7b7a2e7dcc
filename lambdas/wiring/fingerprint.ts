import { secretJsonReader } from '../adapters/secrets/secrets-manager.ts';
import { ConfigError } from '../contract/config-error.ts';
import type { Config } from '../edge/config.ts';
import type { AwsClients } from './aws-clients.ts';
import { key32 } from './core.ts';
import type { HeldKey } from './ledger.ts';

/**
 * The HMAC key of destination fingerprints: from Secrets Manager in AWS
 * (FINGERPRINT_KEY_SECRET_ARN, `{ "key": … }`), from FINGERPRINT_KEY locally. Only the functions
 * that fingerprint a destination (intake, operator suppressions) read it.
 */
export async function loadFingerprintKey(config: Config, clients: AwsClients): Promise<HeldKey> {
  if (config.FINGERPRINT_KEY_SECRET_ARN) {
    const readSecretJson = secretJsonReader(clients.adopt);
    const value = await readSecretJson(config.FINGERPRINT_KEY_SECRET_ARN, 'FINGERPRINT_KEY_SECRET_ARN');
    const key = key32(
      typeof value.key === 'string' ? value.key : '',
      'field "key" of FINGERPRINT_KEY_SECRET_ARN',
    );
    return { which: 'fingerprint', key, variable: 'FINGERPRINT_KEY_SECRET_ARN' };
  }
  if (config.FINGERPRINT_KEY) {
    return {
      which: 'fingerprint',
      key: key32(config.FINGERPRINT_KEY, 'FINGERPRINT_KEY'),
      variable: 'FINGERPRINT_KEY',
    };
  }
  throw new ConfigError('FINGERPRINT_KEY or FINGERPRINT_KEY_SECRET_ARN is required');
}
