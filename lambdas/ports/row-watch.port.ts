import type { IntentRef } from './intent-queue.port.ts';

/**
 * The watch (docs/table-design.md "Watched rows"): intake sends one delayed message per row before
 * it reserves the row, so that a row kept out of the open index while on the happy path is looked
 * at once more whatever happens to the process that reserved it.
 */
export interface RowWatch {
  /** How long after the send each watch fires (`INDEX_WATCH_DELAY_MS`; whole seconds, ≤ 15 min). */
  readonly delayMs: number;
  /** One delayed message per ref; resolves once every one is durable in the queue, else throws. */
  watch(refs: readonly IntentRef[]): Promise<void>;
}
