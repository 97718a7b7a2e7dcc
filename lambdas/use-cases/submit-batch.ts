import type { IntentQueue, IntentRef } from '../ports/intent-queue.port.ts';
import type { Dependencies } from './dependencies.ts';

/**
 * Runs several intakes (a batch request's items) with their queue messages held back and sent
 * together once every item has been answered: ten references per SendMessageBatch instead of
 * one request per notice. Each item still gets exactly the answer it would get alone.
 *
 * Holding the messages back loses nothing: an item is answered only after its rows are durable,
 * and a reserved row whose message never arrives is re-enqueued by the reconciler after
 * SEND_LEASE_MS — the same path that covers a failed enqueue in `submitNotice`.
 */
export async function withCoalescedEnqueue<T>(
  deps: Dependencies,
  run: (deps: Dependencies) => Promise<T>,
): Promise<{ readonly result: T; readonly enqueued: number; readonly enqueueFailed: boolean }> {
  const held: IntentRef[] = [];
  const holding: IntentQueue = {
    enqueue: async (refs, options) => {
      // Delayed messages (retries) are not intake's; pass them through untouched.
      if (options?.delayMs) return deps.queue.enqueue(refs, options);
      held.push(...refs);
    },
  };
  const result = await run({ ...deps, queue: holding });
  if (held.length === 0) return { result, enqueued: 0, enqueueFailed: false };
  try {
    await deps.queue.enqueue(held);
    return { result, enqueued: held.length, enqueueFailed: false };
  } catch {
    // The rows are durable and reserved; the reconciler re-enqueues them. Failing the whole
    // batch here would make the caller resubmit into duplicates for nothing.
    return { result, enqueued: 0, enqueueFailed: true };
  }
}
