/**
 * Defects of issue 11, each with a test that fails on the code before it:
 * escalations lost to a failed publish, one row's error failing a whole reconciler run, the
 * escalation log line, a missing template or transport recorded as `render_failed`, facts after
 * a terminal state lost from the timeline, and rows settled by reconciliation showing no provider.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogEscalationPublisher } from '../../lambdas/adapters/eventbridge/escalation-publishers.ts';
import type { Escalation } from '../../lambdas/ports/escalation.port.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld } from '../helpers/fakes.ts';

async function submitted(world: FakeWorld, request = EXAMPLE_REQUEST) {
  const result = await submitNotice(request, world.deps);
  if (result.kind !== 'recorded') throw new Error(`expected recorded, got ${result.kind}`);
  return result.noticeId;
}

/** An escalation publisher that fails the first `failures` publishes, then records them. */
function flakyEscalations(failures: number) {
  const published: Escalation[] = [];
  let left = failures;
  return {
    published,
    publish: async (escalation: Escalation) => {
      if (left > 0) {
        left -= 1;
        throw new Error('EventBridge unavailable');
      }
      published.push(escalation);
    },
  };
}

afterEach(() => vi.restoreAllMocks());

describe('escalations are recorded, retried and counted, never lost', () => {
  it('a failed publish leaves a marker on the row; the next reconciler run publishes it once and clears it', async () => {
    // Prepare: attempts run out on the first try, and the escalation publish fails once.
    const escalations = flakyEscalations(1);
    const world = fakeWorld({
      escalations,
      retryPolicy: { baseMs: 1000, capMs: 60_000, maxAttempts: 1 },
    });
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['sms'] });
    world.sms.script.push({ kind: 'retryable', code: 'twilio_503', throttled: false });

    // Act
    const step = await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    const afterFailure = await world.store.get(noticeId, 'sms');
    const run = await reconcile(world.deps);
    const again = await reconcile(world.deps);

    // Assess
    expect(step).toMatchObject({
      kind: 'recorded',
      state: 'failed',
      reason: 'attempts_exhausted',
      escalation: 'pending',
    });
    expect(afterFailure).toMatchObject({ state: 'failed', escalationPending: true });
    expect(afterFailure?.dueAt).toBeDefined();
    expect(run).toMatchObject({ escalations: 1, escalationFailures: 0, escalationsPending: 0 });
    expect(escalations.published).toEqual([
      expect.objectContaining({ noticeId, channel: 'sms', reason: 'attempts_exhausted', seq: 3 }),
    ]);
    expect(await world.store.get(noticeId, 'sms')).toMatchObject({
      escalationPending: undefined,
      dueAt: undefined,
    });
    expect(again.escalations).toBe(0);
    expect(escalations.published).toHaveLength(1);
  });

  it('a publish that keeps failing is counted on every run and shows in the pending gauge, not in the unresolved age', async () => {
    // Prepare
    const escalations = flakyEscalations(3);
    const world = fakeWorld({ escalations, retryPolicy: { baseMs: 1000, capMs: 60_000, maxAttempts: 1 } });
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['sms'] });
    world.sms.script.push({ kind: 'retryable', code: 'twilio_503', throttled: false });
    await deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    world.clock.advance(3_600_000);

    // Act
    const run = await reconcile(world.deps);

    // Assess
    expect(run).toMatchObject({ escalations: 0, escalationFailures: 1, escalationsPending: 1 });
    expect(run.oldestUnresolvedAgeSeconds).toBe(0);
    expect(run.openByState).not.toHaveProperty('failed');
  });

  it('a crash between the failing write and the publish loses nothing: the marker was in that write', async () => {
    // Prepare: the row fails in the reconciler (deadline) and the process "dies" before publishing.
    const world = fakeWorld();
    const noticeId = await submitted(world, {
      ...EXAMPLE_REQUEST,
      channels: ['email'],
      deadline: world.clock.now() + 60_000,
    } as typeof EXAMPLE_REQUEST);
    world.clock.advance(120_000);
    const publish = vi.spyOn(world.deps.escalations, 'publish').mockRejectedValueOnce(new Error('SIGKILL'));

    // Act
    await reconcile(world.deps);
    const pending = await world.store.get(noticeId, 'email');
    await reconcile(world.deps);

    // Assess
    expect(pending).toMatchObject({ state: 'failed', escalationPending: true });
    expect(publish).toHaveBeenCalledTimes(2);
    expect(world.escalations).toEqual([expect.objectContaining({ noticeId, reason: 'deadline_exceeded' })]);
  });

  it('the escalation log line keeps its message and carries the escalation beside it', async () => {
    // Prepare: a real Powertools logger writing to a captured stdout.
    const lines: string[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        lines.push(String(chunk));
        return true;
      });
    }
    const logger = new Logger({ serviceName: 'notice-ledger-test' });
    const publisher = new LogEscalationPublisher((message, attributes) => logger.warn(message, attributes));

    // Act
    await publisher.publish({
      noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
      channel: 'sms',
      seq: 3,
      reason: 'attempts_exhausted',
      state: 'failed',
      at: 0,
    });

    // Assess: one line (no "reserved key" warning beside it), with its message and the fields.
    const records = lines
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      message: 'escalation',
      noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
      reason: 'attempts_exhausted',
    });
  });
});

