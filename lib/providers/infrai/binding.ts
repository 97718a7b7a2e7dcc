import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/infrai/descriptor.ts';
import type { NoticeFunction } from '../../constructs/notice-function.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';
import { providerSecret } from '../provider-secret.ts';

const settings = providerSettings(
  descriptor,
  {
    INFRAI_BASE_URL: {
      schema: z
        .string()
        .trim()
        .regex(/^https:\/\/[^\s/]+(\/[^\s]*)?$/, 'an https URL'),
    },
    INFRAI_SECRET_ARN: {
      schema: z
        .string()
        .trim()
        .regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
          message: 'a complete secret ARN (with its 6-character suffix)',
        }),
      note: "an existing secret `{ apiKey }` (complete ARN) to use; '' → the stack creates an empty one to fill in",
    },
    INFRAI_VENDOR: {
      schema: z
        .string()
        .trim()
        .regex(/^[a-z0-9_-]{0,40}$/, 'a vendor id (lower case)'),
      note: 'set it before sending PHI: unpinned, the gateway routes to any of its vendors',
    },
    INFRAI_EMAIL_FROM: {
      schema: z
        .string()
        .trim()
        .regex(/^([^@\s]+@[^@\s]+\.[^@\s]+)?$/, 'an e-mail address'),
    },
    INFRAI_EVENT_POLL_MS: {
      default: 60_000,
      schema: z.number().int().min(60_000).max(3_600_000),
      note: '60000–3600000, at least a reconciler period',
    },
  },
  {
    reconciliationLagAlarmSeconds: {
      default: 900,
      schema: z.number().int().min(60).max(86_400),
      description:
        'alarm when the oldest provider question owed is later than this (ReconciliationLagSeconds)',
    },
  },
);

type InfraiSettings = BoundSettings<typeof settings>;

/**
 * The Infrai-style gateway (lambdas/providers/infrai): its key `{ apiKey }` in a secret (created
 * empty unless one is given) read by the senders (transport and suppression checks) and the
 * reconciler (replays of ambiguous sends, pulled events). No inbound route and no rule: the
 * gateway pushes nothing, so the reconciler's pulls are the only way its events arrive, and the
 * binding alarms on how late they are (ReconciliationLagSeconds).
 */
export const infraiBinding: ProviderBinding = {
  descriptor,
  settings,
  stateful(scope, { config, secretsKey }) {
    const s = bindingSettings<InfraiSettings>(config, infraiBinding);
    return {
      secret: providerSecret(scope, descriptor, {
        encryptionKey: secretsKey,
        namePrefix: config.resourcePrefix,
        existingArn: s.infraiSecretArn || undefined,
      }),
    };
  },
  deliver(_scope, { config, resources }) {
    const s = bindingSettings<InfraiSettings>(config, infraiBinding);
    const secret = resources.secret as ISecret;
    const configure = (fn: NoticeFunction) => {
      fn.bindSecret(secret, descriptor.secretVariable);
      fn.function.addEnvironment('INFRAI_BASE_URL', s.infraiBaseUrl);
      if (s.infraiVendor) fn.function.addEnvironment('INFRAI_VENDOR', s.infraiVendor);
    };
    return {
      bindTransport(fn) {
        configure(fn);
        if (s.infraiEmailFrom) fn.function.addEnvironment('INFRAI_EMAIL_FROM', s.infraiEmailFrom);
      },
      bindLookup(fn) {
        configure(fn);
        fn.function.addEnvironment('INFRAI_EVENT_POLL_MS', String(s.infraiEventPollMs));
      },
      monitor(monitoring) {
        monitoring.alarmOnGauge('ReconciliationLag', monitoring.metrics.reconciliationLagSeconds, {
          threshold: s.reconciliationLagAlarmSeconds,
          evaluationPeriods: 3,
          description:
            'The reconciler is late pulling gateway events (ReconciliationLagSeconds): rows accepted by the ' +
            'gateway learn their delivery only by these pulls. Check the reconciler logs, the gateway key and ' +
            'status, and STATUS_PULLS_PER_RUN.',
        });
      },
    };
  },
};
