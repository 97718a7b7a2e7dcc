import { describe, expect, it } from 'vitest';
import type { IntentQueue, IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import { withCoalescedEnqueue } from '../../lambdas/use-cases/submit-batch.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

function recordingQueue(options: { fail?: boolean } = {}) {
  const calls: { refs: IntentRef[]; delayMs?: number | undefined }[] = [];
  const queue: IntentQueue = {
    enqueue: async (refs, opts) => {
      calls.push({ refs: [...refs], delayMs: opts?.delayMs });
      if (options.fail) throw new Error('queue unavailable');
    },
  };
  return { queue, calls };
}

const requests = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ ...EXAMPLE_REQUEST, eventId: `evt_batch_${i}` }));

describe('withCoalescedEnqueue', () => {
  it('sends the new intents ten per enqueue and per channel, replays excluded', async () => {
    // Prepare: one of the 25 notices is already recorded (and was enqueued then)
    const { queue, calls } = recordingQueue();
    const world = fakeWorld({ queue });
    const items = requests(25);
    await submitNotice(items[3] as (typeof items)[number], world.deps);
    calls.length = 0;

    // Act
    const { result, enqueued, enqueueFailed } = await withCoalescedEnqueue(world.deps, (deps) =>
      Promise.all(items.map((item) => submitNotice(item, deps))),
    );

    // Assess
    expect(result.map((r) => (r.kind === 'recorded' ? r.created : r.kind))).toEqual(
      items.map((_, i) => i !== 3),
    );
    expect(enqueueFailed).toBe(false);
    expect(enqueued).toBe(48);
    expect(calls.map((call) => call.refs.length).sort((a, b) => a - b)).toEqual([4, 4, 10, 10, 10, 10]);
    for (const call of calls) expect(new Set(call.refs.map((ref) => ref.channel)).size).toBe(1);
    const sent = calls.flatMap((call) => call.refs);
    expect(new Set(sent.map((ref) => `${ref.noticeId}/${ref.channel}`)).size).toBe(48);
    const replayed = result[3];
    expect(sent.some((ref) => replayed?.kind === 'recorded' && ref.noticeId === replayed.noticeId)).toBe(
      false,
    );
  });

  it('does not hold the first ten back until the whole batch is answered', async () => {
    // Prepare
    const { queue, calls } = recordingQueue();
    const world = fakeWorld({ queue });
    const items = requests(15).map((item) => ({ ...item, channels: ['sms'] as ('email' | 'sms')[] }));
    let sentBeforeTheLastItems = 0;

    // Act
    await withCoalescedEnqueue(world.deps, async (deps) => {
      for (const item of items.slice(0, 10)) await submitNotice(item, deps);
      sentBeforeTheLastItems = calls.length;
      for (const item of items.slice(10)) await submitNotice(item, deps);
    });

    // Assess
    expect(sentBeforeTheLastItems).toBe(1);
    expect(calls.map((call) => call.refs.length)).toEqual([10, 5]);
  });

  it('a failed enqueue still answers every item; the rows stay reserved for the reconciler', async () => {
    // Prepare
    const { queue } = recordingQueue({ fail: true });
    const world = fakeWorld({ queue });

    // Act
    const { result, enqueueFailed } = await withCoalescedEnqueue(world.deps, (deps) =>
      Promise.all(requests(3).map((item) => submitNotice(item, deps))),
    );

    // Assess
    expect(enqueueFailed).toBe(true);
    expect(result.map((r) => r.kind)).toEqual(['recorded', 'recorded', 'recorded']);
    expect([...world.store.intents.values()].map((row) => row.state)).toEqual(Array(6).fill('reserved'));
  });

  it('passes delayed messages through at once: they are retries, not intake', async () => {
    // Prepare
    const { queue, calls } = recordingQueue();
    const world = fakeWorld({ queue });
    const ref: IntentRef = { noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa', channel: 'sms' };

    // Act
    await withCoalescedEnqueue(world.deps, async (deps) => {
      await deps.queue.enqueue([ref], { delayMs: 5_000 });
      expect(calls).toEqual([{ refs: [ref], delayMs: 5_000 }]);
    });

    // Assess: nothing held back to flush
    expect(calls).toHaveLength(1);
  });
});
