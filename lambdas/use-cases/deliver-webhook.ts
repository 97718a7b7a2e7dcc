import { webhookRetry } from '../domain/outcome-event.ts';
import type { WebhookAnswer, WebhookMessage, WebhookPoster } from '../ports/outcome-sink.port.ts';

/** What became of a queued webhook in this invocation. */
export type WebhookVerdict =
  | { readonly kind: 'delivered'; readonly answer: WebhookAnswer }
  /** Not due yet (a long delay is several queue hops): put back, no request made. */
  | { readonly kind: 'not_due'; readonly next: WebhookMessage }
  /** Not delivered: `next` is the same event, tried again at its `notBefore`. */
  | { readonly kind: 'retry'; readonly next: WebhookMessage; readonly answer: WebhookAnswer }
  /** The schedule is spent: to the dead-letter queue (alarm). */
  | { readonly kind: 'dead_letter'; readonly next: WebhookMessage; readonly answer: WebhookAnswer };

/** Where the verdict goes: the queue again (later), or its dead-letter queue. */
export interface WebhookRequeue {
  later(message: WebhookMessage, now: number): Promise<void>;
  deadLetter(message: WebhookMessage): Promise<void>;
}

/**
 * One try of a signed webhook. A 2xx is done and never sent again; anything else, a timeout
 * included, is queued again for the schedule's next try (`schedule[tries - 1]` ms after this one),
 * and once the schedule is spent dead-lettered. The same event, so the same `webhook-id`.
 * Throws only when the queue could not take the next try: the message itself is then handed again.
 */
export async function deliverWebhook(
  message: WebhookMessage,
  deps: {
    readonly poster: WebhookPoster;
    readonly queue: WebhookRequeue;
    readonly schedule: readonly number[];
    readonly now: () => number;
  },
): Promise<WebhookVerdict> {
  const now = deps.now();
  if (message.notBefore !== undefined && message.notBefore > now) {
    await deps.queue.later(message, now);
    return { kind: 'not_due', next: message };
  }
  const answer = await deps.poster.post(message.event);
  if (answer.kind === 'delivered') return { kind: 'delivered', answer };
  const tries = message.tries + 1;
  const retry = webhookRetry(tries, deps.schedule);
  if (retry.kind === 'dead_letter') {
    const next = { event: message.event, tries };
    await deps.queue.deadLetter(next);
    return { kind: 'dead_letter', next, answer };
  }
  const next = { event: message.event, tries, notBefore: deps.now() + retry.delayMs };
  await deps.queue.later(next, deps.now());
  return { kind: 'retry', next, answer };
}
