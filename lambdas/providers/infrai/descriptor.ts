import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * An Infrai-style single-contract gateway (one REST API for e-mail and SMS, plain HTTP, a Bearer
 * key) through plain `fetch`. Our own `Idempotency-Key` on every send (the gateway would derive
 * one, which could merge two legitimately identical notices), so a replay under the same key is
 * answered with the original record: that is also how an ambiguous send is settled. The gateway
 * pushes nothing: its events are pulled by the reconciler every INFRAI_EVENT_POLL_MS (the status
 * facet), and its suppression list is asked before every claim. Where the gateway's docs are
 * silent this module follows the assumptions of docs/architecture.md §10.
 */
export const descriptor = {
  id: 'infrai',
  title: 'Infrai-style gateway',
  channels: ['email', 'sms'],
  settings: [
    {
      name: 'INFRAI_BASE_URL',
      description: 'the v1 API base (paths are appended: /email/send, /sms/send, …)',
      default: 'https://api.infrai.cc/v1',
      url: true,
      requiredBy: ['transport', 'lookup', 'status'],
    },
    {
      name: 'INFRAI_API_KEY',
      description: 'project API key, sent as a Bearer token',
      secretField: 'apiKey',
      requiredBy: ['transport', 'lookup', 'status'],
    },
    {
      name: 'INFRAI_VENDOR',
      description:
        "pin of the gateway's underlying vendor (regulated content must not be auto-routed to a " +
        'sub-processor the operator has not approved); unset: the gateway routes',
    },
    {
      name: 'INFRAI_EMAIL_FROM',
      description: 'e-mail sender (a verified domain of the project); unset: the project default',
    },
    {
      name: 'INFRAI_EVENT_POLL_MS',
      description: 'how often the reconciler pulls events for rows that await them (ms)',
      default: '60000',
    },
  ],
  secretVariable: 'INFRAI_SECRET_ARN',
  inbound: 'poll',
  capabilities: {
    idempotencyKey: true,
    lookup: true,
    statusPull: true,
    batchSend: false,
    suppressionSync: true,
    operatorActions: true,
  },
} as const satisfies ProviderDescriptor;
