/**
 * Issue 21, "No row waits in silence", through the real use cases, the gateway's provider module
 * (loaded through the registry, as a sender would) and its simulator (local/infrai-simulator,
 * whose suppression check can be made to answer 500), on the in-memory ledger. The ledger's time
 * is a manual clock the test moves: each deferral's queue message "arrives" when the test moves
 * the clock to its delay; nothing is slept for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deferralMetric } from '../../lambdas/contract/metrics.ts';
import type { Channel } from '../../lambdas/domain/channel.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { toTimeline } from '../../lambdas/edge/timeline.ts';
import type { TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailTransport, SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { type DeliveryResult, deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { listRecentFailures } from '../../lambdas/use-cases/list-failed.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { type InfraiSimulator, startInfraiSimulator } from '../../local/infrai-simulator/server.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, ManualClock } from '../helpers/fakes.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const MINUTE = 60_000;
let seq = 0;

async function gatewayWorld(): Promise<{ w: FakeWorld; sim: InfraiSimulator; clock: ManualClock }> {
  const sim = await startInfraiSimulator();
  cleanups.push(() => sim.close());
  sim.faults.set({ deliveryDelayMs: 10 });
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'infrai');
  if (!provider) throw new Error('infrai is not registered');
  const env = { INFRAI_BASE_URL: sim.baseUrl, INFRAI_API_KEY: sim.apiKey, PROVIDER_TIMEOUT_MS: '1000' };
  const loaded = await loadFacet(provider, 'transport', {
    config: readConfig(env),
    env,
    clock: { now: () => Date.now() },
  });
  const facet = loaded?.facet as TransportFacet;
  const clock = new ManualClock(Date.now());
  const w = fakeWorld({
    clock,
    transports: {
      email: facet.email?.(loaded?.context as never) as EmailTransport,
      sms: facet.sms?.(loaded?.context as never) as SmsTransport,
    },
    channelProviders: { email: 'infrai', sms: 'infrai' },
    // The deployed defaults' shape: backoff from 1 s, capped at 5 minutes.
    retryPolicy: { baseMs: 1000, capMs: 5 * MINUTE, maxAttempts: 8 },
  });
  // The channel's shared hold gate, on the ledger's clock (a 429 closes it for every worker).
  (w.deps as { gate?: unknown }).gate = new SharedSendGate({ store: w.store, clock, gateCacheMs: 0 });
  return { w, sim, clock };
}

async function notice(
  w: FakeWorld,
  channel: Channel,
  options: { deadlineMs?: number; priority?: Priority } = {},
): Promise<string> {
  const now = w.deps.clock.now();
  const result = await submitNotice(
    {
      ...EXAMPLE_REQUEST,
      eventId: `evt_wait_${process.pid}_${seq++}`,
      channels: [channel],
      ...(options.deadlineMs !== undefined ? { deadline: now + options.deadlineMs } : {}),
      ...(options.priority ? { priority: options.priority } : {}),
    } as never,
    w.deps,
  );
  if (result.kind !== 'recorded') throw new Error(result.kind);
  return result.noticeId;
}

/**
 * Delivers the row's queue message, then each message a deferral sends back when its delay is
 * over (the clock moved there), until a step is not a deferral or `stopAt` (ledger time) passes.
 */
async function deliverUntilSettled(
  w: FakeWorld,
  clock: ManualClock,
  ref: { noticeId: string; channel: Channel },
  options: { stopAt?: number } = {},
): Promise<{ deferrals: (DeliveryResult & { kind: 'deferred' })[]; last: DeliveryResult }> {
  const deferrals: (DeliveryResult & { kind: 'deferred' })[] = [];
  for (;;) {
    const result = await deliverIntent(ref, w.deps);
    if (result.kind !== 'deferred') return { deferrals, last: result };
    deferrals.push(result);
    // The message sent back comes when its delay is over.
    expect(w.enqueued.at(-1)).toEqual({ ref, delayMs: result.untilMs - clock.now() });
    clock.current = result.untilMs;
    if (options.stopAt !== undefined && clock.now() >= options.stopAt) return { deferrals, last: result };
  }
}

