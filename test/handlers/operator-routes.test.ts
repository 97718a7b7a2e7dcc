/**
 * The operator routes through the http function's router (in-memory ledger, the real use cases,
 * planners and edge schemas): GET /v1/notices, POST …/resolution, POST …/cancel.
 */
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../lambdas/domain/channel.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planTransition } from '../../lambdas/domain/transition.ts';
import { planWait } from '../../lambdas/domain/waits.ts';
import { NoticeListSchema, TimelineChannelSchema } from '../../lambdas/edge/api-responses.ts';
import type { LedgerStore } from '../../lambdas/ports/ledger-store.port.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { apiEvent } from '../helpers/api-events.ts';
import { newIntent, T0 } from '../helpers/factories.ts';
import { type Harness, harness } from '../helpers/http-harness.ts';

const PROBLEM = 'https://notice-ledger.dev/problems';
const OPERATOR_ARN = 'arn:aws:sts::123456789012:assumed-role/NoticeLedgerOperator/ada';

const withIam = (event: ReturnType<typeof apiEvent>, arn = OPERATOR_ARN) => ({
  ...event,
  requestContext: { ...event.requestContext, authorizer: { iam: { userArn: arn } } },
});

function notice(eventId: string, channels: Channel[] = ['sms']) {
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: 'patient@example.com', phone: '+15551234567' },
    channels,
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
  };
}

async function submit(h: Harness, eventId: string, channels: Channel[] = ['sms']): Promise<string> {
  const reply = await h.call({ method: 'POST', path: '/v1/notices', body: notice(eventId, channels) });
  expect(reply.status).toBe(202);
  return reply.json.noticeId as string;
}

/** The SMS send times out: the channel is `unknown` (one message may be at the provider). */
async function unknownSms(h: Harness, eventId: string): Promise<string> {
  const noticeId = await submit(h, eventId);
  h.sms.next = { kind: 'ambiguous', code: 'timeout' };
  await deliverIntent({ noticeId, channel: 'sms' }, h.deps);
  expect((await h.store.get(noticeId, 'sms'))?.state).toBe('unknown');
  return noticeId;
}

const list = (h: Harness, query: Record<string, string> | string = {}) =>
  h.call({ method: 'GET', path: '/v1/notices', query });

