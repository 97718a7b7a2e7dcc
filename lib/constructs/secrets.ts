import { RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

export interface NoticeSecretsProps {
  /** Customer-managed key the secrets are encrypted with. */
  readonly encryptionKey: IKey;
  /** Name prefix, e.g. `notice-ledger` → `notice-ledger/fingerprint-key`. */
  readonly namePrefix: string;
}

/**
 * The secrets the functions read at cold start. Here: the **fingerprint key**
 * (FINGERPRINT_KEY_SECRET_ARN) `{ "key": "<base64 of 32 bytes>" }`, the HMAC key of destination
 * fingerprints, read by the http function only. Generated as 43 letters and digits, which Node's
 * base64 decoder reads as exactly 32 bytes (~254 bits of entropy). It must never change once
 * notices exist: suppressions and ledger rows are keyed by fingerprints made with it, and the
 * ledger table records a check value of it, so a function started with another key refuses to
 * start. Replace it only before the first notice (docs/deploy.md shows how). Not rotated.
 *
 * Providers' credentials are secrets too, created by each provider's binding under this
 * construct (`Secrets/<Provider>`, lib/providers/provider-secret.ts) and only when the provider is
 * deployed.
 */
export class NoticeSecrets extends Construct {
  readonly fingerprintKey: Secret;
  /** Provider credentials by provider id (those the deployment selects or retains). */
  readonly providers = new Map<string, ISecret>();

  constructor(scope: Construct, id: string, props: NoticeSecretsProps) {
    super(scope, id);
    this.fingerprintKey = new Secret(this, 'FingerprintKey', {
      secretName: `${props.namePrefix}/fingerprint-key`,
      description: 'notice-ledger: HMAC key of destination fingerprints; never change after the first notice',
      encryptionKey: props.encryptionKey,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: 'key',
        passwordLength: 43,
        excludePunctuation: true,
        includeSpace: false,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
