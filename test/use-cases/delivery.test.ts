import { describe, expect, it } from 'vitest';
import { ReportContendedError } from '../../lambdas/domain/errors.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { SharedSendGate, type SharedSendGateOptions } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { T0 } from '../helpers/factories.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

async function submitted(world = fakeWorld(), request = EXAMPLE_REQUEST) {
  const result = await submitNotice(request, world.deps);
  if (result.kind !== 'recorded') throw new Error(`expected recorded, got ${result.kind}`);
  return { world, noticeId: result.noticeId };
}

const reasons = async (world: ReturnType<typeof fakeWorld>, noticeId: string, channel: 'email' | 'sms') =>
  (await world.store.get(noticeId, channel))?.transitions.map((t) => t.reason);

describe('submitNotice', () => {
  it('records one reserved intent per channel, enqueues references only, and seals the rest', async () => {
    const { world, noticeId } = await submitted();
    expect(world.enqueued.map((e) => e.ref)).toEqual([
      { noticeId, channel: 'email' },
      { noticeId, channel: 'sms' },
    ]);
    const sms = await world.store.get(noticeId, 'sms');
    expect(sms).toMatchObject({
      state: 'reserved',
      destination: { masked: '+1******4567' },
      sms: { encoding: 'GSM-7', segments: 1 },
    });
    expect(JSON.stringify(sms)).not.toContain('5551234567');
    expect(JSON.stringify(sms)).not.toContain('Ada');
  });

  it('replays as a duplicate without enqueuing again; changed content is a conflict', async () => {
    const { world } = await submitted();
    const replay = await submitNotice(EXAMPLE_REQUEST, world.deps);
    expect(replay).toMatchObject({ kind: 'recorded', created: false });
    expect(world.enqueued).toHaveLength(2);
    const changed = await submitNotice({ ...EXAMPLE_REQUEST, variables: { firstName: 'Bob' } }, world.deps);
    expect(changed.kind).toBe('conflict');
  });

  it('rejects unknown templates, broken variables and past deadlines without writing', async () => {
    const world = fakeWorld();
    const cases = [
      { ...EXAMPLE_REQUEST, template: { id: 'lab-result-ready', version: 'v9' } },
      { ...EXAMPLE_REQUEST, variables: {} },
      { ...EXAMPLE_REQUEST, deadline: world.clock.now() - 1 },
    ];
    for (const request of cases) expect((await submitNotice(request, world.deps)).kind).toBe('invalid');
    expect(world.store.intents.size).toBe(0);
  });
});