describe('GET /v1/notices', () => {
  it('lists unresolved channels oldest first, in pages whose cursor is stable, with the fields of the contract', async () => {
    // Prepare: 7 reserved rows created a minute apart (out of order), one terminal, one failed
    // with a pending escalation (in the index, but no unresolved intent).
    const h = harness();
    const created = [3, 1, 6, 0, 5, 2, 4].map((minute) => newIntent({ createdAt: T0 + minute * 60_000 }));
    for (const intent of created) await h.store.reserve(intent);
    const done = newIntent({ createdAt: T0 - 3_600_000 });
    await h.store.reserve(done);
    await h.store.apply(
      planTransition(done, { to: 'failed', reason: Reason.providerRejected, at: T0 }, h.deps.timing),
    );
    const pending = newIntent({ createdAt: T0 - 7_200_000 });
    await h.store.reserve(pending);
    await h.store.apply(
      planTransition(pending, { to: 'failed', reason: Reason.deadlineExceeded, at: T0 }, h.deps.timing),
    );
    h.clock.now = T0 + 10 * 60_000;

    // Act: pages of 3.
    const pages = [];
    let cursor: string | undefined;
    do {
      const reply = await list(h, { limit: '3', ...(cursor ? { cursor } : {}) });
      expect(reply.status).toBe(200);
      expect(NoticeListSchema.strict().safeParse(reply.json).success).toBe(true);
      pages.push(reply.json);
      cursor = reply.json.nextCursor ?? undefined;
      // A row created meanwhile, older than none listed yet, must not disturb the paging.
      if (pages.length === 1) await h.store.reserve(newIntent({ createdAt: T0 + 30 * 60_000 }));
    } while (cursor && pages.length < 10);

    // Assess
    const byAge = [...created].sort((a, b) => a.createdAt - b.createdAt);
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 2]);
    const listed = pages.flatMap((p) => p.items);
    expect(listed.map((i: { noticeId: string }) => i.noticeId)).toEqual([
      ...byAge.map((i) => i.noticeId),
      expect.any(String),
    ]);
    expect(listed[0]).toEqual({
      noticeId: byAge[0]?.noticeId,
      channel: 'email',
      state: 'reserved',
      createdAt: new Date(T0).toISOString(),
      deadline: new Date(byAge[0]?.deadline as number).toISOString(),
      attempts: 0,
      ageSeconds: 600,
      escalated: false,
      // Its last record, and what happens next (derived from the row, read after the index walk).
      lastReason: { reason: 'intake', at: new Date(T0).toISOString(), detail: null },
      next: {
        kind: 'send',
        at: new Date(byAge[0]?.deadline as number).toISOString(),
        summary: `waiting to be sent; failed at its deadline ${new Date(byAge[0]?.deadline as number).toISOString()} if not sent by then`,
      },
    });
    expect(pages.at(-1)?.nextCursor).toBeNull();
  });

  it('filters by state, channel and age; an escalated unknown says so', async () => {
    const h = harness();
    const unknownId = await unknownSms(h, 'evt_unknown');
    const reservedId = await submit(h, 'evt_reserved', ['email', 'sms']);
    // The unknown was escalated (UNKNOWN_POLICY=escalate after the grace).
    const row = (await h.store.get(unknownId, 'sms')) as Intent;
    h.store.intents.set(`${unknownId}|sms`, { ...row, escalatedAt: T0 + 1 });
    h.clock.now = T0 + 15 * 60_000;

    const unknown = await list(h, { state: 'unknown' });
    const sms = await list(h, { channel: 'sms' });
    const old = await list(h, { olderThan: 'PT10M' });
    const young = await list(h, { olderThan: 'PT20M' });

    expect(unknown.json.items).toEqual([
      expect.objectContaining({
        noticeId: unknownId,
        channel: 'sms',
        state: 'unknown',
        attempts: 1,
        escalated: true,
      }),
    ]);
    expect(sms.json.items.map((i: { noticeId: string }) => i.noticeId).sort()).toEqual(
      [unknownId, reservedId].sort(),
    );
    expect(old.json.items).toHaveLength(3);
    expect(young.json.items).toEqual([]);
  });

  it('refuses states that are not unresolved, unknown channels, bad durations, limits and cursors (400, naming the parameter)', async () => {
    const h = harness();
    for (let i = 0; i < 3; i++) await h.store.reserve(newIntent({ createdAt: T0 + i }));
    const first = await list(h, { limit: '1', state: 'reserved' });
    const cursor = first.json.nextCursor as string;
    const cases: [Record<string, string> | string, string, string][] = [
      [{ state: 'accepted' }, 'state', 'not_allowed'],
      [{ state: 'unknown,reserved' }, 'state', 'not_allowed'],
      [{ channel: 'fax' }, 'channel', 'not_allowed'],
      [{ olderThan: 'P1M' }, 'olderThan', 'invalid_duration'],
      [{ olderThan: '10m' }, 'olderThan', 'invalid_duration'],
      [{ limit: '0' }, 'limit', 'out_of_range'],
      [{ limit: '201' }, 'limit', 'out_of_range'],
      [{ limit: 'ten' }, 'limit', 'out_of_range'],
      [{ limit: '-1' }, 'limit', 'out_of_range'],
      [{ cursor: 'bm90LWEtY3Vyc29y' }, 'cursor', 'invalid_cursor'],
      [{ cursor, state: 'unknown' }, 'cursor', 'invalid_cursor'],
      [{ cursor }, 'cursor', 'invalid_cursor'],
      [{ sort: 'newest' }, 'sort', 'unknown_field'],
    ];
    for (const [query, path, code] of cases) {
      const reply = await list(h, query);
      expect(reply.status, JSON.stringify(query)).toBe(400);
      expect(reply.json.type).toBe(`${PROBLEM}/invalid-request`);
      expect(reply.json.errors, JSON.stringify(query)).toEqual([expect.objectContaining({ path, code })]);
    }
    // The same cursor with the same filters goes on.
    const second = await list(h, { limit: '1', state: 'reserved', cursor });
    expect(second.status).toBe(200);
    expect(second.json.items[0].noticeId).not.toBe(first.json.items[0].noticeId);
  });
});

