import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { intentMessageBody } from '../../lambdas/adapters/sqs/sqs-intent-queue.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { channelSenderHandler } from '../../lambdas/handlers/channel-sender.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { metrics } from '../../lambdas/wiring/observability.ts';
import { sqsRecord } from '../helpers/factories.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, ScriptedBatchTransport } from '../helpers/fakes.ts';

/**
 * The channel sender's SQS handler over the one dispatch path (docs/architecture.md §4): the
 * invocation's references go to `deliver` together, and each record is answered from its own
 * step through Powertools' partial batch response.
 */

const context = {} as Context;

const record = sqsRecord;

async function emails(w: FakeWorld, count: number, priority: Priority = 'standard'): Promise<IntentRef[]> {
  const refs: IntentRef[] = [];
  for (let i = 0; i < count; i++) {
    const result = await submitNotice(
      {
        ...EXAMPLE_REQUEST,
        eventId: `evt_h_${priority}_${i}`,
        recipient: { id: `pat_h_${i}`, email: `patient.h.${i}@example.com` },
        channels: ['email'],
        priority,
      },
      w.deps,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    refs.push(w.enqueued.at(-1)?.ref as IntentRef);
  }
  w.enqueued.length = 0;
  return refs;
}

function sender(batchMax: number) {
  const batch = new ScriptedBatchTransport('batchy');
  const base = fakeWorld({ channelProviders: { email: 'batchy', sms: 'twilio' } });
  const w = { ...base, deps: { ...base.deps, transports: { ...base.deps.transports, email: batch } } };
  const handler = channelSenderHandler('email', async () => ({ deps: w.deps, batchMax }));
  return { w, batch, handler };
}

describe('channel sender handler', () => {
  it('an invocation’s references ride in one provider call; every record answered, none failed', async () => {
    const { w, batch, handler } = sender(100);
    const refs = await emails(w, 4);
    const event: SQSEvent = { Records: refs.map((ref, i) => record(`m${i}`, intentMessageBody(ref))) };
    const response = await handler(event, context);
    expect(response.batchItemFailures).toEqual([]);
    expect(batch.calls).toHaveLength(1);
    expect(batch.calls[0]?.messages).toHaveLength(4);
    const states = await Promise.all(refs.map(async (r) => (await w.store.get(r.noticeId, 'email'))?.state));
    expect(states).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
  });

  it('a record whose row the ledger cannot read fails alone; a poison message is dropped, not retried', async () => {
    const { w, batch, handler } = sender(100);
    const refs = await emails(w, 3);
    const broken = refs[1] as IntentRef;
    const get = w.store.get.bind(w.store);
    w.store.get = async (noticeId, channel) => {
      if (noticeId === broken.noticeId) throw new Error('ledger unavailable');
      return get(noticeId, channel);
    };
    const event: SQSEvent = {
      Records: [
        ...refs.map((ref, i) => record(`m${i}`, intentMessageBody(ref))),
        record('poison', '{"noticeId": 42}'),
      ],
    };
    const response = await handler(event, context);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    // The other two still went in one call.
    expect(batch.calls.map((c) => c.messages.length)).toEqual([2]);
  });

  it('every record failing is a failed invocation (Powertools: the whole batch comes back)', async () => {
    const { w, handler } = sender(100);
    const refs = await emails(w, 2);
    w.store.get = async () => {
      throw new Error('ledger unavailable');
    };
    const event: SQSEvent = { Records: refs.map((ref, i) => record(`m${i}`, intentMessageBody(ref))) };
    await expect(handler(event, context)).rejects.toThrow(/All records failed/);
  });

  it('with batchMax 1 each record is its own call, under its own key', async () => {
    const { w, batch, handler } = sender(1);
    const refs = await emails(w, 3, 'critical');
    const response = await handler(
      { Records: refs.map((ref, i) => record(`m${i}`, intentMessageBody(ref))) },
      context,
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(batch.calls).toHaveLength(0);
    expect(batch.sent.map((m) => m.idempotencyKey)).toEqual(refs.map((r) => `${r.noticeId}.email`));
  });
});

describe('channel sender handler: no silent waits', () => {
  it('each row a hold sends back is counted in Deferred_channel_held, and carries the hold', async () => {
    const { w, handler } = sender(100);
    const refs = await emails(w, 2);
    const until = w.clock.now() + 120_000;
    await w.store.closeGate('email', until, 'provider_throttled');
    (w.deps as { gate?: unknown }).gate = new SharedSendGate({
      store: w.store,
      clock: w.clock,
      gateCacheMs: 0,
    });
    const added = vi.spyOn(metrics, 'addMetric');
    try {
      const event: SQSEvent = { Records: refs.map((ref, i) => record(`d${i}`, intentMessageBody(ref))) };
      expect((await handler(event, context)).batchItemFailures).toEqual([]);
      expect(added.mock.calls.filter(([name]) => name === 'Deferred_channel_held')).toEqual([
        ['Deferred_channel_held', 'Count', 1],
        ['Deferred_channel_held', 'Count', 1],
      ]);
    } finally {
      added.mockRestore();
    }
    for (const ref of refs) {
      expect((await w.store.get(ref.noticeId, 'email'))?.transitions.at(-1)).toMatchObject({
        reason: 'channel_held',
        detail: `batchy held the channel: provider_throttled until ${new Date(until).toISOString()}`,
      });
    }
  });
});

describe('channel sender handler: provider failover', () => {
  it('a failover is counted in ProviderFailovers; the failed-over row then rides its own call to the fallback', async () => {
    const { w, batch, handler } = sender(100);
    const fallback = new ScriptedBatchTransport('fallbacky');
    (w.deps as { fallbackTransports?: unknown }).fallbackTransports = { email: fallback };
    const refs = await emails(w, 3);
    // The batch call to the primary: the second row's answer proves it never got there.
    batch.batchScript.push((b) =>
      b.messages.map((m, i) =>
        i === 1
          ? { kind: 'retryable', code: 'connection_refused', throttled: false }
          : { kind: 'accepted', receiptId: `p-${m.correlationId}` },
      ),
    );
    const added = vi.spyOn(metrics, 'addMetric');
    try {
      const event: SQSEvent = { Records: refs.map((ref, i) => record(`f${i}`, intentMessageBody(ref))) };
      expect((await handler(event, context)).batchItemFailures).toEqual([]);
      expect(added.mock.calls.filter(([name]) => name === 'ProviderFailovers')).toEqual([
        ['ProviderFailovers', 'Count', 1],
      ]);
    } finally {
      added.mockRestore();
    }
    // Redelivered with a row of the primary: the two go in separate calls, one per provider.
    const more = await emails(w, 1, 'bulk');
    const again = [refs[1] as IntentRef, ...more];
    await handler({ Records: again.map((ref, i) => record(`g${i}`, intentMessageBody(ref))) }, context);
    // One row per provider in this invocation: each a call of one (`send`), the failed-over one to the fallback.
    expect(fallback.sent.map((m) => m.correlationId)).toEqual([`${refs[1]?.noticeId}-email`]);
    expect(batch.sent.map((m) => m.correlationId)).toEqual([`${more[0]?.noticeId}-email`]);
    expect((await w.store.get(refs[1]?.noticeId as string, 'email'))?.provider).toBe('fallbacky');
    expect((await w.store.get(more[0]?.noticeId as string, 'email'))?.provider).toBe('batchy');
  });
});