describe('the reconciler isolates rows', () => {
  it("one row's enqueue error is counted; the other rows are handled and the gauges still come back", async () => {
    // Prepare: two reserved rows whose messages were lost; the queue refuses the first re-enqueue.
    const world = fakeWorld();
    const first = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['email'] });
    const second = await submitted(world, { ...EXAMPLE_REQUEST, eventId: 'evt_two', channels: ['email'] });
    world.enqueued.length = 0;
    world.clock.advance(61_000);
    let refused = 0;
    const enqueue = world.deps.queue.enqueue.bind(world.deps.queue);
    vi.spyOn(world.deps.queue, 'enqueue').mockImplementation(async (refs, options) => {
      if (refused++ === 0) throw new Error('SQS throttled');
      return enqueue(refs, options);
    });
    const errors: string[] = [];

    // Act
    const report = await reconcile({ ...world.deps, onRowError: (ref) => errors.push(ref.noticeId) });

    // Assess
    expect(report.rowErrors).toBe(1);
    expect(report.actions).toMatchObject({ row_error: 1, reenqueue_reserved: 1 });
    expect(report.openByState).toEqual({ reserved: 2 });
    expect(errors).toHaveLength(1);
    expect(world.enqueued.map((e) => e.ref.noticeId)).toEqual(
      [first, second].filter((id) => id !== errors[0]),
    );
  });
});

describe('what this deployment cannot send is a configuration error', () => {
  it('a template missing from the catalog fails the row as configuration_error (escalated), before any claim', async () => {
    // Prepare
    const world = fakeWorld();
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['email'] });
    const deps = { ...world.deps, catalog: { ...world.deps.catalog, lookup: () => undefined } };

    // Act
    const result = await deliverIntent({ noticeId, channel: 'email' }, deps);

    // Assess
    expect(result).toMatchObject({ kind: 'recorded', state: 'failed', reason: 'configuration_error' });
    const row = await world.store.get(noticeId, 'email');
    expect(row?.transitions.map((t) => t.reason)).toEqual(['intake', 'configuration_error']);
    expect(row?.transitions.at(-1)?.detail).toBe(
      "template lab-result-ready v3 is not in this deployment's catalog",
    );
    expect(world.email.sent).toHaveLength(0);
    expect(world.escalations).toEqual([expect.objectContaining({ noticeId, reason: 'configuration_error' })]);
  });

  it('a channel without a transport fails the same way, naming the channel', async () => {
    // Prepare
    const world = fakeWorld();
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['sms'] });

    // Act
    const result = await deliverIntent({ noticeId, channel: 'sms' }, { ...world.deps, transports: {} });

    // Assess
    expect(result).toMatchObject({ state: 'failed', reason: 'configuration_error' });
    expect((await world.store.get(noticeId, 'sms'))?.transitions.at(-1)?.detail).toBe(
      'no sms transport is configured',
    );
  });
});

describe('a provider whose credentials are still placeholders fails only its own sends', () => {
  it('its rows fail as provider_not_configured, escalated once per row, before any claim; the other channel sends', async () => {
    // Prepare: the SMS provider's secret holds the placeholders the deployment wrote.
    const world = fakeWorld();
    const noticeId = await submitted(world);
    const detail =
      'the twilio transport has no credentials yet: fields accountSid, authToken, from of the secret TWILIO_SECRET_ARN names are still empty';
    const deps = {
      ...world.deps,
      transports: { email: world.email },
      unconfiguredProviders: { sms: { provider: 'twilio', detail } },
    };

    // Act: both channels' messages, the SMS one delivered twice (a redelivery), then a reconciler run.
    const sms = await deliverIntent({ noticeId, channel: 'sms' }, deps);
    const email = await deliverIntent({ noticeId, channel: 'email' }, deps);
    const again = await deliverIntent({ noticeId, channel: 'sms' }, deps);
    await reconcile(world.deps);

    // Assess
    expect(sms).toMatchObject({ kind: 'recorded', state: 'failed', reason: 'provider_not_configured' });
    expect(email).toMatchObject({ kind: 'recorded', state: 'accepted' });
    expect(again).toMatchObject({ kind: 'left' });
    const row = await world.store.get(noticeId, 'sms');
    expect(row?.transitions.map((t) => t.reason)).toEqual(['intake', 'provider_not_configured']);
    expect(row?.transitions.at(-1)).toMatchObject({ to: 'failed', detail });
    expect(row?.transitions.at(-1)).not.toHaveProperty('attempt');
    expect(row?.attempts).toBe(0);
    expect(world.sms.sent).toHaveLength(0);
    expect(world.email.sent).toHaveLength(1);
    expect(world.escalations).toEqual([
      expect.objectContaining({ noticeId, channel: 'sms', reason: 'provider_not_configured' }),
    ]);
  });
});

