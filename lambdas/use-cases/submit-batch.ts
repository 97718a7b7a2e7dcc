import type { Channel } from '../domain/channel.ts';
import type { IntentQueue, IntentRef } from '../ports/intent-queue.port.ts';
import type { IntakeDependencies } from './dependencies.ts';

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
