import { describe, expect, it } from 'vitest';
import type { Backlog } from '../../lambdas/domain/deadline-risk.ts';
import type { BacklogProbe } from '../../lambdas/ports/backlog.port.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

/** A backlog of `ahead` references in front of every lane, at `rate`/s. */
function fixedBacklog(ahead: number, rate = 25): BacklogProbe & { counted: number } {
  return {
    counted: 0,
    async read(): Promise<Backlog> {
      return {
        ratePerSecond: rate,
        ahead: { critical: 0, standard: ahead + this.counted, bulk: ahead + this.counted },
      };
    },
    enqueued(_channel, _priority, count) {
      this.counted += count;
    },
  };
}

const sms = { ...EXAMPLE_REQUEST, channels: ['sms' as const] };

describe('deadline risk at intake (docs/architecture.md §11)', () => {
  it('a channel that cannot make its deadline is reserved warned; the reconciler escalates it; it keeps trying', async () => {
    const backlog = fixedBacklog(3_000);
    const world = fakeWorld();
    // An intake that cannot publish (no escalation publisher): the marker hands it to the reconciler.
    const { escalations: _none, ...intake } = world.deps;
    const deps = { ...intake, backlog };
    const now = world.clock.now();
    const result = await submitNotice({ ...sms, deadline: now + 10_000 }, deps);
    if (result.kind !== 'recorded') throw new Error(result.kind);
    const [channel] = result.channels;
    expect(channel).toMatchObject({ channel: 'sms', deadlineAtRisk: true });
    expect(channel?.estimatedSendAt).toBe(now + 120_000 + 250);
    const row = await world.store.get(result.noticeId, 'sms');
    expect(row?.transitions.map((t) => `${t.from}→${t.to}:${t.reason}`)).toEqual([
      'null→reserved:intake',
      'reserved→reserved:deadline_at_risk',
    ]);
    expect(row).toMatchObject({ state: 'reserved', escalationPending: true, dueAt: now });

    // The next reconciler run — not the deadline — publishes it.
    world.clock.advance(1_000);
    await reconcile(world.deps);
    expect(world.escalations).toEqual([
      expect.objectContaining({
        noticeId: result.noticeId,
        channel: 'sms',
        reason: 'deadline_at_risk',
        state: 'reserved',
      }),
    ]);
    expect((await world.store.get(result.noticeId, 'sms'))?.escalationPending).toBeUndefined();
    // And it is still sent.
    const sent = await deliverIntent({ noticeId: result.noticeId, channel: 'sms' }, world.deps);
    expect(sent).toMatchObject({ kind: 'recorded', state: 'accepted' });
  });

  it('an intake that can publish sends the warning at once; the row is due again when its own next step is', async () => {
    const world = fakeWorld();
    const now = world.clock.now();
    const result = await submitNotice(
      { ...sms, deadline: now + 10_000 },
      { ...world.deps, backlog: fixedBacklog(3_000) },
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    expect(world.escalations.map((e) => e.reason)).toEqual(['deadline_at_risk']);
    const row = await world.store.get(result.noticeId, 'sms');
    expect(row?.escalationPending).toBeUndefined();
    expect(row?.dueAt).toBe(Math.min(now + 60_000, now + 10_000));
    await reconcile(world.deps);
    expect(world.escalations).toHaveLength(1);
  });

  it('a channel that can make it is not warned; the estimate counts the items of the same batch', async () => {
    const backlog = fixedBacklog(100);
    const world = fakeWorld();
    const deps = { ...world.deps, backlog };
    const now = world.clock.now();
    const first = await submitNotice({ ...sms, eventId: 'evt_1', deadline: now + 60_000 }, deps);
    const second = await submitNotice({ ...sms, eventId: 'evt_2', deadline: now + 60_000 }, deps);
    if (first.kind !== 'recorded' || second.kind !== 'recorded') throw new Error('not recorded');
    expect(first.channels[0]).toMatchObject({ deadlineAtRisk: false, estimatedSendAt: now + 4_000 + 250 });
    expect(second.channels[0]).toMatchObject({ deadlineAtRisk: false, estimatedSendAt: now + 4_040 + 250 });
    expect((await world.store.get(first.noticeId, 'sms'))?.transitions).toHaveLength(1);
  });

  it('a critical notice behind a bulk backlog is not at risk; a replay gets no estimate; a backlog read error costs only the estimate', async () => {
    const world = fakeWorld();
    const now = world.clock.now();
    const critical = await submitNotice(
      { ...sms, priority: 'critical', deadline: now + 10_000 },
      { ...world.deps, backlog: fixedBacklog(3_000) },
    );
    expect(critical.kind === 'recorded' && critical.channels[0]?.deadlineAtRisk).toBe(false);
    const replay = await submitNotice(
      { ...sms, priority: 'critical', deadline: now + 10_000 },
      { ...world.deps, backlog: fixedBacklog(3_000) },
    );
    expect(replay.kind === 'recorded' && replay.channels[0]?.estimatedSendAt).toBeUndefined();
    const failing: BacklogProbe = {
      read: async () => Promise.reject(new Error('sqs down')),
      enqueued: () => undefined,
    };
    const other = await submitNotice(
      { ...sms, eventId: 'evt_x', deadline: now + 10_000 },
      { ...world.deps, backlog: failing },
    );
    expect(other).toMatchObject({ kind: 'recorded', created: true });
  });
});

describe('deadline risk at each reconciler run', () => {
  it('a row in time at intake is warned when the channel is held past its deadline; one due later is not', async () => {
    const world = fakeWorld();
    const backlog = fixedBacklog(0);
    const deps = { ...world.deps, backlog };
    const now = world.clock.now();
    const soon = await submitNotice({ ...sms, eventId: 'evt_soon', deadline: now + 30_000 }, deps);
    const later = await submitNotice({ ...sms, eventId: 'evt_later', deadline: now + 3_600_000 }, deps);
    if (soon.kind !== 'recorded' || later.kind !== 'recorded') throw new Error('not recorded');
    expect(soon.channels[0]?.deadlineAtRisk).toBe(false);
    // The provider says "slow down" for two minutes.
    await world.store.closeGate('sms', now + 120_000);
    world.clock.advance(1_000);
    const report = await reconcile(deps);
    expect(report.deadlineAtRisk).toBe(1);
    const row = await world.store.get(soon.noticeId, 'sms');
    expect(row?.transitions.at(-1)).toMatchObject({
      from: 'reserved',
      to: 'reserved',
      reason: 'deadline_at_risk',
    });
    expect(world.escalations.map((e) => [e.noticeId, e.reason])).toEqual([
      [soon.noticeId, 'deadline_at_risk'],
    ]);
    expect((await world.store.get(later.noticeId, 'sms'))?.transitions).toHaveLength(1);
    // Once: the next run warns nobody again.
    world.clock.advance(60_000);
    expect((await reconcile(deps)).deadlineAtRisk).toBe(0);
  });
});
