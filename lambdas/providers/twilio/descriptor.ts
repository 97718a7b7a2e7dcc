import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * Twilio Messaging (SMS) over its REST API with plain `fetch`. No idempotency key: an ambiguous
 * send is looked up by listing messages to the destination (body and time must match), and
 * settled by signed status callbacks at `POST /v1/provider-events/twilio`; an accepted message
 * whose callback never came is fetched by its SID (the status facet: delivery follow-up).
 */
export const descriptor = {
  id: 'twilio',
  title: 'Twilio Messaging',
  channels: ['sms'],
  defaultFor: ['sms'],
  settings: [
    {
      name: 'TWILIO_BASE_URL',
      description: 'API origin (the adapter appends /2010-04-01/Accounts/{sid}/Messages.json)',
      default: 'https://api.twilio.com',
      url: true,
      requiredBy: ['transport', 'lookup', 'status'],
    },
    {
      name: 'TWILIO_ACCOUNT_SID',
      description: 'account SID (AC…)',
      secretField: 'accountSid',
      requiredBy: ['transport', 'lookup', 'status'],
    },
    {
      name: 'TWILIO_AUTH_TOKEN',
      description: 'auth token: API credential and the key of X-Twilio-Signature',
      secretField: 'authToken',
      requiredBy: ['transport', 'lookup', 'status', 'inbound'],
    },
    {
      name: 'TWILIO_FROM',
      description: 'sender: an E.164 number or alphanumeric sender id of the account',
      secretField: 'from',
      requiredBy: ['transport'],
    },
  ],
  secretVariable: 'TWILIO_SECRET_ARN',
  inbound: 'webhook',
  webhook: {
    summary: 'Twilio status callbacks; X-Twilio-Signature verified',
    contentType: 'application/x-www-form-urlencoded',
    headers: [
      {
        name: 'X-Twilio-Signature',
        description:
          'base64 HMAC-SHA1, keyed with the auth token, of the URL called and the sorted form fields',
        pattern: '^[A-Za-z0-9+/]{27}=$',
      },
    ],
    query: [
      {
        name: 'ref',
        description:
          'the notice and channel the callback is about (<noticeId>-sms), on the StatusCallback URL our send gives Twilio; absent on callbacks a Messaging Service sends to its own URL (answered 200, counted as unmatched)',
        pattern: '^ntc_[a-z2-7]{26}-sms$',
      },
    ],
    body: {
      type: 'object',
      description: 'the status callback form; every field is text',
      required: ['MessageSid', 'MessageStatus'],
      properties: {
        MessageSid: { type: 'string', pattern: '^[A-Z]{2}[0-9a-fA-F]{32}$' },
        SmsSid: { type: 'string' },
        MessageStatus: {
          type: 'string',
          description:
            'accepted, queued, sending, sent (Twilio holds it), delivered, read, undelivered, failed; others are acknowledged and ignored',
        },
        SmsStatus: { type: 'string' },
        ErrorCode: {
          type: 'string',
          description: 'with undelivered and failed: the reason (30005 unknown number …)',
        },
        AccountSid: { type: 'string' },
        From: { type: 'string' },
        To: { type: 'string' },
        ApiVersion: { type: 'string' },
      },
      additionalProperties: { type: 'string' },
    },
    unsignedStatus: 403,
    refusedStatus: 403,
  },
  capabilities: {
    idempotencyKey: false,
    lookup: true,
    statusPull: true,
    batchSend: false,
    suppressionSync: false,
    operatorActions: true,
  },
} as const satisfies ProviderDescriptor;
