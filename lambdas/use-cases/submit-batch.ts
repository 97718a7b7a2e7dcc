import type { Channel } from '../domain/channel.ts';
import type { IntentQueue, IntentRef } from '../ports/intent-queue.port.ts';
import type { IntakeDependencies } from './dependencies.ts';
import { forEachLimited } from './limited.ts';

/** SQS takes at most ten messages per SendMessageBatch. */
export const ENQUEUE_CHUNK = 10;

/**
 * Runs several intakes (a batch request's items) with their queue messages grouped: a channel's
 * references go out as soon as ten have gathered, and the rest once every item is answered —
 * one SendMessageBatch per ten notices instead of one per notice, without holding the early
 * items back until the whole batch is done. Each item still gets exactly the answer it would
 * get alone.
 *
 * A failed send loses nothing: an item is answered only after its rows are durable, and a
 * reserved row whose message never arrives is re-enqueued by the reconciler after
 * SEND_LEASE_MS — the same path that covers a failed enqueue in `submitNotice`.
 */
export async function withCoalescedEnqueue<T, D extends Pick<IntakeDependencies, 'queue'>>(
  deps: D,
  run: (deps: D) => Promise<T>,
): Promise<{ readonly result: T; readonly enqueued: number; readonly enqueueFailed: boolean }> {
  const gathering = new Map<Channel, IntentRef[]>();
  const sends: Promise<boolean>[] = [];
  let enqueued = 0;
  const send = (refs: IntentRef[]) => {
    sends.push(
      deps.queue.enqueue(refs).then(
        () => {
          enqueued += refs.length;
          return true;
        },
        // The rows are durable and reserved; the reconciler re-enqueues them. Failing the
        // batch here would make the caller resubmit into duplicates for nothing.
        () => false,
      ),
    );
  };
  const grouping: IntentQueue = {
    enqueue: async (refs, options) => {
      // Delayed messages (retries) are not intake's; pass them through untouched.
      if (options?.delayMs) return deps.queue.enqueue(refs, options);
      for (const ref of refs) {
        const pending = [...(gathering.get(ref.channel) ?? []), ref];
        if (pending.length < ENQUEUE_CHUNK) {
          gathering.set(ref.channel, pending);
        } else {
          gathering.delete(ref.channel);
          send(pending);
        }
      }
    },
  };
  const result = await run({ ...deps, queue: grouping });
  for (const rest of gathering.values()) send(rest);
  const outcomes = await Promise.all(sends);
  return { result, enqueued, enqueueFailed: outcomes.includes(false) };
}

/**
 * Sends the watches of a batch request's items ahead of their intakes, ten per SendMessageBatch
 * instead of one request per notice (docs/table-design.md "Watched rows"); an item's own watch then
 * finds its rows' sent and sends nothing. A chunk that failed is sent again by its items, each on
 * its own. Sent ahead, a watch may fire before its item's reserve (a long batch, a short delay):
 * the watch then looks once more (lambdas/use-cases/watch-rows.ts `look_again`).
 */
export async function withWatchesAhead<D extends Pick<IntakeDependencies, 'watch'>>(
  deps: D,
  refs: readonly IntentRef[],
): Promise<D> {
  const { watch } = deps;
  if (!watch || refs.length === 0) return deps;
  const key = (ref: IntentRef) => `${ref.noticeId}|${ref.channel}`;
  const chunks: IntentRef[][] = [];
  for (let i = 0; i < refs.length; i += ENQUEUE_CHUNK) chunks.push(refs.slice(i, i + ENQUEUE_CHUNK));
  const sent = new Set<string>();
  await forEachLimited(chunks, async (chunk) => {
    await watch.watch(chunk);
    for (const ref of chunk) sent.add(key(ref));
  });
  return {
    ...deps,
    watch: {
      delayMs: watch.delayMs,
      watch: async (mine) => {
        const rest = mine.filter((ref) => !sent.has(key(ref)));
        if (rest.length > 0) await watch.watch(rest);
      },
    },
  };
}