describe('GET /v1/notices: each channel’s last reason and what happens next; recent failures', () => {
  it('a held channel says so: its hold as last reason, held until … as its next step', async () => {
    const h = harness();
    const noticeId = await submit(h, 'evt_held');
    const until = T0 + 900_000;
    await h.store.closeGate('sms', until, 'provider_throttled');
    const row = (await h.store.get(noticeId, 'sms')) as Intent;
    const held = planWait(
      row,
      { kind: 'channel_held', provider: 'twilio', reason: 'provider_throttled', until },
      { at: T0 + 1_000, wakeAt: until },
      h.deps.timing,
    );
    if (!held) throw new Error('not recorded');
    await h.store.apply(held);
    h.clock.now = T0 + 2_000;

    const reply = await list(h);

    expect(NoticeListSchema.safeParse(reply.json).success).toBe(true);
    const detail = `twilio held the channel: provider_throttled until ${new Date(until).toISOString()}`;
    expect(reply.json.items).toEqual([
      expect.objectContaining({
        noticeId,
        state: 'reserved',
        lastReason: { reason: 'channel_held', at: new Date(T0 + 1_000).toISOString(), detail },
        next: {
          kind: 'held',
          at: new Date(until).toISOString(),
          summary: `held until ${new Date(until).toISOString()}: twilio provider_throttled`,
        },
      }),
    ]);
    // The timeline says the same.
    const timeline = await h.call({ method: 'GET', path: `/v1/notices/${noticeId}` });
    expect(timeline.json.channels[0].next).toEqual(reply.json.items[0].next);
  });

  it('state=failed: the channels failed in the last day, most recent first, escalated ones marked, paged', async () => {
    const h = harness();
    const rows = [T0, T0 + 1, T0 - 3 * 86_400_000].map((createdAt) => newIntent({ createdAt }));
    for (const row of rows) await h.store.reserve(row);
    const fail = (row: Intent, reason: Reason, at: number) =>
      h.store.apply(planTransition(row, { to: 'failed', reason, at }, h.deps.timing));
    await fail(rows[0] as Intent, Reason.deadlineExceeded, T0 + 60_000);
    await fail(rows[1] as Intent, Reason.providerRejected, T0 + 120_000);
    // Failed more than a day ago: no longer listed.
    await fail(rows[2] as Intent, Reason.providerRejected, T0 - 2 * 86_400_000);
    h.clock.now = T0 + 180_000;

    const first = await list(h, { state: 'failed', limit: '1' });
    const second = await list(h, { state: 'failed', limit: '1', cursor: first.json.nextCursor });
    const unresolved = await list(h);

    expect(NoticeListSchema.safeParse(first.json).success).toBe(true);
    expect(first.json.items).toEqual([
      expect.objectContaining({
        noticeId: rows[1]?.noticeId,
        state: 'failed',
        escalated: false,
        lastReason: { reason: 'provider_rejected', at: new Date(T0 + 120_000).toISOString(), detail: null },
        next: { kind: 'none', at: null, summary: 'nothing: failed' },
      }),
    ]);
    expect(second.json.items).toEqual([
      expect.objectContaining({
        noticeId: rows[0]?.noticeId,
        state: 'failed',
        escalated: true,
        next: {
          kind: 'operator',
          at: null,
          summary: "escalated: an operator's call (deadline_exceeded)",
        },
      }),
    ]);
    expect(second.json.nextCursor).toBeNull();
    expect(unresolved.json.items).toEqual([]);
    // A failed cursor is no unresolved one.
    expect((await list(h, { cursor: first.json.nextCursor })).status).toBe(400);
  });
});

