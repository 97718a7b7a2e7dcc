import type { Intent } from '../domain/intent.ts';
import type { OutcomeEvent } from '../domain/outcome-event.ts';

/**
 * Where outcome events go (docs/outcome-events.md): the event bus and the signed-webhook queue
 * (the archive reads the same change stream as a consumer of its own: docs/archive.md). A sink takes a
 * change's events in order and throws when it could not take them all; the stream then hands the
 * change again, and every sink gets it again (the same event ids: receivers deduplicate by id).
 */
export interface OutcomeSink {
  /** Names the sink in logs and metrics. */
  readonly name: string;
  publish(events: readonly OutcomeEvent[]): Promise<void>;
}

/** One change of a ledger row, as the table's change stream reports it. */
export interface LedgerChange {
  /** The stream's position of the change: what a partial failure names to be handed again. */
  readonly position: string;
  readonly oldImage?: Intent | undefined;
  readonly newImage?: Intent | undefined;
}

/** A message of the webhook queue: the event, the tries made so far, and when the next is due. */
export interface WebhookMessage {
  readonly event: OutcomeEvent;
  readonly tries: number;
  /** Epoch ms; absent: now. */
  readonly notBefore?: number | undefined;
}

/** Signs and posts one outcome event as a Standard Webhook. */
export interface WebhookPoster {
  post(event: OutcomeEvent): Promise<WebhookAnswer>;
}

/** What the receiver did with a webhook: a 2xx, another status, or no answer in time. */
export type WebhookAnswer =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly code: string };