describe('deliverIntent', () => {
  it('happy path: claim, one provider call, accepted with the receipt; a second message is left alone', async () => {
    const { world, noticeId } = await submitted();
    const result = await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    expect(result).toMatchObject({ kind: 'recorded', state: 'accepted' });
    expect(world.sms.sent).toHaveLength(1);
    expect(world.sms.sent[0]).toMatchObject({ to: '+15551234567', correlationId: `${noticeId}-sms` });
    expect(world.sms.sent[0]?.body).toContain('Ada');
    expect(await reasons(world, noticeId, 'sms')).toEqual(['intake', 'claimed', 'provider_accepted']);
    expect((await world.store.get(noticeId, 'sms'))?.envelope).toBeUndefined();

    expect(await deliverIntent({ noticeId, channel: 'sms' }, world.deps)).toMatchObject({
      kind: 'left',
      why: 'not_claimable',
    });
    expect(world.sms.sent).toHaveLength(1);
  });

  it('suppressed destinations never reach the transport', async () => {
    const { world, noticeId } = await submitted();
    const row = await world.store.get(noticeId, 'email');
    await world.store.appendSuppression(
      { channel: 'email', fingerprint: row?.destination.fingerprint as string, masked: 'x' },
      { action: 'suppress', reason: 'hard_bounce', source: 'provider', actor: 'test', at: 0 },
    );
    expect(await deliverIntent({ noticeId, channel: 'email' }, world.deps)).toMatchObject({
      state: 'suppressed',
      reason: 'on_suppression_list',
    });
    expect((await world.store.get(noticeId, 'email'))?.transitions.at(-1)?.detail).toBe('hard_bounce');
    expect(world.email.sent).toHaveLength(0);
  });

  it('a lifted suppression no longer stops the send', async () => {
    const { world, noticeId } = await submitted();
    const row = await world.store.get(noticeId, 'email');
    const target = {
      channel: 'email' as const,
      fingerprint: row?.destination.fingerprint as string,
      masked: 'x',
    };
    await world.store.appendSuppression(target, {
      action: 'suppress',
      reason: 'hard_bounce',
      source: 'provider',
      actor: 'ses',
      at: 0,
    });
    await world.store.appendSuppression(target, {
      action: 'lift',
      reason: 'lifted_by_operator',
      source: 'operator',
      actor: 'ops',
      at: 1,
    });
    expect(await deliverIntent({ noticeId, channel: 'email' }, world.deps)).toMatchObject({
      state: 'accepted',
    });
    expect(world.email.sent).toHaveLength(1);
  });

  it('throttling schedules the next attempt at Retry-After, and it runs only when due', async () => {
    const { world, noticeId } = await submitted();
    world.sms.script.push({ kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: 30_000 });
    await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    const row = await world.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'retry_scheduled', nextAttemptAt: world.clock.now() + 30_000 });
    expect(world.scheduled).toEqual([
      { ref: { noticeId, channel: 'sms' }, attempt: 2, at: world.clock.now() + 30_000 },
    ]);
    expect(await deliverIntent({ noticeId, channel: 'sms' }, world.deps)).toMatchObject({
      kind: 'left',
      why: 'not_due_yet',
    });
    world.clock.advance(30_000);
    expect(await deliverIntent({ noticeId, channel: 'sms' }, world.deps)).toMatchObject({
      state: 'accepted',
      attempt: 2,
    });
    expect(world.sms.sent).toHaveLength(2);
  });

  it('an ambiguous outcome becomes unknown and is never resent by a queue message', async () => {
    const { world, noticeId } = await submitted();
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    expect(await deliverIntent({ noticeId, channel: 'email' }, world.deps)).toMatchObject({ kind: 'left' });
    expect(world.email.sent).toHaveLength(1);
    expect(await reasons(world, noticeId, 'email')).toEqual(['intake', 'claimed', 'provider_timeout']);
  });

  it('attempts stop at MAX_ATTEMPTS with an escalation', async () => {
    const { world, noticeId } = await submitted();
    for (let i = 0; i < 4; i++) {
      world.sms.script.push({ kind: 'retryable', code: 'http_503', throttled: false });
      await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
      world.clock.advance(120_000);
    }
    expect(await world.store.get(noticeId, 'sms')).toMatchObject({ state: 'failed', attempts: 4 });
    expect(world.escalations).toMatchObject([{ noticeId, channel: 'sms', reason: 'attempts_exhausted' }]);
  });
});