describe('POST /v1/notices/{noticeId}/channels/{channel}/resolution', () => {
  it('accepted: the unknown channel is accepted on the operator’s word, recorded with the IAM principal and their words', async () => {
    const h = harness();
    const noticeId = await unknownSms(h, 'evt_res_accept');
    const path = `/v1/notices/${noticeId}/channels/sms/resolution`;

    const reply = await h.call(
      withIam(
        apiEvent({
          method: 'POST',
          path,
          body: { outcome: 'accepted', reason: 'seen in provider console', evidence: 'ticket OPS-7' },
        }),
      ),
    );

    expect(reply.status).toBe(200);
    expect(TimelineChannelSchema.strict().safeParse(reply.json).success).toBe(true);
    expect(reply.json).toMatchObject({ channel: 'sms', state: 'accepted', providerReceiptId: null });
    expect(reply.json.transitions.at(-1)).toEqual({
      seq: 4,
      at: new Date(T0).toISOString(),
      from: 'unknown',
      to: 'accepted',
      reason: 'operator_confirmed_accepted',
      attempt: 1,
      detail: 'seen in provider console | evidence: ticket OPS-7',
      actor: OPERATOR_ARN,
    });
    const timeline = await h.call({ method: 'GET', path: `/v1/notices/${noticeId}` });
    expect(timeline.json.channels[0]).toEqual(reply.json);
    // Nothing was sent again.
    expect(h.sms.sent).toHaveLength(1);
  });

  it('not_sent: a deliberate resend, due at once, enqueued; the next send is attempt 2', async () => {
    const h = harness();
    const noticeId = await unknownSms(h, 'evt_res_not_sent');
    h.enqueued.length = 0;

    const reply = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId}/channels/sms/resolution`,
      body: { outcome: 'not_sent', reason: 'not in the provider console', actor: 'ops-7' },
    });
    h.sms.next = { kind: 'accepted', receiptId: 'SM-resent' };
    const sent = await deliverIntent({ noticeId, channel: 'sms' }, h.deps);

    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ state: 'retry_scheduled', nextAttemptAt: new Date(T0).toISOString() });
    expect(reply.json.transitions.at(-1)).toMatchObject({
      reason: 'operator_confirmed_not_sent',
      actor: 'ops-7',
      detail: 'not in the provider console',
    });
    expect(h.enqueued).toEqual([{ noticeId, channel: 'sms' }]);
    expect(sent).toMatchObject({ kind: 'recorded', state: 'accepted', attempt: 2 });
    expect(h.sms.sent).toHaveLength(2);
  });

  it('answers 409 for a channel that is not unknown, 404 for none, 400 for bad input; nothing changes', async () => {
    const h = harness();
    const noticeId = await submit(h, 'evt_res_409');
    const before = await h.store.get(noticeId, 'sms');
    const body = { outcome: 'accepted', reason: 'seen' };
    const resolve = (path: string, b: unknown = body) => h.call({ method: 'POST', path, body: b });

    const notUnknown = await resolve(`/v1/notices/${noticeId}/channels/sms/resolution`);
    const otherChannel = await resolve(`/v1/notices/${noticeId}/channels/email/resolution`);
    const badChannel = await resolve(`/v1/notices/${noticeId}/channels/fax/resolution`);
    const badId = await resolve('/v1/notices/ntc_nope/channels/sms/resolution');
    const badBody = await resolve(`/v1/notices/${noticeId}/channels/sms/resolution`, {
      outcome: 'maybe',
      reason: '',
    });
    const spoofed = await h.call(
      withIam(
        apiEvent({
          method: 'POST',
          path: `/v1/notices/${noticeId}/channels/sms/resolution`,
          body: { ...body, actor: 'someone-else' },
        }),
      ),
    );

    expect(notUnknown.status).toBe(409);
    expect(notUnknown.json).toMatchObject({
      type: `${PROBLEM}/state-conflict`,
      state: 'reserved',
      channel: 'sms',
    });
    expect(otherChannel.status).toBe(404);
    expect(badChannel.json.errors).toEqual([expect.objectContaining({ path: 'channel' })]);
    expect(badId.json.errors).toEqual([expect.objectContaining({ path: 'noticeId' })]);
    expect(badBody.status).toBe(400);
    expect(badBody.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(['outcome', 'reason']);
    expect(spoofed.json.errors).toEqual([expect.objectContaining({ path: 'actor', code: 'not_allowed' })]);
    expect(await h.store.get(noticeId, 'sms')).toEqual(before);
  });

  it('a provider answer that lands between the read and the write: re-planned, 409 (the row stays as the provider said)', async () => {
    const h = harness();
    const noticeId = await unknownSms(h, 'evt_res_race');
    // The reconciler settles the row right after the route read it.
    const store = h.store;
    const original = store.get.bind(store);
    let reads = 0;
    store.get = async (id, channel) => {
      const row = await original(id, channel);
      if (reads++ === 0 && row) {
        await store.apply(
          planTransition(
            row,
            {
              to: 'accepted',
              reason: Reason.reconciledAccepted,
              at: T0,
              set: { providerReceiptId: 'SM-found' },
            },
            h.deps.timing,
          ),
        );
      }
      return row;
    };

    const reply = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId}/channels/sms/resolution`,
      body: { outcome: 'not_sent', reason: 'not there' },
    });

    expect(reply.status).toBe(409);
    expect(reply.json.state).toBe('accepted');
    expect((await original(noticeId, 'sms'))?.transitions.at(-1)?.reason).toBe('reconciled_accepted');
    expect(h.enqueued.filter((r) => r.noticeId === noticeId)).toHaveLength(1); // intake's only
  });
});

