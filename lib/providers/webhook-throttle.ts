import type { ProviderChannel } from '../../lambdas/contract/providers.ts';
import type { NoticeLedgerConfig } from '../config.ts';
import type { ProviderBinding } from './binding.ts';

/** A route's API Gateway throttle. */
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
 * provider posts at the configured send rates (docs/architecture.md §8, "Webhook throttles"):
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
