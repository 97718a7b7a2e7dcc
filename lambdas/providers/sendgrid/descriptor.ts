import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * Twilio SendGrid v3 Mail Send (email) with plain `fetch`. No idempotency key exists, so an
 * ambiguous send is settled only by evidence (the signed Event Webhook at
 * `POST /v1/provider-events/sendgrid`, or the Email Activity API where the account has that
 * add-on) or by policy; never by sending again to see. No batch sends: one request's
 * personalizations share one `X-Message-Id` and one answer, so a refusal cannot be mapped back
 * to one recipient.
 */
export const descriptor = {
  id: 'sendgrid',
  title: 'Twilio SendGrid',
  channels: ['email'],
  settings: [
    {
      name: 'SENDGRID_BASE_URL',
      description: 'API origin',
      default: 'https://api.sendgrid.com',
      url: true,
      requiredBy: ['transport', 'lookup'],
    },
    {
      name: 'SENDGRID_API_KEY',
      description: 'API key (SG.…), sent as a Bearer token',
      secretField: 'apiKey',
      requiredBy: ['transport', 'lookup'],
    },
    {
      name: 'SENDGRID_FROM',
      description: 'sender (From) address of a verified sender or authenticated domain',
      requiredBy: ['transport'],
    },
    {
      name: 'SENDGRID_WEBHOOK_PUBLIC_KEY',
      description: 'base64 DER of the Event Webhook verification key (ECDSA P-256), from the Mail Settings',
      secretField: 'webhookPublicKey',
      requiredBy: ['inbound'],
    },
    {
      name: 'SENDGRID_EMAIL_ACTIVITY',
      description:
        '"true" when the account has the Email Activity add-on: the reconciler looks sends up there',
      default: 'false',
    },
  ],
  secretVariable: 'SENDGRID_SECRET_ARN',
  inbound: 'webhook',
  webhook: {
    summary: 'SendGrid Event Webhook (batched events); ECDSA signature verified',
    contentType: 'application/json',
    headers: [
      {
        name: 'X-Twilio-Email-Event-Webhook-Signature',
        description:
          'base64 DER ECDSA (P-256, SHA-256) signature over the timestamp header followed by the raw body',
        pattern: '^[A-Za-z0-9+/]+={0,2}$',
      },
      {
        name: 'X-Twilio-Email-Event-Webhook-Timestamp',
        description:
          'epoch seconds of this attempt; more than 10 minutes from our clock, either way, is refused (403)',
        pattern: '^\\d{1,12}$',
      },
    ],
    body: {
      type: 'array',
      description: 'a batch of events, in any order; repeats of an sg_event_id are applied once',
      items: {
        type: 'object',
        required: ['email', 'timestamp', 'event'],
        properties: {
          email: { type: 'string' },
          timestamp: { type: 'integer', description: 'epoch seconds of the event' },
          event: {
            type: 'string',
            description:
              'processed (accepted), delivered, bounce, dropped, spamreport, unsubscribe, group_unsubscribe are read; deferred, open, click … are acknowledged and ignored',
          },
          sg_event_id: { type: 'string' },
          sg_message_id: { type: 'string', description: "the send's X-Message-Id, a dot, a suffix" },
          notice_intent: {
            type: 'string',
            description:
              'our custom arg, flattened to the top level: the notice and channel (<noticeId>-email)',
          },
          type: { type: ['string', 'null'], description: 'bounce: bounce or blocked' },
          reason: { type: ['string', 'null'] },
          status: { type: ['string', 'null'] },
        },
      },
    },
    unsignedStatus: 403,
    refusedStatus: 403,
    refusedAlso: 'signed more than 10 minutes from our clock, either way',
  },
  capabilities: {
    idempotencyKey: false,
    lookup: true,
    statusPull: false,
    batchSend: false,
    suppressionSync: false,
  },
} as const satisfies ProviderDescriptor;
