import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigError } from '../../contract/config-error.ts';
import type { AwsSdkClient } from '../../ports/provider.port.ts';

/** Reads a Secrets Manager secret holding a JSON object; `variable` names it in messages. */
export type SecretJsonReader = (arn: string, variable: string) => Promise<Record<string, unknown>>;

/**
 * A reader of the secrets a function holds a grant on, read once per cold start, over one client
 * built on first use and handed to the function through `adopt` (lambdas/wiring/aws-clients.ts).
 */
export function secretJsonReader(adopt: <C extends AwsSdkClient>(client: C) => C): SecretJsonReader {
  let client: SecretsManagerClient | undefined;
  return async (arn, variable) => {
    client ??= adopt(new SecretsManagerClient({}));
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
  };
}
