/**
 * Watched rows (docs/table-design.md "Watched rows"): intake sends a delayed watch per row before
 * it reserves the row, the row stays out of the open index while it is on the happy path, and the
 * watch puts it in if it still owes something when it fires. Every crash point of the happy path
 * ends with the row in the index (or resolved), with its next action the reconciler's as before.
 */
import { describe, expect, it } from 'vitest';
import { createIntent, type Intent, staysWatched, watchedAtIntake } from '../../lambdas/domain/intent.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import type { RowWatch } from '../../lambdas/ports/row-watch.port.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { withWatchesAhead } from '../../lambdas/use-cases/submit-batch.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { watchRows } from '../../lambdas/use-cases/watch-rows.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld } from '../helpers/fakes.ts';

const DELAY_MS = 300_000;

/** A watch that records what it was sent, and in what order against the store's writes. */
function recordingWatch(events: string[] = [], options: { fail?: boolean } = {}) {
  const sent: IntentRef[][] = [];
  const watch: RowWatch = {
    delayMs: DELAY_MS,
    watch: async (refs) => {
      events.push('watch');
      if (options.fail) throw new Error('queue unavailable');
      sent.push([...refs]);
    },
  };
  return { watch, sent };
}

function watchedWorld(options: { fail?: boolean } = {}) {
  const events: string[] = [];
  const { watch, sent } = recordingWatch(events, options);
  const w = fakeWorld({ watch });
  const reserveNotice = w.store.reserveNotice.bind(w.store);
  w.store.reserveNotice = async (...args) => {
    events.push('reserve');
    return reserveNotice(...args);
  };
  return { w, events, sent };
}

async function submit(w: FakeWorld, overrides: Record<string, unknown> = {}, channels = ['sms']) {
  const result = await submitNotice(
    {
      ...EXAMPLE_REQUEST,
      eventId: `evt_watch_${Math.random().toString(36).slice(2)}`,
      channels,
      deadline: w.clock.now() + 86_400_000,
      ...overrides,
    } as never,
    w.deps,
  );
  if (result.kind !== 'recorded') throw new Error(result.kind);
  return result.noticeId;
}

const open = async (w: FakeWorld) =>
  (await w.store.listOpen()).items.map((i) => `${i.noticeId}/${i.channel}`);
const fire = (w: FakeWorld, refs: readonly IntentRef[], look = 1) =>
  watchRows(
    refs.map((ref) => ({ ...ref, look })),
    w.deps,
  );

describe('intake with a watch', () => {
  it('sends the watch of every channel before the reserve, and reserves the rows out of the open index', async () => {
    const { w, events, sent } = watchedWorld();
    const noticeId = await submit(w, {}, ['email', 'sms']);
    expect(events).toEqual(['watch', 'reserve']);
    expect(sent).toEqual([
      [
        { noticeId, channel: 'email' },
        { noticeId, channel: 'sms' },
      ],
    ]);
    for (const channel of ['email', 'sms'] as const) {
      const row = await w.store.get(noticeId, channel);
      expect(row).toMatchObject({ state: 'reserved', watched: true });
      expect(row?.dueAt).toBe(w.clock.now() + w.deps.timing.leaseMs);
    }
    expect(await open(w)).toEqual([]);
    expect((await w.store.countOpen()).byState).toEqual({});
  });

  it('a watch that cannot be sent costs the rows their place out of the index, never the notice', async () => {
    const { w } = watchedWorld({ fail: true });
    const noticeId = await submit(w);
    expect((await w.store.get(noticeId, 'sms'))?.watched).toBeUndefined();
    expect(await open(w)).toEqual([`${noticeId}/sms`]);
  });

  it('indexes at intake what needs the reconciler before the watch fires: a hold, a fallback, a near deadline, a warning', () => {
    const base = createIntent(
      {
        noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
        channel: 'sms',
        eventId: 'e',
        eventType: 't',
        recipientId: 'r',
        templateId: 'lab-result-ready',
        templateVersion: 'v3',
        contentDigest: 'd',
        destination: { fingerprint: 'fp_x', masked: '+1******4567' },
        createdAt: 1_000_000,
        deadline: 1_000_000 + 86_400_000,
        envelope: 'sealed',
      },
      { leaseMs: 60_000 },
    );
    expect(watchedAtIntake(base, DELAY_MS).watched).toBe(true);
    const cases: Intent[] = [
      { ...base, notBefore: base.createdAt + 3_600_000 },
      {
        ...base,
        fallback: {
          to: 'email',
          withinMs: 60_000,
          destination: { fingerprint: 'fp_y', masked: 'p***t@example.com' },
          contentDigest: 'd2',
        },
        fallbackDueAt: base.createdAt + 60_000,
      },
      { ...base, deadline: base.createdAt + DELAY_MS },
      { ...base, escalationPending: true },
    ];
    for (const intent of cases) expect(watchedAtIntake(intent, DELAY_MS).watched).toBeUndefined();
  });
});

