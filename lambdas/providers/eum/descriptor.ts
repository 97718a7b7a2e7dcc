import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * AWS End User Messaging SMS (`pinpoint-sms-voice-v2`, SendTextMessage) through the AWS SDK with
 * one attempt per call. No idempotency key and no API that looks a sent message up: an ambiguous
 * send is settled only by an event carrying its `Context` (the service publishes delivery events
 * to EventBridge), or by UNKNOWN_POLICY after the grace period. The endpoint comes from the SDK's
 * own `AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2`; credentials are the function's IAM role.
 */
export const descriptor = {
  id: 'eum',
  title: 'AWS End User Messaging SMS',
  channels: ['sms'],
  settings: [
    {
      name: 'EUM_ORIGINATION_IDENTITY',
      description: 'origination identity: a phone number, pool or sender id (id or ARN) of the account',
      requiredBy: ['transport'],
    },
    {
      name: 'EUM_CONFIGURATION_SET',
      description: 'configuration set the messages are sent with (its settings and event destinations)',
    },
    {
      name: 'EUM_OPT_OUT_LIST',
      description: 'opt-out list operator suppressions are mirrored into (PutOptedOutNumber)',
      default: 'Default',
    },
  ],
  inbound: 'eventbridge',
  capabilities: {
    idempotencyKey: false,
    lookup: false,
    statusPull: false,
    batchSend: false,
    suppressionSync: true,
    operatorActions: true,
  },
} as const satisfies ProviderDescriptor;

/** How a text message carries its intent: the transport sets it, the inbound facet and the CDK rule read it. */
/**
 * The `Context` key of every message: the service copies `Context` into each of the message's
 * events, which is how an event finds its intent (even after a timeout that left no MessageId).
 */
export const EUM_INTENT_CONTEXT_KEY = 'notice_intent';

/** EventBridge: where the service publishes text message events. */
export const EUM_EVENT_SOURCE = 'aws.sms-voice';
export const EUM_TEXT_EVENT_DETAIL_TYPE = 'Text Message Delivery Status Updated';