describe('reconcile', () => {
  it('re-enqueues a reserved row whose message was lost, once per lease period', async () => {
    const { world, noticeId } = await submitted();
    world.enqueued.length = 0;
    world.clock.advance(30_000);
    await reconcile(world.deps);
    expect(world.enqueued).toHaveLength(0);
    world.clock.advance(31_000);
    const report = await reconcile(world.deps);
    expect(world.enqueued.map((e) => e.ref)).toEqual(
      expect.arrayContaining([
        { noticeId, channel: 'email' },
        { noticeId, channel: 'sms' },
      ]),
    );
    expect(report.openByState).toEqual({ reserved: 2 });
    expect(report.oldestUnresolvedAgeSeconds).toBe(61);
    await reconcile(world.deps);
    expect(world.enqueued).toHaveLength(2);
  });

  it('a sending row past its lease becomes unknown, then a lookup that finds it makes it accepted', async () => {
    const { world, noticeId } = await submitted();
    // A worker that claimed and died: claim by hand through the use case with a transport that hangs.
    world.sms.script.push({ kind: 'ambiguous', code: 'timeout' });
    const claimedRow = await world.store.get(noticeId, 'sms');
    if (!claimedRow) throw new Error('missing');
    await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    expect((await world.store.get(noticeId, 'sms'))?.state).toBe('unknown');
    world.lookupAnswers.push({ kind: 'found', receiptId: 'SM-found', detail: 'matched' });
    await reconcile(world.deps);
    const row = await world.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'accepted', providerReceiptId: 'SM-found' });
    expect(row?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
    ]);
    expect(world.lookupQueries[0]).toMatchObject({ destination: '+15551234567' });
    expect(world.sms.sent).toHaveLength(1);
  });

  it('an absent verdict only counts after the grace period, then schedules a deliberate retry', async () => {
    const { world, noticeId } = await submitted();
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    world.lookupAnswers.push({ kind: 'absent' });
    await reconcile(world.deps);
    expect((await world.store.get(noticeId, 'email'))?.state).toBe('unknown');
    world.clock.advance(600_000);
    world.lookupAnswers.push({ kind: 'absent', detail: 'complete listing' });
    await reconcile(world.deps);
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('retry_scheduled');
    expect(row?.transitions.at(-1)).toMatchObject({ reason: 'reconciled_not_sent', from: 'unknown' });
  });

  it('undecidable after the grace period escalates by default: still unknown, unresolved, waiting for a person', async () => {
    // Prepare: the send timed out; the provider cannot tell.
    const { world, noticeId } = await submitted();
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    const timedOutAt = world.clock.now();

    // Act: the grace period passes, then several more runs.
    world.clock.advance(600_001);
    const first = await reconcile(world.deps);
    const escalatedAt = world.clock.now();
    for (let i = 0; i < 3; i++) {
      world.clock.advance(60_000);
      await reconcile(world.deps);
    }

    // Assess: one escalation record and one event; the row stays unknown, in the gauges, unsent.
    const row = await world.store.get(noticeId, 'email');
    expect(row).toMatchObject({ state: 'unknown', escalatedAt, escalationPending: undefined });
    expect(row?.transitions.slice(-2)).toEqual([
      expect.objectContaining({ from: 'sending', to: 'unknown', reason: 'provider_timeout' }),
      expect.objectContaining({
        seq: 4,
        from: 'unknown',
        to: 'unknown',
        reason: 'unknown_escalated',
        attempt: 1,
        at: escalatedAt,
        detail: "outcome still unknown; waiting for an operator's resolution",
      }),
    ]);
    expect(world.escalations).toEqual([
      expect.objectContaining({
        noticeId,
        channel: 'email',
        seq: 4,
        reason: 'unknown_escalated',
        state: 'unknown',
      }),
    ]);
    expect(first).toMatchObject({ escalations: 1, escalationsPending: 0 });
    expect(first.openByState.unknown).toBe(1);
    expect(first.oldestUnresolvedAgeSeconds).toBeGreaterThanOrEqual(600);
    expect((await world.store.countOpen()).byState.unknown).toBe(1);
    expect(world.email.sent).toHaveLength(1);
    // Asked at the escalation and once more at the next run; then once per grace period, not every run.
    expect(world.lookupQueries).toHaveLength(2);
    expect(world.lookupQueries.at(-1)?.attemptEndedAt).toBe(timedOutAt);
  });

  it('an escalated unknown nobody resolves fails at its deadline (unknown_unresolved, escalated again)', async () => {
    const { world, noticeId } = await submitted(fakeWorld(), {
      ...EXAMPLE_REQUEST,
      channels: ['email'],
      deadline: T0 + 30 * 60_000,
    } as never);
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    for (let minute = 0; minute < 35; minute++) {
      world.clock.advance(60_000);
      await reconcile(world.deps);
    }
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('failed');
    expect(row?.transitions.slice(-2).map((t) => [t.from, t.to, t.reason])).toEqual([
      ['unknown', 'unknown', 'unknown_escalated'],
      ['unknown', 'failed', 'unknown_unresolved'],
    ]);
    expect(row?.transitions.at(-1)?.detail).toBe('outcome still unknown; unresolved by the deadline');
    // The deadline is when the failure is recorded: no later than one run after it.
    expect(row?.transitions.at(-1)?.at).toBeLessThanOrEqual(T0 + 31 * 60_000);
    expect(world.escalations.map((e) => e.reason)).toEqual(['unknown_escalated', 'unknown_unresolved']);
    expect(world.email.sent).toHaveLength(1);
  });

  it('UNKNOWN_POLICY=fail keeps the old behaviour: failed and escalated once the grace is over', async () => {
    const { world, noticeId } = await submitted(fakeWorld({ unknownPolicy: 'fail' }));
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    world.clock.advance(600_001);
    await reconcile(world.deps);
    expect(await world.store.get(noticeId, 'email')).toMatchObject({
      state: 'failed',
      escalatedAt: undefined,
    });
    expect(await reasons(world, noticeId, 'email')).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'unknown_unresolved',
    ]);
    expect(world.escalations).toMatchObject([{ reason: 'unknown_unresolved', state: 'failed' }]);
    expect(world.email.sent).toHaveLength(1);
  });

  it("an unknown's escalation is durable: a failed publish is retried next run, and the row stays open", async () => {
    let failing = true;
    const published: string[] = [];
    const world = fakeWorld({
      escalations: {
        publish: async (e) => {
          if (failing) throw new Error('bus down');
          published.push(`${e.reason}#${e.seq}`);
        },
      },
    });
    const { noticeId } = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['email'] } as never);
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    world.clock.advance(600_001);
    const failed = await reconcile(world.deps);
    expect(failed).toMatchObject({ escalations: 0, escalationFailures: 1, escalationsPending: 1 });
    expect(await world.store.get(noticeId, 'email')).toMatchObject({
      state: 'unknown',
      escalationPending: true,
    });

    failing = false;
    world.clock.advance(60_000);
    const retried = await reconcile(world.deps);
    expect(retried).toMatchObject({ escalations: 1, escalationsPending: 0 });
    expect(published).toEqual(['unknown_escalated#4']);
    const row = await world.store.get(noticeId, 'email');
    expect(row).toMatchObject({ state: 'unknown', escalationPending: undefined });
    expect(row?.dueAt).toBeDefined();
    expect(row?.transitions).toHaveLength(4);
  });

  it('fails rows past their deadline with an escalation', async () => {
    const { world, noticeId } = await submitted(fakeWorld(), {
      ...EXAMPLE_REQUEST,
      deadline: Date.parse('2026-11-30T10:05:00Z'),
    } as never);
    world.clock.advance(10 * 60_000);
    await reconcile(world.deps);
    expect((await world.store.get(noticeId, 'email'))?.transitions.at(-1)).toMatchObject({
      to: 'failed',
      reason: 'deadline_exceeded',
    });
    expect(world.escalations).toHaveLength(2);
  });
});

