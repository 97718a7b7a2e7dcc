import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/resend/descriptor.ts';
import type { NoticeFunction } from '../../constructs/notice-function.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';
import { providerSecret } from '../provider-secret.ts';

const settings = providerSettings(descriptor, {
  RESEND_SECRET_ARN: {
    schema: z
      .string()
      .trim()
      .regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
        message: 'a complete secret ARN (with its 6-character suffix)',
      }),
    note: "an existing secret `{ apiKey, webhookSecret }` (complete ARN) to use; '' → the stack creates an empty one to fill in",
  },
  RESEND_FROM: {
    default: 'notices@example.com',
    schema: z
      .string()
      .trim()
      .regex(
        /^([^<>@\s][^<>@]*<)?[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+>?$/,
        'an e-mail address, or "Name <address>"',
      ),
  },
  RESEND_BASE_URL: {
    schema: z
      .string()
      .trim()
      .regex(/^https:\/\/[^\s/]+$/, 'an https origin'),
  },
});

type ResendSettings = BoundSettings<typeof settings>;

/**
 * Resend (lambdas/providers/resend): its credentials `{ apiKey, webhookSecret }` in a secret
 * (created empty unless one is given), read by the e-mail sender (transport), the reconciler
 * (lookup: replays under the key) and the provider-events function (Svix signatures of its
 * webhook at `POST /v1/provider-events/resend`, the route the API adds for webhook providers).
 * No AWS grant beyond the secret: Resend is reached over HTTPS.
 */
export const resendBinding: ProviderBinding = {
  descriptor,
  settings,
  // One signed request per event: `email.sent`, then `email.delivered` or a bounce (opens and clicks
  // are not tracked); a delay adds one now and then.
  webhookEventsPerMessage: 2,
  stateful(scope, { config, secretsKey }) {
    const s = bindingSettings<ResendSettings>(config, resendBinding);
    const secret = providerSecret(scope, descriptor, {
      encryptionKey: secretsKey,
      namePrefix: config.resourcePrefix,
      existingArn: s.resendSecretArn || undefined,
    });
    return { secret };
  },
  deliver(_scope, { config, resources }) {
    const s = bindingSettings<ResendSettings>(config, resendBinding);
    const secret = resources.secret as ISecret;
    const api = (fn: NoticeFunction) => {
      fn.bindSecret(secret, descriptor.secretVariable);
      // A replay must be the same body: the lookup builds it with the same sender.
      fn.function.addEnvironment('RESEND_FROM', s.resendFrom);
      fn.function.addEnvironment('RESEND_BASE_URL', s.resendBaseUrl);
    };
    return {
      bindTransport: api,
      bindLookup: api,
      bindInbound(fn) {
        fn.bindSecret(secret, descriptor.secretVariable);
      },
    };
  },
};
