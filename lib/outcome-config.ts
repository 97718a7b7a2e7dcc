import { ConfigError } from '../lambdas/contract/config-error.ts';
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  MAX_WEBHOOK_RETRY_DELAY_MS,
  MIN_DEPLOYED_RETRY_SPAN_MS,
} from '../lambdas/contract/outcome-settings.ts';

/** What the stack builds outcome events from (lib/constructs/outcome-events.ts). */
export interface OutcomeConfig {
  readonly webhookUrl: string | undefined;
  readonly retryScheduleMs: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly eventBusName: string | undefined;
}

/**
 * The deployment's outcome settings, checked: each retry delay whole milliseconds within a day, the whole schedule at least a day (issue 23), the default schedule when none is given.
 */
export function outcomeConfig(
  c: {
    readonly outcomeWebhookUrl?: unknown;
    readonly outcomeWebhookRetryScheduleMs?: unknown;
    readonly outcomeWebhookTimeoutMs?: unknown;
    readonly outcomeEventBusName?: unknown;
  },
  source: string,
): OutcomeConfig {
  const given = (c.outcomeWebhookRetryScheduleMs as readonly string[] | undefined) ?? [];
  const retryScheduleMs = given.length > 0 ? given.map(Number) : [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS];
  if (retryScheduleMs.some((ms) => !Number.isInteger(ms) || ms < 0 || ms > MAX_WEBHOOK_RETRY_DELAY_MS)) {
    throw new ConfigError(
      `invalid ${source}: outcomeWebhookRetryScheduleMs must list whole milliseconds from 0 to ${MAX_WEBHOOK_RETRY_DELAY_MS} (24 h)`,
    );
  }
  const span = retryScheduleMs.reduce((sum, ms) => sum + ms, 0);
  if (span < MIN_DEPLOYED_RETRY_SPAN_MS) {
    throw new ConfigError(
      `invalid ${source}: outcomeWebhookRetryScheduleMs must retry for at least 24 h in all (${span} ms given)`,
    );
  }
  const text = (value: unknown) =>
    typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  return {
    webhookUrl: text(c.outcomeWebhookUrl),
    retryScheduleMs,
    webhookTimeoutMs: Number(c.outcomeWebhookTimeoutMs),
    eventBusName: text(c.outcomeEventBusName),
  };
}