describe('applyDeliveryReport', () => {
  /** A notice whose SMS the provider accepted, and the provider's report on it (kind to add). */
  async function acceptedSms() {
    const { world, noticeId } = await submitted();
    await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    const receiptId = (await world.store.get(noticeId, 'sms'))?.providerReceiptId as string;
    const report = {
      ref: { noticeId, channel: 'sms' as const },
      provider: 'twilio',
      receiptId,
      at: world.clock.now() + 5,
    };
    return { world, noticeId, report };
  }

  it('moves accepted to delivered; duplicates and out-of-order reports change nothing more', async () => {
    const { world, noticeId, report } = await acceptedSms();
    expect(await applyDeliveryReport({ ...report, kind: 'delivered' }, world.deps)).toMatchObject({
      kind: 'applied',
      state: 'delivered',
    });
    expect(await applyDeliveryReport({ ...report, kind: 'delivered' }, world.deps)).toMatchObject({
      kind: 'ignored',
    });
    expect(await applyDeliveryReport({ ...report, kind: 'accepted' }, world.deps)).toMatchObject({
      kind: 'ignored',
    });
    expect(await reasons(world, noticeId, 'sms')).toEqual([
      'intake',
      'claimed',
      'provider_accepted',
      'delivery_reported',
    ]);
  });

  it('a report that keeps losing its write to other writers is thrown for a retry, never dropped', async () => {
    const accepted = await acceptedSms();
    const { world, noticeId } = accepted;
    const report = { ...accepted.report, kind: 'delivered' as const };
    // Every conditional write loses (another writer moved the row each time).
    let writes = 0;
    const contended = {
      ...world.deps,
      store: Object.assign(Object.create(world.store) as typeof world.store, {
        apply: async () => {
          writes += 1;
          return { kind: 'stale' as const };
        },
      }),
    };
    await expect(applyDeliveryReport(report, contended)).rejects.toBeInstanceOf(ReportContendedError);
    expect(writes).toBeGreaterThan(1);
    expect((await world.store.get(noticeId, 'sms'))?.state).toBe('accepted');
    // Its retry, once the row holds still, is applied.
    expect(await applyDeliveryReport(report, world.deps)).toMatchObject({
      kind: 'applied',
      state: 'delivered',
    });
  });

  it('a report for an unknown row settles it as accepted first; a hard bounce suppresses the destination', async () => {
    const { world, noticeId } = await submitted();
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    const result = await applyDeliveryReport(
      {
        ref: { noticeId, channel: 'email' },
        provider: 'ses',
        receiptId: 'ses-1',
        kind: 'failed',
        failure: 'hard_bounce',
        code: 'Permanent/General',
        suppress: true,
        at: world.clock.now() + 1000,
      },
      world.deps,
    );
    expect(result).toMatchObject({ kind: 'applied', state: 'failed', records: 2 });
    expect(await reasons(world, noticeId, 'email')).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
      'hard_bounce',
    ]);
    const row = await world.store.get(noticeId, 'email');
    expect(await world.store.getSuppression('email', row?.destination.fingerprint as string)).toMatchObject({
      latest: {
        action: 'suppress',
        reason: 'hard_bounce',
        source: 'provider',
        actor: 'ses',
        code: 'Permanent/General',
      },
    });
  });
});