describe('facts after a terminal state stay in the story', () => {
  it('a complaint after delivered is appended as a fact (state unchanged), once, and suppresses', async () => {
    // Prepare
    const world = fakeWorld();
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['email'] });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    const ref = { noticeId, channel: 'email' as const };
    const base = { ref, provider: 'ses', receiptId: 'ses-1', at: world.clock.now() + 1000 };
    await applyDeliveryReport({ ...base, kind: 'delivered' }, world.deps);
    const complaint = {
      ...base,
      kind: 'failed' as const,
      failure: 'complaint' as const,
      code: 'abuse',
      suppress: true,
      at: base.at + 5000,
    };

    // Act
    const first = await applyDeliveryReport(complaint, world.deps);
    const replay = await applyDeliveryReport(complaint, world.deps);

    // Assess
    expect(first).toMatchObject({ kind: 'applied', state: 'delivered' });
    expect(replay).toMatchObject({ kind: 'ignored', why: 'already_final' });
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('delivered');
    expect(row?.transitions.slice(-2)).toEqual([
      expect.objectContaining({ from: 'accepted', to: 'delivered', reason: 'delivery_reported' }),
      expect.objectContaining({
        seq: 5,
        from: 'delivered',
        to: 'delivered',
        reason: 'complaint',
        detail: 'abuse',
      }),
    ]);
    expect(row?.version).toBe(5);
    expect(world.store.suppressions.size).toBe(1);
  });

  it('a delivery reported after the row failed as unknown_unresolved is told as facts, not as a new state', async () => {
    // Prepare: the send timed out and the grace period ran out without an answer (policy fail).
    const world = fakeWorld({ unknownPolicy: 'fail' });
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['email'] });
    world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    world.clock.advance(600_001);
    await reconcile(world.deps);
    const ref = { noticeId, channel: 'email' as const };

    // Act
    await applyDeliveryReport(
      { ref, provider: 'ses', receiptId: 'ses-9', kind: 'accepted', at: world.clock.now() },
      world.deps,
    );
    await applyDeliveryReport(
      { ref, provider: 'ses', receiptId: 'ses-9', kind: 'delivered', at: world.clock.now() },
      world.deps,
    );

    // Assess
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('failed');
    expect(row?.transitions.slice(-3).map((t) => [t.from, t.to, t.reason])).toEqual([
      ['unknown', 'failed', 'unknown_unresolved'],
      ['failed', 'failed', 'reconciled_accepted'],
      ['failed', 'failed', 'delivery_reported'],
    ]);
  });
});

describe('the provider is recorded with the claim', () => {
  it('a lease that expires leaves the row asking the provider that was called; reconciled rows name it', async () => {
    // Prepare: the worker claims and dies before recording anything.
    const world = fakeWorld();
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['sms'] });
    world.sms.send = async () => new Promise(() => undefined);
    void deliverIntent({ noticeId, channel: 'sms' }, world.deps);
    await vi.waitFor(async () => expect((await world.store.get(noticeId, 'sms'))?.state).toBe('sending'));
    const claimed = await world.store.get(noticeId, 'sms');
    world.clock.advance(61_000);
    world.lookupAnswers.push({ kind: 'found', receiptId: 'SMfound' });

    // Act
    await reconcile(world.deps); // sending → unknown (lease expired)
    await reconcile(world.deps); // unknown → lookup at twilio → accepted

    // Assess
    expect(claimed?.provider).toBe('twilio');
    const row = await world.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'accepted', provider: 'twilio', providerReceiptId: 'SMfound' });
    expect(row?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'lease_expired',
      'reconciled_accepted',
    ]);
  });

  it('an unknown row is asked about at the provider it records, not at the channel’s current one', async () => {
    // Prepare: a row sent through "oldsms", the channel now served by twilio.
    const world = fakeWorld();
    const noticeId = await submitted(world, { ...EXAMPLE_REQUEST, channels: ['sms'] });
    const asked: string[] = [];
    const lookups = {
      twilio: {
        provider: 'twilio',
        lookup: async () => {
          asked.push('twilio');
          return { kind: 'undecidable' as const };
        },
      },
      oldsms: {
        provider: 'oldsms',
        lookup: async () => {
          asked.push('oldsms');
          return { kind: 'found' as const, receiptId: 'OLD1' };
        },
      },
    };
    const old = {
      ...world.sms,
      provider: 'oldsms',
      send: async () => ({ kind: 'ambiguous' as const, code: 'timeout' }),
    };
    await deliverIntent({ noticeId, channel: 'sms' }, { ...world.deps, transports: { sms: old } });

    // Act
    await reconcile({ ...world.deps, lookups });

    // Assess
    expect(asked).toEqual(['oldsms']);
    expect(await world.store.get(noticeId, 'sms')).toMatchObject({
      state: 'accepted',
      provider: 'oldsms',
      providerReceiptId: 'OLD1',
    });
  });
});
