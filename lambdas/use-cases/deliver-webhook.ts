import { type OutcomeEvent, webhookRetry } from '../domain/outcome-event.ts';
import type { WebhookAnswer, WebhookPoster } from '../ports/outcome-sink.port.ts';

/** What to do with a queued webhook after this attempt. */
export type WebhookVerdict =
  | { readonly kind: 'delivered'; readonly answer: WebhookAnswer }
  /** Hide the message for `delayMs`, then try again. */
  | { readonly kind: 'retry'; readonly delayMs: number; readonly answer: WebhookAnswer }
  /** The schedule is spent: let the queue move it to its dead-letter queue (alarm). */
  | { readonly kind: 'dead_letter'; readonly answer: WebhookAnswer };

/**
 * One attempt of a signed webhook (`attempt` counts this one: 1 for the first). A 2xx is done and
 * never sent again; anything else, a timeout included, is retried after the schedule's next delay,
 * and once the schedule is spent dead-lettered.
 */
export async function deliverWebhook(
  event: OutcomeEvent,
  attempt: number,
  poster: WebhookPoster,
  schedule: readonly number[],
): Promise<WebhookVerdict> {
  const answer = await poster.post(event);
  if (answer.kind === 'delivered') return { kind: 'delivered', answer };
  const next = webhookRetry(attempt, schedule);
  return next.kind === 'retry' ? { kind: 'retry', delayMs: next.delayMs, answer } : { ...next, answer };
}