/** A gate on the fake world's store and clock; its sleeps advance the clock and are recorded. */
function gateOn(world: ReturnType<typeof fakeWorld>, options: Partial<SharedSendGateOptions> = {}) {
  const sleeps: number[] = [];
  const gate = new SharedSendGate({
    store: world.store,
    clock: world.clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      world.clock.advance(ms);
    },
    ...options,
  });
  return { gate, sleeps };
}

describe('shared throttle gate', () => {
  it('a 429 closes the gate for the channel: the next worker defers its message instead of calling the provider', async () => {
    const world = fakeWorld();
    const { gate } = gateOn(world, { gateCacheMs: 0 });
    const deps = { ...world.deps, gate };
    const first = await submitNotice(EXAMPLE_REQUEST, deps);
    const second = await submitNotice({ ...EXAMPLE_REQUEST, eventId: 'evt_other' }, deps);
    if (first.kind !== 'recorded' || second.kind !== 'recorded') throw new Error('not recorded');
    world.enqueued.length = 0;
    world.sms.script.push({ kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: 5000 });
    await deliverIntent({ noticeId: first.noticeId, channel: 'sms' }, deps);
    expect(world.store.gates.get('sms')).toBe(world.clock.now() + 5000);

    const result = await deliverIntent({ noticeId: second.noticeId, channel: 'sms' }, deps);
    expect(result).toEqual({ kind: 'deferred', untilMs: world.clock.now() + 5000, cause: 'channel_held' });
    expect(world.sms.sent).toHaveLength(1);
    expect(world.enqueued).toEqual([{ ref: { noticeId: second.noticeId, channel: 'sms' }, delayMs: 5000 }]);
    expect((await world.store.get(second.noticeId, 'sms'))?.state).toBe('reserved');
    // Email is another provider: not held.
    expect(await deliverIntent({ noticeId: second.noticeId, channel: 'email' }, deps)).toMatchObject({
      state: 'accepted',
    });

    world.clock.advance(5000);
    expect(await deliverIntent({ noticeId: second.noticeId, channel: 'sms' }, deps)).toMatchObject({
      state: 'accepted',
    });
  });
});

