import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * Amazon SES v2 (email). No idempotency key and no API to find a message by tag or recipient:
 * an ambiguous send is settled by its configuration set's events (Delivery, Bounce, Complaint …)
 * reaching the provider-events function through EventBridge, or by policy.
 * The endpoint comes from the SDK's own `AWS_ENDPOINT_URL_SESV2`.
 */
export const descriptor = {
  id: 'ses',
  title: 'Amazon SES v2',
  channels: ['email'],
  defaultFor: ['email'],
  settings: [
    {
      name: 'SES_FROM_ADDRESS',
      description: 'sender (From); its identity must be verified in SES',
      default: 'notices@example.com',
      requiredBy: ['transport'],
    },
    {
      name: 'SES_CONFIGURATION_SET',
      description: 'configuration set whose event destination publishes to EventBridge',
    },
  ],
  inbound: 'eventbridge',
  capabilities: {
    idempotencyKey: false,
    lookup: false,
    statusPull: false,
    batchSend: false,
    suppressionSync: false,
  },
} as const satisfies ProviderDescriptor;

/**
 * The SES events the configuration set publishes, one list read by the CDK binding (its event
 * destination's MatchingEventTypes and the rule's detail-types, lib/providers/ses/ses-events.ts)
 * and by the local stack's feeder (local/ses/event-feeder.ts), so the local stack sees what a
 * deployment sees. Each: SES's `eventType` in the event, its `matching` name in the
 * configuration set, its EventBridge `detail-type`.
 *
 * No Send: it proves only what SendEmail's answer already proved (SES took the message), and
 * would cost one invocation and one row read per e-mail. After an ambiguous SendEmail (a
 * timeout) every event below proves acceptance just as well: a report for a row in `unknown`
 * settles it as accepted first (lambdas/use-cases/apply-delivery-report.ts; docs/architecture.md
 * §10 "SES events").
 */
export const SES_PUBLISHED_EVENTS = [
  { eventType: 'Delivery', matching: 'delivery', detailType: 'Email Delivered' },
  { eventType: 'Bounce', matching: 'bounce', detailType: 'Email Bounced' },
  { eventType: 'Complaint', matching: 'complaint', detailType: 'Email Complaint Received' },
  { eventType: 'Reject', matching: 'reject', detailType: 'Email Rejected' },
  { eventType: 'DeliveryDelay', matching: 'deliveryDelay', detailType: 'Email Delivery Delayed' },
  { eventType: 'Rendering Failure', matching: 'renderingFailure', detailType: 'Email Rendering Failed' },
] as const;

export type SesPublishedEvent = (typeof SES_PUBLISHED_EVENTS)[number];
