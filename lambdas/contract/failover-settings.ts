/**
 * Provider failover's settings (docs/architecture.md §"Provider failover"), in a module of their
 * own: spread into ./settings.ts `OPERATOR_SETTINGS` (deploy keys `emailFallbackProvider` /
 * `smsFallbackProvider`), named per channel in {@link FALLBACK_PROVIDER_SETTINGS}.
 */

const fallbackDescription = (channel: 'email' | 'sms', primary: string) =>
  `second ${channel} provider (a registered id, not ${primary}'s); an attempt fails over to it only after proof ` +
  'the primary does not hold the message (docs/architecture.md §"Provider failover"); unset: none';

export const FAILOVER_SETTINGS = {
  EMAIL_FALLBACK_PROVIDER: { kind: 'text', description: fallbackDescription('email', 'EMAIL_PROVIDER') },
  SMS_FALLBACK_PROVIDER: { kind: 'text', description: fallbackDescription('sms', 'SMS_PROVIDER') },
} as const;

/** Each channel's fallback variable, named once. */
export const FALLBACK_PROVIDER_SETTINGS = {
  email: 'EMAIL_FALLBACK_PROVIDER',
  sms: 'SMS_FALLBACK_PROVIDER',
} as const satisfies Readonly<Record<'email' | 'sms', keyof typeof FAILOVER_SETTINGS>>;