describe('intake edge cases', () => {
  it('a conflict on one channel leaves that row unchanged; a channel the request added is recorded and sent', async () => {
    const world = fakeWorld();
    const first = await submitNotice({ ...EXAMPLE_REQUEST, channels: ['email'] }, world.deps);
    if (first.kind !== 'recorded') throw new Error('not recorded');
    const before = await world.store.get(first.noticeId, 'email');
    world.enqueued.length = 0;
    const result = await submitNotice({ ...EXAMPLE_REQUEST, variables: { firstName: 'Bob' } }, world.deps);
    expect(result).toMatchObject({
      kind: 'conflict',
      channels: [
        { channel: 'email', outcome: 'conflict' },
        { channel: 'sms', outcome: 'created' },
      ],
    });
    expect(world.enqueued.map((e) => e.ref.channel)).toEqual(['sms']);
    expect(await world.store.get(first.noticeId, 'email')).toEqual(before);
  });

  it('refuses deadlines more than 30 days out', async () => {
    const world = fakeWorld();
    const result = await submitNotice(
      { ...EXAMPLE_REQUEST, deadline: world.clock.now() + 31 * 86_400_000 },
      world.deps,
    );
    expect(result).toMatchObject({
      kind: 'invalid',
      violations: [{ path: 'deadline', code: 'deadline_too_far' }],
    });
  });

  it('a provider report of acceptance for a row scheduled for retry settles it, so no duplicate is sent', async () => {
    const world = fakeWorld();
    const submitted = await submitNotice(EXAMPLE_REQUEST, world.deps);
    if (submitted.kind !== 'recorded') throw new Error('not recorded');
    const { noticeId } = submitted;
    world.sms.script.push({ kind: 'retryable', code: 'twilio_503', throttled: false });
    await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    expect((await world.store.get(noticeId, 'sms'))?.state).toBe('retry_scheduled');
    const result = await applyDeliveryReport(
      {
        ref: { noticeId, channel: 'sms' },
        provider: 'twilio',
        receiptId: 'SM-late',
        kind: 'delivered',
        at: world.clock.now() + 10,
      },
      world.deps,
    );
    expect(result).toMatchObject({ kind: 'applied', state: 'delivered', records: 3 });
    world.clock.advance(120_000);
    expect(await deliverIntent({ noticeId, channel: 'sms' }, world.deps)).toMatchObject({ kind: 'left' });
    expect(world.sms.sent).toHaveLength(1);
    expect((await world.store.get(noticeId, 'sms'))?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_unavailable',
      'claimed',
      'reconciled_accepted',
      'delivery_reported',
    ]);
  });
});

describe('provider report times', () => {
  it('a report stamped earlier than the last record (provider clock) is recorded no earlier than it', async () => {
    const world = fakeWorld();
    const submitted = await submitNotice(EXAMPLE_REQUEST, world.deps);
    if (submitted.kind !== 'recorded') throw new Error('not recorded');
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    world.clock.advance(5_000);
    await deliverIntent({ noticeId: submitted.noticeId, channel: 'email' }, world.deps);
    const unknownAt = (await world.store.get(submitted.noticeId, 'email'))?.transitions.at(-1)?.at as number;
    await applyDeliveryReport(
      {
        ref: { noticeId: submitted.noticeId, channel: 'email' },
        provider: 'ses',
        receiptId: 'ses-1',
        kind: 'accepted',
        at: unknownAt - 4_000,
      },
      world.deps,
    );
    const times = (await world.store.get(submitted.noticeId, 'email'))?.transitions.map((t) => t.at) ?? [];
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.at(-1)).toBe(unknownAt);
  });
});