describe('the happy path stays out of the open index', () => {
  it('reserve, claim, accepted, delivered: never indexed, and the watch then finds it settled', async () => {
    const { w, sent } = watchedWorld();
    const noticeId = await submit(w);
    const ref = { noticeId, channel: 'sms' } as const;
    await deliverIntent(ref, w.deps);
    let row = await w.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'accepted', watched: true });
    expect(await open(w)).toEqual([]);
    const report = await applyDeliveryReport(
      {
        ref,
        provider: 'twilio',
        receiptId: row?.providerReceiptId as string,
        kind: 'delivered',
        at: w.clock.now(),
      },
      w.deps,
    );
    expect(report.kind).toBe('applied');
    row = await w.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'delivered', dueAt: undefined, watched: undefined });
    w.clock.advance(DELAY_MS);
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'settled' }]);
    expect(await open(w)).toEqual([]);
  });

  it('off the happy path a row enters the index with that very write (a retry, an unknown)', async () => {
    const { w } = watchedWorld();
    const retried = await submit(w);
    w.sms.script.push({ kind: 'retryable', code: 'twilio_503', throttled: false });
    await deliverIntent({ noticeId: retried, channel: 'sms' }, w.deps);
    const doubtful = await submit(w);
    w.sms.script.push({ kind: 'ambiguous', code: 'timeout' });
    await deliverIntent({ noticeId: doubtful, channel: 'sms' }, w.deps);
    expect((await open(w)).sort()).toEqual([`${retried}/sms`, `${doubtful}/sms`].sort());
    expect((await w.store.get(retried, 'sms'))?.state).toBe('retry_scheduled');
    expect((await w.store.get(doubtful, 'sms'))?.state).toBe('unknown');
  });

  it('stays watched only along reserved → sending → accepted with nothing pending', () => {
    const watched = { watched: true } as const;
    const next = { escalationPending: undefined, fallbackDueAt: undefined, notBefore: undefined, dueAt: 1 };
    for (const state of ['reserved', 'sending', 'accepted'] as const)
      expect(staysWatched(watched, { ...next, state })).toBe(true);
    for (const state of ['retry_scheduled', 'unknown', 'failed', 'delivered'] as const)
      expect(staysWatched(watched, { ...next, state })).toBeUndefined();
    expect(staysWatched(watched, { ...next, state: 'accepted', dueAt: undefined })).toBeUndefined();
    expect(staysWatched(watched, { ...next, state: 'sending', escalationPending: true })).toBeUndefined();
    expect(staysWatched({ watched: undefined }, { ...next, state: 'sending' })).toBeUndefined();
  });
});

