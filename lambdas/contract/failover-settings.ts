/**
 * Provider failover's settings (docs/architecture.md §"Provider failover"), in a module of their
 * own: spread into ./settings.ts `OPERATOR_SETTINGS` (deploy keys `emailFallbackProvider` /
 * `smsFallbackProvider`), named per channel in {@link FALLBACK_PROVIDER_SETTINGS}.
 */

const fallbackDescription = (channel: 'email' | 'sms', primary: string) =>
  `second provider module of the ${channel} channel (an id of lambdas/providers/registry.ts, serving ${channel}, ` +
  `not ${primary}'s): an attempt goes to it only after ${primary}'s provider proved it does not hold the message ` +
  '(connection refused, DNS or TLS failure before the request, or our account refused: 401/403, suspended, ' +
  'spend limit, credit); never after a timeout or another ambiguous answer. Each new notice tries the primary ' +
  'first. Unset: no failover';

export const FAILOVER_SETTINGS = {
  EMAIL_FALLBACK_PROVIDER: { kind: 'text', description: fallbackDescription('email', 'EMAIL_PROVIDER') },
  SMS_FALLBACK_PROVIDER: { kind: 'text', description: fallbackDescription('sms', 'SMS_PROVIDER') },
} as const;

/** Each channel's fallback variable, named once. */
export const FALLBACK_PROVIDER_SETTINGS = {
  email: 'EMAIL_FALLBACK_PROVIDER',
  sms: 'SMS_FALLBACK_PROVIDER',
} as const satisfies Readonly<Record<'email' | 'sms', keyof typeof FAILOVER_SETTINGS>>;