describe('a provider check that cannot be answered is recorded, backs off, ends at the deadline', () => {
  it('a suppression check answering 500 for a minute leaves one provider_check_unavailable record, then delivers', async () => {
    const { w, sim, clock } = await gatewayWorld();
    sim.faults.set({ suppressionCheckStatus: 500 });
    const noticeId = await notice(w, 'email');
    const ref = { noticeId, channel: 'email' as const };
    const start = clock.now();

    // Act: a minute of unanswered checks, then the check answers again.
    const down = await deliverUntilSettled(w, clock, ref, { stopAt: start + MINUTE });
    const waiting = await w.store.get(noticeId, 'email');
    sim.faults.set({ suppressionCheckStatus: null });
    const after = await deliverUntilSettled(w, clock, ref);

    // Assess: every wait counted as such, backing off from the policy's base.
    expect(down.deferrals.every((d) => d.cause === 'provider_check_unavailable')).toBe(true);
    expect(deferralMetric('provider_check_unavailable')).toBe('Deferred_provider_check_unavailable');
    const delays = down.deferrals.map(
      (d, i) => d.untilMs - (i === 0 ? start : (down.deferrals[i - 1]?.untilMs ?? 0)),
    );
    expect(delays[0]).toBe(1000);
    expect(delays.at(-1)).toBeGreaterThan(4 * (delays[0] as number));
    // Not one check every 30 s, not one per second: about one per doubling of the wait (1, 1, 2, 4 … s).
    expect(down.deferrals.length).toBeGreaterThanOrEqual(5);
    expect(down.deferrals.length).toBeLessThanOrEqual(8);
    // One record for the one cause, whatever the number of checks; the row due a lease after its next check.
    expect(waiting?.state).toBe('reserved');
    expect(waiting?.transitions.filter((t) => t.reason === 'provider_check_unavailable')).toEqual([
      expect.objectContaining({
        from: 'reserved',
        to: 'reserved',
        at: start,
        detail: 'infrai suppression_list not answered: infrai_INTERNAL',
      }),
    ]);
    expect(waiting?.dueAt).toBe((down.deferrals.at(-1)?.untilMs as number) + w.deps.timing.leaseMs);
    const timeline = toTimeline([{ row: waiting as never, source: 'ledger' }], { now: clock.now() });
    expect(timeline.channels[0]?.next).toMatchObject({
      kind: 'check',
      at: new Date(waiting?.deadline as number).toISOString(),
    });

    // Then it delivers, the clear answer on the claim record.
    expect(after.last).toMatchObject({ kind: 'recorded', state: 'accepted' });
    const sent = await w.store.get(noticeId, 'email');
    expect(sent?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'provider_check_unavailable',
      'claimed',
      'provider_accepted',
    ]);
    expect(sim.messages()).toHaveLength(1);
    expect(sim.counters.suppressionChecks).toBe(down.deferrals.length + 1);
    expect(w.escalations).toEqual([]);
  });

  it('one answering 500 until the deadline fails the row at its deadline, escalated, saying what it waited on', async () => {
    const { w, sim, clock } = await gatewayWorld();
    sim.faults.set({ suppressionCheckStatus: 500 });
    const noticeId = await notice(w, 'email', { deadlineMs: 10 * MINUTE });
    const ref = { noticeId, channel: 'email' as const };
    const deadline = (await w.store.get(noticeId, 'email'))?.deadline as number;

    const run = await deliverUntilSettled(w, clock, ref);

    // The last wait ends at the deadline exactly; the message that comes then fails the row.
    expect(run.deferrals.at(-1)?.untilMs).toBe(deadline);
    expect(run.last).toMatchObject({ kind: 'recorded', state: 'failed', reason: 'deadline_exceeded' });
    const row = await w.store.get(noticeId, 'email');
    expect(row?.transitions.at(-1)).toMatchObject({
      from: 'reserved',
      to: 'failed',
      reason: 'deadline_exceeded',
      at: deadline,
      detail:
        'no attempt made; waited on provider_check_unavailable: infrai suppression_list not answered: infrai_INTERNAL',
    });
    expect(row?.transitions.filter((t) => t.reason === 'provider_check_unavailable')).toHaveLength(1);
    expect(w.escalations).toEqual([
      expect.objectContaining({ noticeId, channel: 'email', reason: 'deadline_exceeded', state: 'failed' }),
    ]);
    expect(sim.counters.sendCalls).toBe(0);
    // Ten minutes of backoff capped at five: a handful of checks, not twenty.
    expect(run.deferrals.length).toBeLessThanOrEqual(12);
    // It is among the recent failures, with why.
    const failed = await listRecentFailures(
      { since: deadline - MINUTE, until: clock.now(), limit: 10 },
      { store: w.store },
    );
    expect(failed.items).toEqual([expect.objectContaining({ noticeId, reason: 'deadline_exceeded' })]);
  });

  it('a row whose message is lost meanwhile is failed by the reconciler at its deadline, just as well', async () => {
    const { w, sim, clock } = await gatewayWorld();
    sim.faults.set({ suppressionCheckStatus: 503 });
    const noticeId = await notice(w, 'sms', { deadlineMs: 5 * MINUTE });
    await deliverIntent({ noticeId, channel: 'sms' }, w.deps);
    const deadline = (await w.store.get(noticeId, 'sms'))?.deadline as number;
    // The message is lost (never delivered again): only the open index knows the row.
    clock.current = deadline;
    const run = await reconcile(w.deps);
    expect(run.actions.reserved_to_failed).toBe(1);
    expect((await w.store.get(noticeId, 'sms'))?.transitions.at(-1)).toMatchObject({
      reason: 'deadline_exceeded',
      detail:
        'no attempt made; waited on provider_check_unavailable: infrai suppression_list not answered: infrai_INTERNAL',
    });
    expect(w.escalations.map((e) => e.reason)).toEqual(['deadline_exceeded']);
  });
});