describe('every crash on the happy path ends in the open index', () => {
  it('intake dies between the reserve and the enqueue: the watch indexes the row, the reconciler sends it', async () => {
    const { w, sent } = watchedWorld();
    w.deps.queue.enqueue = async () => {
      throw new Error('the process died before the enqueue');
    };
    const noticeId = await submit(w);
    expect(await open(w)).toEqual([]);
    w.clock.advance(DELAY_MS);
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'indexed', state: 'reserved' }]);
    expect(await open(w)).toEqual([`${noticeId}/sms`]);
    const enqueued: IntentRef[] = [];
    w.deps.queue.enqueue = async (refs) => void enqueued.push(...refs);
    const run = await reconcile(w.deps);
    expect(run.reenqueued).toBe(1);
    expect(run.openByState).toEqual({ reserved: 1 });
    expect(enqueued).toEqual([{ noticeId, channel: 'sms' }]);
    await deliverIntent({ noticeId, channel: 'sms' }, w.deps);
    expect((await w.store.get(noticeId, 'sms'))?.state).toBe('accepted');
  });

  it('a sender dies mid-send (its redelivered message leaves a sending row): the watch indexes it, the lease ends in unknown', async () => {
    const { w, sent } = watchedWorld();
    const noticeId = await submit(w);
    w.sms.send = async () => {
      throw new Error('killed mid-call');
    };
    await expect(deliverIntent({ noticeId, channel: 'sms' }, w.deps)).rejects.toThrow();
    const claimed = await w.store.get(noticeId, 'sms');
    expect(claimed).toMatchObject({ state: 'sending', watched: true });
    // SQS hands the message again after the visibility timeout: a sending row is not the sender's.
    expect(await deliverIntent({ noticeId, channel: 'sms' }, w.deps)).toMatchObject({ kind: 'left' });
    w.clock.advance(DELAY_MS);
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'indexed', state: 'sending' }]);
    expect((await w.store.listOpen()).items[0]).toMatchObject({
      state: 'sending',
      dueAt: claimed?.leaseExpiresAt,
    });
    const run = await reconcile(w.deps);
    expect(run.actions.sending_to_unknown).toBe(1);
    expect((await w.store.get(noticeId, 'sms'))?.state).toBe('unknown');
  });

  it('an accepted row whose report never comes: the watch indexes it, the follow-up counts and asks', async () => {
    const { w, sent } = watchedWorld();
    const noticeId = await submit(w);
    await deliverIntent({ noticeId, channel: 'sms' }, w.deps);
    w.clock.advance(DELAY_MS);
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'indexed', state: 'accepted' }]);
    const run = await reconcile(w.deps);
    expect(run.awaitingReport).toBe(1);
    expect(run.oldestAwaitingReportAgeSeconds).toBe(DELAY_MS / 1000);
    expect(run.actions.follow_up_wait).toBe(1);
  });

  it('no row at the first look (a slow reserve): looks again; none at the second: never reserved', async () => {
    const w = fakeWorld();
    const ref = { noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa', channel: 'sms' } as const;
    expect(await fire(w, [ref], 1)).toEqual([{ kind: 'look_again' }]);
    expect(await fire(w, [ref], 2)).toEqual([{ kind: 'never_reserved' }]);
  });

  it('a row that moves under the watch is read again and judged as it is now', async () => {
    const { w, sent } = watchedWorld();
    const noticeId = await submit(w);
    const ref = { noticeId, channel: 'sms' } as const;
    // The watch read the reserved row; before its write the sender claims and records acceptance.
    const getRows = w.store.getRows.bind(w.store);
    w.store.getRows = async (keys) => {
      const rows = await getRows(keys);
      await deliverIntent(ref, w.deps);
      return rows;
    };
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'indexed', state: 'accepted' }]);
    expect((await w.store.get(noticeId, 'sms'))?.version).toBe(3);
  });

  it('a second watch, or a watch of a row in the index already, changes nothing', async () => {
    const { w, sent } = watchedWorld();
    const noticeId = await submit(w);
    expect(await fire(w, sent.flat())).toEqual([{ kind: 'indexed', state: 'reserved' }]);
    const before = await w.store.get(noticeId, 'sms');
    expect(await fire(w, sent.flat(), 2)).toEqual([{ kind: 'in_index' }]);
    expect(await w.store.get(noticeId, 'sms')).toEqual(before);
  });
});

describe('a batch request', () => {
  it('sends its items’ watches ahead, ten per request; the items then send none of their own', async () => {
    const { watch, sent } = recordingWatch();
    const w = fakeWorld({ watch });
    const items = Array.from({ length: 12 }, (_, i) => ({ ...EXAMPLE_REQUEST, eventId: `evt_wb_${i}` }));
    const refs = items.flatMap((item) =>
      item.channels.map((channel) => ({ noticeId: item.eventId, channel })),
    );
    const deps = await withWatchesAhead(w.deps, refs);
    expect(sent.map((chunk) => chunk.length).sort((a, b) => a - b)).toEqual([4, 10, 10]);
    await deps.watch?.watch(refs.slice(0, 2));
    expect(sent).toHaveLength(3);
    await deps.watch?.watch([{ noticeId: 'evt_other', channel: 'sms' }]);
    expect(sent.at(-1)).toEqual([{ noticeId: 'evt_other', channel: 'sms' }]);
  });
});