describe('POST /v1/notices/{noticeId}/cancel', () => {
  it('reserved channels end failed (cancelled, with the actor); a channel in sending answers cancelled: false, unchanged; idempotent', async () => {
    const h = harness();
    const noticeId = await submit(h, 'evt_cancel', ['email', 'sms']);
    // SMS: a worker holds it (claimed, provider call in flight).
    const sms = (await h.store.get(noticeId, 'sms')) as Intent;
    await h.store.apply(
      planTransition(
        sms,
        {
          to: 'sending',
          reason: Reason.claimed,
          at: T0,
          attempt: 1,
          set: { attempts: 1, leaseOwner: 'w1', leaseExpiresAt: T0 + 60_000 },
        },
        h.deps.timing,
      ),
    );
    const smsBefore = await h.store.get(noticeId, 'sms');
    const cancel = (body: unknown = { reason: 'appointment cancelled' }) =>
      h.call({ method: 'POST', path: `/v1/notices/${noticeId}/cancel`, body });

    const first = await cancel();
    const again = await cancel({ reason: 'asked twice' });
    const delivered = await deliverIntent({ noticeId, channel: 'email' }, h.deps);

    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      noticeId,
      channels: [
        { channel: 'email', state: 'failed', cancelled: true },
        { channel: 'sms', state: 'sending', cancelled: false },
      ],
    });
    expect(again.json).toEqual(first.json);
    const email = await h.store.get(noticeId, 'email');
    expect(email?.transitions.at(-1)).toEqual({
      seq: 2,
      at: T0,
      from: 'reserved',
      to: 'failed',
      reason: 'cancelled',
      detail: 'appointment cancelled',
      actor: 'local',
    });
    expect(email?.transitions).toHaveLength(2); // the second cancel wrote nothing
    expect(email?.envelope).toBeUndefined();
    expect(await h.store.get(noticeId, 'sms')).toEqual(smsBefore);
    // The worker that picks the cancelled channel's message up leaves it: nothing reaches a provider.
    expect(delivered).toMatchObject({ kind: 'left', state: 'failed' });
    expect(h.sms.sent).toHaveLength(0);
  });

  it('a worker claiming between the read and the write wins: the cancel re-plans and answers cancelled: false', async () => {
    const h = harness();
    const noticeId = await submit(h, 'evt_cancel_race');
    const store: LedgerStore = h.store;
    const original = store.apply.bind(store);
    let applies = 0;
    h.store.apply = async (plan) => {
      if (applies++ === 0) {
        // The worker's claim lands first.
        const row = (await store.get(noticeId, 'sms')) as Intent;
        await original(
          planTransition(
            row,
            {
              to: 'sending',
              reason: Reason.claimed,
              at: T0,
              attempt: 1,
              set: { attempts: 1, leaseOwner: 'w1', leaseExpiresAt: T0 + 60_000 },
            },
            h.deps.timing,
          ),
        );
      }
      return original(plan);
    };

    const reply = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId}/cancel`,
      body: { reason: 'x' },
    });

    expect(reply.json.channels).toEqual([{ channel: 'sms', state: 'sending', cancelled: false }]);
    expect((await store.get(noticeId, 'sms'))?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
    ]);
  });

  it('404 for an unknown notice, 400 without a reason', async () => {
    const h = harness();
    const noticeId = await submit(h, 'evt_cancel_bad');
    const missing = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId.replace(/.$/, noticeId.endsWith('a') ? 'b' : 'a')}/cancel`,
      body: { reason: 'x' },
    });
    const noReason = await h.call({ method: 'POST', path: `/v1/notices/${noticeId}/cancel`, body: {} });
    expect(missing.status).toBe(404);
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors).toEqual([expect.objectContaining({ path: 'reason' })]);
    expect((await h.store.get(noticeId, 'sms'))?.state).toBe('reserved');
  });
});
