import { RemovalPolicy, SecretValue } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { ProviderDescriptor } from '../../lambdas/contract/providers.ts';
import { acknowledge } from '../nag.ts';

/** `my-sms` → `MySms`: the provider's part of construct ids and output names. */
export function pascal(id: string): string {
  return id.replace(/(^|[^A-Za-z0-9])([a-z0-9])/g, (_, _sep: string, c: string) => c.toUpperCase());
}

/**
 * What a new provider secret holds until a person fills it in: every credential field the
 * descriptor declares, empty. The runtime reads such a field as a placeholder
 * (lambdas/providers/settings.ts `isPlaceholder`): the provider's facets are left out and its
 * channel's sends fail as `provider_not_configured`, while everything else runs.
 */
export function placeholderSecret(descriptor: ProviderDescriptor): Record<string, string> {
  return Object.fromEntries(descriptor.settings.flatMap((s) => (s.secretField ? [[s.secretField, '']] : [])));
}

/**
 * The secret of a provider's credentials: one JSON object with a field per credential the
 * descriptor declares (`secretField`), read by the functions that carry the provider's facets
 * (the variable is the descriptor's `secretVariable`). An existing secret (complete ARN) is
 * used as it is; otherwise one is created with empty fields, to be filled after the deploy
 * (`put-secret-value`); until then those functions leave the provider's facets out, naming the
 * empty fields, and the channel's sends fail as `provider_not_configured`.
 * Retained on deletion. Provider credentials are issued and rotated in the provider's console,
 * so Secrets Manager does not rotate them.
 */
export function providerSecret(
  scope: Construct,
  descriptor: ProviderDescriptor,
  options: {
    readonly encryptionKey: IKey;
    readonly namePrefix: string;
    readonly existingArn: string | undefined;
  },
): ISecret {
  // Under the stateful stack's `Secrets` construct as `<Id>` (Secrets/<Id>): the construct path,
  // and with it the logical id, of the secret deployments already hold and have filled in.
  const id = pascal(descriptor.id);
  if (options.existingArn) return Secret.fromSecretCompleteArn(scope, id, options.existingArn);
  const placeholders = placeholderSecret(descriptor);
  const fields = Object.keys(placeholders);
  const secret = new Secret(scope, id, {
    secretName: `${options.namePrefix}/${descriptor.id}`,
    description: `notice-ledger: ${descriptor.title} credentials { ${fields.join(', ')} }; fill in after deploy`,
    encryptionKey: options.encryptionKey,
    // Empty placeholders document the shape; CloudFormation writes them once, and later
    // `put-secret-value` updates survive deploys as long as this definition is unchanged.
    secretObjectValue: Object.fromEntries(
      Object.entries(placeholders).map(([field, value]) => [field, SecretValue.unsafePlainText(value)]),
    ),
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const reason =
    `${descriptor.title} credentials are issued and rotated in the provider's console, then written here ` +
    'with put-secret-value (docs/deploy.md); Secrets Manager cannot rotate them.';
  acknowledge(
    secret,
    { rule: 'AwsSolutions-SMG4', reason },
    { rule: 'HIPAA.Security-SecretsManagerRotationEnabled', reason },
  );
  return secret;
}
