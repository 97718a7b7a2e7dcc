import type { ProviderDescriptor } from '../../contract/providers.ts';

/**
 * Amazon SES v2 (email). No idempotency key and no API to find a message by tag or recipient:
 * an ambiguous send is settled by its configuration set's events (Send, Delivery, Bounce,
 * Complaint …) reaching the provider-events function through EventBridge, or by policy.
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