describe('a channel hold is on the timeline of every row it delays', () => {
  it('a critical notice held behind a long Retry-After shows the hold, once, and why it missed its deadline', async () => {
    const { w, sim, clock } = await gatewayWorld();
    // A bulk SMS meets a 429 with a ten-minute Retry-After: the whole SMS channel is held.
    sim.faults.set({
      failNext: [
        { kind: 'status', status: 429, code: 'RATE_LIMITED', retryable: true, retryAfterSeconds: 600 },
      ],
    });
    const bulk = await notice(w, 'sms', { priority: 'bulk' });
    expect(await deliverIntent({ noticeId: bulk, channel: 'sms' }, w.deps)).toMatchObject({
      state: 'retry_scheduled',
      reason: 'provider_throttled',
    });
    const holdEnds = clock.now() + 600_000;

    // A critical notice with five minutes to live arrives, and its message twice (a redelivery).
    const critical = await notice(w, 'sms', { priority: 'critical', deadlineMs: 5 * MINUTE });
    const ref = { noticeId: critical, channel: 'sms' as const, priority: 'critical' as const };
    const first = await deliverIntent(ref, w.deps);
    clock.advance(1_000);
    const again = await deliverIntent(ref, w.deps);

    expect(first).toEqual({ kind: 'deferred', untilMs: holdEnds, cause: 'channel_held' });
    expect(again).toMatchObject({ kind: 'deferred', cause: 'channel_held' });
    const held = await w.store.get(critical, 'sms');
    const holdDetail = `infrai held the channel: provider_throttled until ${new Date(holdEnds).toISOString()}`;
    // Once per hold, however many deferrals: reason, provider, until when.
    expect(held?.transitions.filter((t) => t.reason === 'channel_held')).toEqual([
      expect.objectContaining({ from: 'reserved', to: 'reserved', detail: holdDetail }),
    ]);
    const timeline = toTimeline([{ row: held as never, source: 'ledger' }], { now: clock.now() });
    expect(timeline.channels[0]?.transitions.map((t) => t.reason)).toEqual(['intake', 'channel_held']);
    expect(timeline.channels[0]?.next).toEqual({
      kind: 'held',
      at: new Date(holdEnds).toISOString(),
      summary: `held until ${new Date(holdEnds).toISOString()}: infrai provider_throttled`,
    });
    expect(sim.counters.sendCalls).toBe(1);

    // It misses its deadline (the hold lasts longer): failed there, and the record says why.
    clock.current = held?.deadline as number;
    await reconcile(w.deps);
    const missed = await w.store.get(critical, 'sms');
    expect(missed?.transitions.at(-1)).toMatchObject({
      to: 'failed',
      reason: 'deadline_exceeded',
      detail: `no attempt made; waited on channel_held: ${holdDetail}`,
    });
    expect(w.escalations).toEqual([
      expect.objectContaining({
        noticeId: critical,
        reason: 'deadline_exceeded',
        detail: `no attempt made; waited on channel_held: ${holdDetail}`,
      }),
    ]);
  });
});
