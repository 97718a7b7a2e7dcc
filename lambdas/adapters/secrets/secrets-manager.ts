import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from '../../contract/config-error.ts';

let client: SecretsManagerClient | undefined;

/**
 * A Secrets Manager secret holding a JSON object, read once per cold start by the functions that
 * hold a grant on it. `variable` is the environment variable that named it, for the message.
 */
export async function readSecretJson(arn: string, variable: string): Promise<Record<string, unknown>> {
  client ??= new SecretsManagerClient({});
  const out = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  if (!out.SecretString) throw new ConfigError(`the secret ${variable} names has no string value`);
  try {
    const value = JSON.parse(out.SecretString) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Reported below, without quoting the secret.
  }
  throw new ConfigError(`the secret ${variable} names is not a JSON object`);
}
