import { RemovalPolicy, SecretValue } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

export interface NoticeSecretsProps {
  /** Customer-managed key the secrets are encrypted with. */
  readonly encryptionKey: IKey;
  /** Name prefix, e.g. `notice-ledger` → `notice-ledger/fingerprint-key`. */
  readonly namePrefix: string;
  /**
   * Complete ARN of an existing Twilio secret (`{ accountSid, authToken, from }`).
   * @default - the stack creates `<prefix>/twilio` with empty fields, to be filled in
   */
  readonly twilioSecretArn?: string;
}

/**
 * The two secrets the functions read at cold start:
 *
 * - **fingerprint key** (FINGERPRINT_KEY_SECRET_ARN) `{ "key": "<base64 of 32 bytes>" }`: the
 *   HMAC key of destination fingerprints. Generated here as 43 letters and digits, which Node's
 *   base64 decoder reads as exactly 32 bytes (~254 bits of entropy). It must never change once
 *   notices exist: suppressions and ledger rows are keyed by fingerprints made with it. Replace it
 *   only before the first notice (docs/deploy.md shows how).
 * - **Twilio** (TWILIO_SECRET_ARN) `{ "accountSid", "authToken", "from" }`: created with empty
 *   fields unless an existing secret is given. Until it is filled, the SMS sender has no transport
 *   (SMS intents fail) and Twilio callbacks are refused.
 *
 * Neither rotates automatically: rotating the fingerprint key would orphan every suppression, and
 * Twilio auth tokens are rotated in the Twilio console (then `put-secret-value`).
 */
export class NoticeSecrets extends Construct {
  readonly fingerprintKey: Secret;
  readonly twilio: ISecret;
  /** True when the stack owns the Twilio secret (and must acknowledge its rotation finding). */
  readonly twilioCreated: boolean;

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

    if (props.twilioSecretArn) {
      this.twilio = Secret.fromSecretCompleteArn(this, 'Twilio', props.twilioSecretArn);
      this.twilioCreated = false;
    } else {
      this.twilio = new Secret(this, 'Twilio', {
        secretName: `${props.namePrefix}/twilio`,
        description:
          'notice-ledger: Twilio credentials { accountSid, authToken, from }; fill in after deploy',
        encryptionKey: props.encryptionKey,
        // Empty placeholders document the shape; CloudFormation writes them once, and later
        // `put-secret-value` updates survive deploys as long as this definition is unchanged.
        secretObjectValue: {
          accountSid: SecretValue.unsafePlainText(''),
          authToken: SecretValue.unsafePlainText(''),
          from: SecretValue.unsafePlainText(''),
        },
        removalPolicy: RemovalPolicy.RETAIN,
      });
      this.twilioCreated = true;
    }
  }
}
