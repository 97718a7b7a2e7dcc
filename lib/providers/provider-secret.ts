import { RemovalPolicy, SecretValue, Tags } from 'aws-cdk-lib';
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
 * The value CloudFormation writes into a provider secret it creates, the same for every provider
 * and forever. CloudFormation writes `SecretString` at creation and again on any update that
 * changes it (a `GenerateSecretString` change generates a new value likewise), over whatever the
 * operator put there with `put-secret-value`. A value derived from the descriptor's fields (empty
 * placeholders) would be rewritten, credentials lost, the day a field is added or renamed; a
 * constant is never rewritten. The runtime reads a missing field as it reads an empty one.
 */
export const PROVIDER_SECRET_INITIAL_VALUE = '{}';

/** Tag on each provider secret the stack creates: `<resourcePrefix>/<provider id>`, to find a retained one. */
export const PROVIDER_SECRET_TAG = 'notice-ledger:provider-secret';

/** The fields a provider's secret holds (each a descriptor setting's `secretField`). */
export function secretFields(descriptor: ProviderDescriptor): string[] {
  return descriptor.settings.flatMap((s) => (s.secretField ? [s.secretField] : []));
}

/**
 * What a provider secret the stack creates holds until a person fills it in
 * ({@link PROVIDER_SECRET_INITIAL_VALUE}): no field at all. The runtime reads an absent, null or
 * blank credential field as a placeholder (lambdas/providers/settings.ts `isPlaceholder`): the
 * provider's facets are left out and its channel's sends fail as `provider_not_configured`, while
 * everything else runs.
 */
export function placeholderSecret(_descriptor: ProviderDescriptor): Record<string, string> {
  return JSON.parse(PROVIDER_SECRET_INITIAL_VALUE) as Record<string, string>;
}

/**
 * The secret of a provider's credentials: one JSON object with a field per credential the
 * descriptor declares (`secretField`), read by the functions that carry the provider's facets
 * (the variable is the descriptor's `secretVariable`). Provider credentials are issued and
 * rotated in the provider's console, so Secrets Manager does not rotate them.
 *
 * - **Adopted** when the deployment names one (`<provider>SecretArn`, a complete ARN): used as it
 *   is, never written. It is taken to be encrypted with the stack's data key (as the secrets this
 *   stack created are, so a retained one can be adopted back) or with the default
 *   `aws/secretsmanager` key, which needs no grant; any other key must be granted by the operator.
 * - **Created** otherwise, holding {@link PROVIDER_SECRET_INITIAL_VALUE}, to be filled after the
 *   deploy (`put-secret-value`); until then those functions find the fields missing, leave the provider's facets out and its
 *   channel's sends fail as `provider_not_configured`. No fixed
 *   name: it is retained when the provider leaves the deployment, and a fixed name would make the
 *   provider's return fail (CloudFormation cannot create a second secret of that name). It is
 *   tagged {@link PROVIDER_SECRET_TAG} instead, so the retained one can be found and adopted
 *   (docs/deploy.md, "Switching a channel's provider").
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
  // Under the stateful stack's `Secrets` construct as `<Id>` (Secrets/<Id>).
  const id = pascal(descriptor.id);
  if (options.existingArn) {
    return Secret.fromSecretAttributes(scope, id, {
      secretCompleteArn: options.existingArn,
      encryptionKey: options.encryptionKey,
    });
  }
  const secret = new Secret(scope, id, {
    // Nothing here depends on the descriptor's fields: a change of them changes no property of
    // this resource (the fields are named in the stack output's description instead).
    description: `notice-ledger: ${descriptor.title} credentials, a JSON object filled in after the deploy (docs/deploy.md)`,
    encryptionKey: options.encryptionKey,
    secretStringValue: SecretValue.unsafePlainText(PROVIDER_SECRET_INITIAL_VALUE),
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Tags.of(secret).add(PROVIDER_SECRET_TAG, `${options.namePrefix}/${descriptor.id}`);
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
