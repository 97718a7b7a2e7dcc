import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/twilio/descriptor.ts';
import type { NoticeFunction } from '../../constructs/notice-function.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';
import { providerSecret } from '../provider-secret.ts';

const settings = providerSettings(descriptor, {
  TWILIO_SECRET_ARN: {
    schema: z
      .string()
      .trim()
      .regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
        message: 'a complete secret ARN (with its 6-character suffix)',
      }),
    note: "an existing secret `{ accountSid, authToken, from }` (complete ARN) to use; '' → the stack creates an empty one to fill in",
  },
});

/**
 * Twilio Messaging (lambdas/providers/twilio): its credentials `{ accountSid, authToken, from }`
 * in a secret (created empty unless one is given), read by the SMS sender (transport), the
 * reconciler (lookup) and the provider-events function (signature checks of its callbacks at
 * `POST /v1/provider-events/twilio`, at the provider-events function's URL or the API's route:
 * lib/providers/webhook-ingress.ts).
 */
export const twilioBinding: ProviderBinding = {
  descriptor,
  settings,
  // One status callback per status change after `queued`: `sent`, then `delivered`, `undelivered`
  // or `failed`.
  webhookEventsPerMessage: 2,
  stateful(scope, { config, secretsKey }) {
    const s = bindingSettings<BoundSettings<typeof settings>>(config, twilioBinding);
    const secret = providerSecret(scope, descriptor, {
      encryptionKey: secretsKey,
      namePrefix: config.resourcePrefix,
      existingArn: s.twilioSecretArn || undefined,
    });
    return { secret };
  },
  deliver(_scope, { resources, publicBaseUrl }) {
    const secret = resources.secret as ISecret;
    const credentials = (fn: NoticeFunction) => fn.bindSecret(secret, descriptor.secretVariable);
    return {
      bindTransport(fn) {
        credentials(fn);
        // The StatusCallback points back at this deployment's webhook (the provider-events
        // function's URL, or the API's route: lib/providers/webhook-ingress.ts); the signature
        // of each callback covers that URL.
        fn.bindPublicBaseUrl(publicBaseUrl);
      },
      bindLookup: credentials,
      // The origin its signatures are checked against is the ingress's, which the delivery stack
      // gives the provider-events function for every webhook provider.
      bindInbound: credentials,
    };
  },
};