describe('shared throttle gate: short closures', () => {
  it('a short closure is waited out inline, then the gate is open for every later admission', async () => {
    const world = fakeWorld();
    const { gate, sleeps } = gateOn(world, { gateCacheMs: 0 });
    expect(await gate.admit('sms')).toEqual({ kind: 'go' });
    const until = world.clock.now() + 1000;
    await gate.throttled('sms', until);
    await gate.throttled('sms', until);
    await gate.throttled('sms', until);
    // Closed for 1 s (≤ maxInlineWaitMs): admitted after waiting, not deferred.
    expect(await gate.admit('sms')).toEqual({ kind: 'go' });
    expect(sleeps[0]).toBe(1000);
    // The gate has no pace of its own (the rate budget paces): once open, nobody waits.
    sleeps.length = 0;
    for (let i = 0; i < 15; i++) expect(await gate.admit('sms')).toEqual({ kind: 'go' });
    expect(sleeps).toEqual([]);
  });
});

describe('shared throttle gate: gate reads', () => {
  it('admissions that miss the cache together share one read of the gate item', async () => {
    // Prepare
    const world = fakeWorld();
    let reads = 0;
    const store = {
      readHold: async (channel: 'email' | 'sms') => {
        reads += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return world.store.readHold(channel);
      },
      closeGate: world.store.closeGate.bind(world.store),
    };
    const { gate } = gateOn(world, { store });

    // Act
    const admissions = await Promise.all(Array.from({ length: 10 }, () => gate.admit('sms')));
    await gate.admit('email');

    // Assess
    expect(admissions.every((a) => a.kind === 'go')).toBe(true);
    expect(reads).toBe(2);
  });

  it('a 429 noted while a read is in flight is not undone by the older reading', async () => {
    // Prepare: the read returns "open", but a throttle arrives before it does
    const world = fakeWorld();
    let release: () => void = () => undefined;
    const store = {
      readHold: async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return undefined;
      },
      closeGate: async () => false,
    };
    const { gate } = gateOn(world, { store, maxInlineWaitMs: 0 });
    const until = world.clock.now() + 10_000;

    // Act
    const admission = gate.admit('sms');
    await gate.throttled('sms', until);
    release();

    // Assess
    expect(await admission).toEqual({ kind: 'wait', untilMs: until, held: { reason: 'provider_throttled' } });
  });
});

describe('unknown past the deadline', () => {
  it('is still asked about until the grace period ends, so a late answer is recorded, not contradicted', async () => {
    const world = fakeWorld();
    const submitted = await submitNotice(
      { ...EXAMPLE_REQUEST, deadline: world.clock.now() + 120_000 },
      world.deps,
    );
    if (submitted.kind !== 'recorded') throw new Error('not recorded');
    const ref = { noticeId: submitted.noticeId, channel: 'email' as const };
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent(ref, world.deps);
    world.clock.advance(180_000); // past the deadline, inside the 600 s grace
    await reconcile(world.deps);
    expect((await world.store.get(ref.noticeId, 'email'))?.state).toBe('unknown');
    world.lookupAnswers.push({ kind: 'found', receiptId: 'ses-late' });
    world.clock.advance(60_000);
    await reconcile(world.deps);
    expect(await world.store.get(ref.noticeId, 'email')).toMatchObject({
      state: 'accepted',
      providerReceiptId: 'ses-late',
    });
    // Only the SMS channel (still reserved, never sent) failed at the deadline.
    expect(world.escalations.map((e) => [e.channel, e.reason])).toEqual([['sms', 'deadline_exceeded']]);
    expect(world.email.sent).toHaveLength(1);
  });
});
