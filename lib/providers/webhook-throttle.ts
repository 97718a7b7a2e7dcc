import type { ProviderChannel } from '../../lambdas/contract/providers.ts';
import type { NoticeLedgerConfig } from '../config.ts';
import type { ProviderBinding } from './binding.ts';

/** A route's API Gateway throttle (rate: requests per second). */
export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * Twice the reports the configured send rate makes: a provider's reports come in waves (a carrier
 * hands back a batch of delivery receipts at once), and a report refused with 429 is a report
 * lost (an SMS provider may retry a callback once at most), so the row waits for the reconciler instead.
 */
export const CALLBACK_HEADROOM = 2;

/** API Gateway's default account throttle: no route may be given more. */
export const API_GATEWAY_ACCOUNT_LIMIT: Throttle = { rateLimit: 10_000, burstLimit: 5_000 };

/**
 * The throttle of each provider's webhook route (`POST /v1/provider-events/<id>`), from what the
 * provider posts at the configured send rates (docs/architecture.md §8, "Webhook throttles"); behind
 * the function URL, the same rates size the function's reserved concurrency (`webhookConcurrency`):
 *
 *   rate  = max(providerCallbackRateLimit, ⌈2 × events per message × messages/s⌉)
 *   burst = max(providerCallbackBurstLimit, 2 × rate)
 *
 * both at most API Gateway's account limit. Messages/s is the sum over the channels the provider
 * is selected for of `<channel>SendRatePerSecond` (for e-mail, calls/s times the messages one
 * batch call carries). A retained provider sends nothing new and a channel without a configured
 * rate has none to derive from: their routes keep the configured floor.
 */
export function webhookThrottles(
  config: Pick<NoticeLedgerConfig, 'providers' | 'channels' | 'api'>,
  bindings: readonly ProviderBinding[],
  /** Messages one provider call carries on each channel (e-mail batches: `emailEventSource`). */
  messagesPerCall: Readonly<Record<ProviderChannel, number>>,
): Readonly<Record<string, Throttle>> {
  const throttles: Record<string, Throttle> = {};
  for (const binding of bindings) {
    const id = binding.descriptor.id;
    if (binding.descriptor.inbound !== 'webhook') continue;
    const perMessage = binding.webhookEventsPerMessage;
    if (perMessage === undefined) {
      throw new Error(`provider ${id} receives webhooks but its binding declares no webhookEventsPerMessage`);
    }
    const messagesPerSecond = (['email', 'sms'] as const)
      .filter((channel) => config.providers[channel] === id)
      .reduce(
        (sum, channel) => sum + (config.channels[channel].sendRatePerSecond ?? 0) * messagesPerCall[channel],
        0,
      );
    const derived = Math.ceil(CALLBACK_HEADROOM * perMessage * messagesPerSecond);
    const rateLimit = Math.min(
      API_GATEWAY_ACCOUNT_LIMIT.rateLimit,
      Math.max(config.api.callbackRateLimit, derived),
    );
    const burstLimit = Math.min(
      API_GATEWAY_ACCOUNT_LIMIT.burstLimit,
      Math.max(config.api.callbackBurstLimit, 2 * rateLimit),
    );
    throttles[id] = { rateLimit, burstLimit };
  }
  return throttles;
}

/**
 * Seconds one webhook request may hold an execution: a cold start's share, the signature check and
 * the ledger writes. A warm request takes about a tenth of it, so a cap sized with it admits the
 * rate even while instances start, and several times the rate once they are warm.
 */
export const WEBHOOK_REQUEST_SECONDS = 0.5;

/** Lambda's default account concurrency, and the most the `reservedConcurrency` setting takes. */
export const LAMBDA_ACCOUNT_CONCURRENCY = 1_000;

/**
 * The reserved concurrency of the provider-events function where its own URL takes the webhooks
 * (./webhook-ingress.ts), in place of the routes' throttles: what those throttles would admit
 * (the sum of the providers' rates), each request held WEBHOOK_REQUEST_SECONDS, at most the
 * account's default 1 000. Unsigned floods then cost at most that many executions and cannot take
 * the account's concurrency from the senders; beyond it Lambda answers 429, as the route throttle
 * did (a provider's report refused so waits for the reconciler). The EventBridge events of the
 * AWS providers invoke the same function asynchronously: a throttled one is retried by
 * Lambda (up to six hours, then the function's dead-letter queue), so the cap delays them, never
 * loses them.
 */
export function webhookConcurrency(throttles: Readonly<Record<string, Throttle>>): number {
  const rate = Object.values(throttles).reduce((sum, t) => sum + t.rateLimit, 0);
  return Math.min(LAMBDA_ACCOUNT_CONCURRENCY, Math.max(1, Math.ceil(rate * WEBHOOK_REQUEST_SECONDS)));
}
