import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * Resend (email) over its REST API with plain `fetch`. Every attempt of a (notice, channel)
 * carries the ledger's idempotency key, and Resend answers a replay of the same body under the
 * same key (for 24 h) with the original email's id instead of sending again: an ambiguous send
 * is settled by replaying it. Batches of up to 100 (`POST /emails/batch`, one key per call, a
 * result per email). Webhooks (Svix signatures) at `POST /v1/provider-events/resend`.
 */
export const descriptor = {
  id: 'resend',
  title: 'Resend',
  channels: ['email'],
  settings: [
    {
      name: 'RESEND_BASE_URL',
      description: 'API origin',
      default: 'https://api.resend.com',
      url: true,
      requiredBy: ['transport', 'lookup'],
    },
    {
      name: 'RESEND_API_KEY',
      description: 'API key (re_…), sent as a Bearer token',
      secretField: 'apiKey',
      requiredBy: ['transport', 'lookup'],
    },
    {
      name: 'RESEND_FROM',
      description: 'sender (From), e.g. "Clinic <notices@example.org>", of a domain verified in Resend',
      requiredBy: ['transport', 'lookup'],
    },
    {
      name: 'RESEND_WEBHOOK_SECRET',
      description: "the webhook endpoint's signing secret (whsec_…): the key of its Svix signatures",
      secretField: 'webhookSecret',
      requiredBy: ['inbound'],
    },
  ],
  secretVariable: 'RESEND_SECRET_ARN',
  inbound: 'webhook',
  webhook: {
    summary: 'Resend webhook events (email.sent, delivered, bounced, complained …); Svix signature verified',
    contentType: 'application/json',
    signatureHeader: 'svix-signature',
    refusedStatus: 403,
  },
  capabilities: {
    idempotencyKey: true,
    lookup: true,
    statusPull: false,
    batchSend: true,
    suppressionSync: false,
  },
} as const satisfies ProviderDescriptor;
