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
    headers: [
      {
        name: 'svix-id',
        description:
          'the message id, the same on every retry and replay (a repeat is applied once); the unbranded webhook-id, webhook-timestamp and webhook-signature are read alike',
      },
      {
        name: 'svix-timestamp',
        description: 'epoch seconds of this attempt; more than 5 minutes from our clock is refused (403)',
        pattern: '^\\d{1,12}$',
      },
      {
        name: 'svix-signature',
        description:
          'space-separated v1,<base64 HMAC-SHA256> entries over id.timestamp.body, keyed with the endpoint signing secret',
        pattern: '^v\\d+,[A-Za-z0-9+/=]+( v\\d+,[A-Za-z0-9+/=]+)*$',
      },
    ],
    body: {
      type: 'object',
      description: 'one event',
      required: ['type', 'created_at', 'data'],
      properties: {
        type: {
          type: 'string',
          description:
            'email.sent, email.delivered, email.bounced, email.complained, email.suppressed, email.failed are read; other email.* and non-email events are acknowledged and ignored',
        },
        created_at: { type: 'string' },
        data: {
          type: 'object',
          description:
            'what the event is about; for email.* events the e-mail: its id, addresses, subject, tags (name → value), headers and, by type, bounce, failed or suppressed details',
          properties: {
            email_id: { type: 'string', minLength: 1 },
            created_at: { type: ['string', 'null'] },
            from: { type: ['string', 'null'] },
            to: { type: ['array', 'null'], items: { type: 'string' } },
            subject: { type: ['string', 'null'] },
            tags: {
              type: ['object', 'null'],
              description: 'notice_intent carries the notice and channel (<noticeId>-email)',
              additionalProperties: { type: 'string' },
            },
            headers: {
              type: ['array', 'null'],
              items: {
                type: 'object',
                properties: { name: { type: 'string' }, value: { type: 'string' } },
              },
            },
            bounce: { type: ['object', 'null'] },
            failed: { type: ['object', 'null'] },
            suppressed: { type: ['object', 'null'] },
          },
        },
      },
      // An email.* event must name its e-mail (400 otherwise).
      if: { required: ['type'], properties: { type: { type: 'string', pattern: '^email\\.' } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword; this object is never awaited.
      then: { properties: { data: { required: ['email_id'] } } },
    },
    unsignedStatus: 401,
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
