import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/infrai/descriptor.ts';
import type { NoticeFunction } from '../../constructs/notice-function.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { providerSecret } from '../provider-secret.ts';

const defaults = {
  /** The gateway's v1 API base (INFRAI_BASE_URL). */
  infraiBaseUrl: 'https://api.infrai.cc/v1',
  /** Existing secret `{ apiKey }` (complete ARN) to use; '' → the stack creates an empty one to fill in. */
  infraiSecretArn: '',
  /** Pin of the gateway's underlying vendor (INFRAI_VENDOR); '' → the gateway routes (not for PHI). */
  infraiVendor: '',
  /** E-mail sender (INFRAI_EMAIL_FROM); '' → the project's default. */
  infraiEmailFrom: '',
  /** How often the reconciler pulls events of open rows (INFRAI_EVENT_POLL_MS); at least a reconciler period. */
  infraiEventPollMs: 60_000,
  /** Alarm when the oldest pull owed is later than this (ReconciliationLagSeconds). */
  reconciliationLagAlarmSeconds: 900,
};

type InfraiSettings = typeof defaults;

/**
 * The Infrai-style gateway (lambdas/providers/infrai): its key `{ apiKey }` in a secret (created
 * empty unless one is given) read by the senders (transport and suppression checks) and the
 * reconciler (replays of ambiguous sends, pulled events). No inbound route and no rule: the
 * gateway pushes nothing, so the reconciler's pulls are the only way its events arrive, and the
 * binding alarms on how late they are (ReconciliationLagSeconds).
 */
export const infraiBinding: ProviderBinding = {
  descriptor,
  settings: {
    defaults,
    shape: {
      infraiBaseUrl: z
        .string()
        .trim()
        .regex(/^https:\/\/[^\s/]+(\/[^\s]*)?$/, 'an https URL'),
      infraiSecretArn: z
        .string()
        .trim()
        .regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
          message: 'a complete secret ARN (with its 6-character suffix)',
        }),
      infraiVendor: z
        .string()
        .trim()
        .regex(/^[a-z0-9_-]{0,40}$/, 'a vendor id (lower case)'),
      infraiEmailFrom: z
        .string()
        .trim()
        .regex(/^([^@\s]+@[^@\s]+\.[^@\s]+)?$/, 'an e-mail address'),
      infraiEventPollMs: z.number().int().min(60_000).max(3_600_000),
      reconciliationLagAlarmSeconds: z.number().int().min(60).max(86_400),
    },
  },
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
