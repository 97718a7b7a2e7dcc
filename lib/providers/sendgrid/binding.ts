import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/sendgrid/descriptor.ts';
import type { NoticeFunction } from '../../constructs/notice-function.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';
import { providerSecret } from '../provider-secret.ts';

const settings = providerSettings(descriptor, {
  SENDGRID_SECRET_ARN: {
    schema: z
      .string()
      .trim()
      .regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
        message: 'a complete secret ARN (with its 6-character suffix)',
      }),
    note: "an existing secret `{ apiKey, webhookPublicKey }` (complete ARN) to use; '' → the stack creates an empty one to fill in",
  },
  SENDGRID_FROM: {
    default: 'notices@example.com',
    schema: z
      .string()
      .trim()
      .regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'an e-mail address'),
  },
  SENDGRID_BASE_URL: {
    schema: z
      .string()
      .trim()
      .regex(/^https:\/\/[^\s/]+$/, 'an https origin'),
  },
  SENDGRID_EMAIL_ACTIVITY: { default: false, schema: z.boolean(), note: 'a JSON boolean' },
});

type SendGridSettings = BoundSettings<typeof settings>;

/**
 * Twilio SendGrid (lambdas/providers/sendgrid): its credentials `{ apiKey, webhookPublicKey }`
 * in a secret (created empty unless one is given), read by the e-mail sender (transport), the
 * reconciler (the Email Activity lookup, when the account has the add-on) and the
 * provider-events function (ECDSA signatures of the Event Webhook at
 * `POST /v1/provider-events/sendgrid`). No AWS grant beyond the secret.
 */
export const sendgridBinding: ProviderBinding = {
  descriptor,
  settings,
  // Two events per message (`processed`, then `delivered` or a bounce), posted in batches: a POST
  // carries an array of events, so requests are fewer than events; one request per event bounds
  // them from above whatever the batches hold.
  webhookEventsPerMessage: 2,
  stateful(scope, { config, secretsKey }) {
    const s = bindingSettings<SendGridSettings>(config, sendgridBinding);
    const secret = providerSecret(scope, descriptor, {
      encryptionKey: secretsKey,
      namePrefix: config.resourcePrefix,
      existingArn: s.sendgridSecretArn || undefined,
    });
    return { secret };
  },
  deliver(_scope, { config, resources }) {
    const s = bindingSettings<SendGridSettings>(config, sendgridBinding);
    const secret = resources.secret as ISecret;
    const api = (fn: NoticeFunction) => {
      fn.bindSecret(secret, descriptor.secretVariable);
      fn.function.addEnvironment('SENDGRID_BASE_URL', s.sendgridBaseUrl);
    };
    return {
      bindTransport(fn) {
        api(fn);
        fn.function.addEnvironment('SENDGRID_FROM', s.sendgridFrom);
      },
      bindLookup(fn) {
        api(fn);
        fn.function.addEnvironment('SENDGRID_EMAIL_ACTIVITY', String(s.sendgridEmailActivity));
      },
      bindInbound(fn) {
        fn.bindSecret(secret, descriptor.secretVariable);
      },
    };
  },
};
