import { describe, expect, it } from 'vitest';
import { deliver, deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, ScriptedBatchTransport } from '../helpers/fakes.ts';

function batchWorld(): FakeWorld & { batch: ScriptedBatchTransport } {
  const batch = new ScriptedBatchTransport('batchy');
  const world = fakeWorld({
    channelProviders: { email: 'batchy', sms: 'twilio' },
  });
  const deps = { ...world.deps, transports: { ...world.deps.transports, email: batch } };
  return { ...world, deps, email: batch, batch };
}

async function notices(world: FakeWorld, count: number, tag = 'b'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const result = await submitNotice(
      {
        ...EXAMPLE_REQUEST,
        eventId: `evt_${tag}_${i}`,
        recipient: { id: 'pat_1042', email: `patient.${i}@example.com` },
        channels: ['email'],
      },
      world.deps,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    ids.push(result.noticeId);
  }
  return ids;
}

const refs = (ids: readonly string[]) => ids.map((noticeId) => ({ noticeId, channel: 'email' as const }));

describe('deliver: provider calls of many rows', () => {
  it('one provider call for the batch; every member claimed with the batch id, recorded before the call; one result per row', async () => {
    const world = batchWorld();
    const ids = await notices(world, 5);
    const seen: string[] = [];
    world.batch.onCall = async (call) => {
      // The record exists at the moment of the call, listing the members in the call's order.
      const first = await world.store.get(ids[0] as string, 'email');
      const record = await world.store.getBatch(first?.batch as string);
      expect(record?.members.map((m) => m.noticeId)).toEqual(ids);
      expect(record?.idempotencyKey).toBe(call.idempotencyKey);
      for (const id of ids) seen.push((await world.store.get(id, 'email'))?.state as string);
    };
    const steps = await deliver(refs(ids), world.deps, { maxBatch: 100 });
    expect(world.batch.calls).toHaveLength(1);
    expect(world.batch.sent).toHaveLength(0);
    expect(seen).toEqual(ids.map(() => 'sending'));
    expect(steps.map((s) => (s.kind === 'recorded' ? s.state : s.kind))).toEqual(ids.map(() => 'accepted'));
    for (const [i, id] of ids.entries()) {
      const row = await world.store.get(id, 'email');
      expect(row?.providerReceiptId).toBe(`1-${i}-${id}-email`);
      expect(row?.batch).toBeUndefined();
      expect(row?.transitions.map((t) => t.reason)).toEqual(['intake', 'claimed', 'provider_accepted']);
    }
    // The call carries the rows' own messages, in order, under the batch's key.
    expect(world.batch.calls[0]?.messages.map((m) => m.correlationId)).toEqual(
      ids.map((id) => `${id}-email`),
    );
    expect(world.batch.calls[0]?.idempotencyKey).toMatch(/^batch\.bat_[a-z2-7]{26}$/);
  });

  it('per-item errors settle only their rows; the rest are accepted', async () => {
    const world = batchWorld();
    const ids = await notices(world, 4);
    world.batch.batchScript.push((call) =>
      call.messages.map((_m, i) =>
        i === 1
          ? { kind: 'rejected', code: 'item_invalid', permanent: true }
          : { kind: 'accepted', receiptId: `id-${i}` },
      ),
    );
    await deliver(refs(ids), world.deps, { maxBatch: 100 });
    const states = await Promise.all(ids.map(async (id) => (await world.store.get(id, 'email'))?.state));
    expect(states).toEqual(['accepted', 'failed', 'accepted', 'accepted']);
    expect((await world.store.get(ids[1] as string, 'email'))?.transitions.at(-1)).toMatchObject({
      reason: 'provider_rejected',
      detail: 'item_invalid',
    });
  });

  it('only rows that can be claimed ride in the call: sent, suppressed, repeated and claimed-elsewhere rows stay out', async () => {
    const world = batchWorld();
    const ids = await notices(world, 4);
    // Row 0 already accepted; row 1 suppressed; row 2 appears twice in the SQS batch.
    await deliverIntent(
      { noticeId: ids[0] as string, channel: 'email' },
      { ...world.deps, transports: { email: world.email } },
    );
    const row1 = await world.store.get(ids[1] as string, 'email');
    await world.store.appendSuppression(
      { channel: 'email', fingerprint: row1?.destination.fingerprint as string, masked: 'x' },
      { action: 'suppress', reason: 'hard_bounce', source: 'provider', actor: 'test', at: 0 },
    );
    const steps = await deliver(refs([ids[0], ids[1], ids[2], ids[2], ids[3]] as string[]), world.deps, {
      maxBatch: 100,
    });
    expect(world.batch.calls).toHaveLength(1);
    expect(world.batch.calls[0]?.messages.map((m) => m.correlationId)).toEqual([
      `${ids[2]}-email`,
      `${ids[3]}-email`,
    ]);
    expect(steps.map((s) => (s.kind === 'left' ? s.why : s.kind === 'recorded' ? s.state : s.kind))).toEqual([
      'not_claimable',
      'suppressed',
      'accepted',
      'repeated_in_batch',
      'accepted',
    ]);
  });

  it('a timeout makes every member unknown; the reconciler asks about that exact call, rebuilt from the record', async () => {
    const world = batchWorld();
    const ids = await notices(world, 3);
    world.batch.batchScript.push((call) => call.messages.map(() => ({ kind: 'ambiguous', code: 'timeout' })));
    await deliver(refs(ids), world.deps, { maxBatch: 100 });
    const rows = await Promise.all(ids.map((id) => world.store.get(id, 'email')));
    expect(rows.map((r) => r?.state)).toEqual(['unknown', 'unknown', 'unknown']);
    const batchId = rows[0]?.batch as string;
    expect(rows.every((r) => r?.batch === batchId)).toBe(true);

    world.lookupAnswers.push(...ids.map((_, i) => ({ kind: 'found' as const, receiptId: `replayed-${i}` })));
    world.clock.advance(1_000);
    await reconcile({
      ...world.deps,
      lookups: { ...world.deps.lookups, batchy: world.deps.lookups.ses as never },
    });
    expect(world.lookupQueries).toHaveLength(3);
    for (const query of world.lookupQueries) {
      expect(query.batch?.id).toBe(batchId);
      expect(query.batch?.messages).toEqual(world.batch.calls[0]?.messages);
      expect(query.batch?.idempotencyKey).toBe(world.batch.calls[0]?.idempotencyKey);
      expect(query.replay).toEqual(world.batch.calls[0]?.messages[query.batch?.index as number]);
    }
    expect(world.lookupQueries.map((q) => q.batch?.index).sort()).toEqual([0, 1, 2]);
    const after = await Promise.all(ids.map((id) => world.store.get(id, 'email')));
    expect(after.map((r) => r?.state)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(after.map((r) => r?.batch)).toEqual([undefined, undefined, undefined]);
  });

  it('a batch whose record was never written was never sent: its members are absent without asking the provider', async () => {
    const world = batchWorld();
    const ids = await notices(world, 2);
    const failing = {
      ...world.deps,
      store: Object.assign(Object.create(world.store), {
        recordBatch: async () => {
          throw new Error('ledger down');
        },
      }) as typeof world.store,
    };
    const steps = await deliver(refs(ids), failing, { maxBatch: 100 });
    expect(world.batch.calls).toHaveLength(0);
    // The members were told "not sent" at once: retry_scheduled, provably not accepted.
    expect(steps.map((s) => (s.kind === 'recorded' ? s.state : s.kind))).toEqual([
      'retry_scheduled',
      'retry_scheduled',
    ]);

    // And where even that write was lost (the process died first), the lookup finds no record.
    const more = await notices(world, 1, 'c');
    const row = await world.store.get(more[0] as string, 'email');
    const claimed = await world.store.apply({
      expected: { state: 'reserved', version: 1 },
      record: {
        seq: 2,
        at: world.clock.now(),
        from: 'reserved',
        to: 'sending',
        reason: 'claimed',
        attempt: 1,
      },
      next: {
        ...(row as NonNullable<typeof row>),
        state: 'sending',
        version: 2,
        attempts: 1,
        provider: 'batchy',
        batch: 'bat_neverrecordedaaaaaaaaaaaaaa',
        leaseOwner: 'dead',
        leaseExpiresAt: world.clock.now() + 1,
        transitions: [
          ...(row?.transitions ?? []),
          { seq: 2, at: world.clock.now(), from: 'reserved', to: 'sending', reason: 'claimed', attempt: 1 },
        ],
      },
    });
    expect(claimed.kind).toBe('applied');
    world.clock.advance(61_000);
    const lookups = { ...world.deps.lookups, batchy: world.deps.lookups.ses as never };
    await reconcile({ ...world.deps, lookups }); // lease expired → unknown
    await reconcile({ ...world.deps, lookups }); // unknown → lookup
    expect(world.lookupQueries).toHaveLength(0);
    const unknown = await world.store.get(more[0] as string, 'email');
    expect(unknown?.state).toBe('unknown');
    world.clock.advance(600_001);
    await reconcile({ ...world.deps, lookups });
    const settled = await world.store.get(more[0] as string, 'email');
    expect(settled?.state).toBe('retry_scheduled');
    expect(settled?.transitions.at(-1)).toMatchObject({ reason: 'reconciled_not_sent' });
    expect(settled?.transitions.at(-1)?.detail).toMatch(/was never recorded/);
  });

  it('operator_action_required holds the channel once per call, gives every member its attempt back, and escalates each durably', async () => {
    const world = batchWorld();
    const gate = new SharedSendGate({ store: world.store, clock: world.clock });
    const deps = { ...world.deps, gate, operatorHoldMs: 120_000 };
    const ids = await notices(world, 3);
    world.batch.batchScript.push((call) =>
      call.messages.map(() => ({ kind: 'operator_action_required', code: 'key_refused' })),
    );
    const steps = await deliver(refs(ids), deps, { maxBatch: 100 });
    expect(world.batch.calls).toHaveLength(1);
    for (const id of ids) {
      const row = await world.store.get(id, 'email');
      expect(row?.state).toBe('retry_scheduled');
      expect(row?.attempts).toBe(0);
      expect(row?.nextAttemptAt).toBe(world.clock.now() + 120_000);
      expect(row?.transitions.at(-1)).toMatchObject({ reason: 'operator_action_required', attempt: 1 });
    }
    expect(await world.store.readGate('email')).toBe(world.clock.now() + 120_000);
    // The rows' escalations are durable, one per row (the same marker as a single send's).
    expect(world.escalations.map((e) => e.reason)).toEqual(ids.map(() => 'operator_action_required'));
    expect(steps.every((s) => s.kind === 'recorded' && s.escalation === 'published')).toBe(true);

    // Held: the next messages wait behind the gate; no call, no further escalation.
    const later = await notices(world, 2, 'later');
    const held = await deliver(refs(later), deps, { maxBatch: 100 });
    expect(held.map((s) => s.kind)).toEqual(['deferred', 'deferred']);
    expect(world.batch.calls).toHaveLength(1);
    expect(world.escalations).toHaveLength(3);
  });

  it('chunks a larger queue batch into calls of at most maxBatch, one gate admission each', async () => {
    const world = batchWorld();
    const ids = await notices(world, 7);
    await deliver(refs(ids), world.deps, { maxBatch: 3 });
    expect(world.batch.calls.map((c) => c.messages.length)).toEqual([3, 3, 1]);
    expect(new Set(world.batch.calls.map((c) => c.idempotencyKey)).size).toBe(3);
  });

  it('with maxBatch 1, or a single ready row, rows are sent alone under their own keys', async () => {
    const world = batchWorld();
    const ids = await notices(world, 2);
    await deliver(refs(ids), world.deps, { maxBatch: 1 });
    expect(world.batch.calls).toHaveLength(0);
    expect(world.batch.sent.map((m) => m.idempotencyKey)).toEqual(ids.map((id) => `${id}.email`));
  });
});
