/**
 * The routes across the hot window (issue 22, docs/archive.md), through the http function's
 * router on the in-memory ledger and archive: a notice whose rows left the table reads back from
 * the archive (`source: "archive"`), its replay is a 200 and its changed replay a 409 answered
 * from its key records, and operators' acts on it are a 409 problem naming it archived, never a
 * 5xx or a 404.
 */
import { describe, expect, it } from 'vitest';
import { TimelineSchema } from '../../lambdas/edge/api-responses.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { type ApiEventInput, apiEvent } from '../helpers/api-events.ts';
import { passHotWindow } from '../helpers/fakes.ts';
import { type Harness, harness, SID } from '../helpers/http-harness.ts';

const PROBLEM = 'https://notice-ledger.dev/problems';
const A = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-0a1b2c3d';
const B = 'arn:aws:sts::222222222222:assumed-role/billing-service/task-7';

const NOTICE = {
  eventId: 'evt_archived_1',
  eventType: 'lab-result-ready',
  recipient: { id: 'pat_1042', email: 'patient@example.com', phone: '+15551234567' },
  channels: ['sms'],
  template: { id: 'lab-result-ready', version: 'v3' },
  variables: { firstName: 'Ada' },
};

const as = (caller: string | undefined, input: ApiEventInput): ApiEventInput =>
  caller === undefined ? input : { ...input, caller };

/** Submitted by `caller`, sent, delivered; then HOT_RETENTION passes. The GET body before and the id. */
async function archivedSms(h: Harness, caller?: string) {
  const posted = await h.call(as(caller, { method: 'POST', path: '/v1/notices', body: NOTICE }));
  expect(posted.status).toBe(202);
  const noticeId = posted.json.noticeId as string;
  await deliverIntent({ noticeId, channel: 'sms' }, h.deps);
  await applyDeliveryReport(
    {
      ref: { noticeId, channel: 'sms' },
      provider: 'twilio',
      receiptId: SID,
      kind: 'delivered',
      at: h.clock.now + 900,
    },
    h.deps,
  );
  const before = await h.call({ method: 'GET', path: `/v1/notices/${noticeId}` });
  expect(before.json.channels[0].state).toBe('delivered');
  h.clock.now += 35 * 86_400_000;
  await passHotWindow(h, noticeId);
  expect(await h.store.getNotice(noticeId)).toEqual([]);
  return { noticeId, before: before.json };
}

describe('GET /v1/notices/{noticeId} past the hot window', () => {
  it('answers the same timeline from the archive, source archive, valid against the contract', async () => {
    // Prepare
    const h = harness();
    const { noticeId, before } = await archivedSms(h);

    // Act
    const reply = await h.call({ method: 'GET', path: `/v1/notices/${noticeId}` });

    // Assess
    expect(reply.status).toBe(200);
    expect(TimelineSchema.strict().safeParse(reply.json).success).toBe(true);
    expect(reply.json.source).toBe('archive');
    expect(before.source).toBe('ledger');
    const { source: _a, channels: after, ...noticeAfter } = reply.json;
    const { source: _b, channels: earlier, ...noticeBefore } = before;
    expect(noticeAfter).toEqual(noticeBefore);
    expect(after[0].source).toBe('archive');
    expect(after[0].transitions).toEqual(earlier[0].transitions);
    expect(after[0].transitions.map((t: { to: string }) => t.to)).toEqual([
      'reserved',
      'sending',
      'accepted',
      'delivered',
    ]);
    expect(after[0].next).toEqual({
      kind: 'none',
      at: null,
      summary: 'nothing: delivered (archived: past the hot window, final)',
    });
    expect(reply.raw.body).not.toContain('5551234567');
  });

  it("another submitter's archived notice is the 404 of an unknown one; its own submitter reads it", async () => {
    const h = harness();
    const { noticeId } = await archivedSms(h, A);
    const other = await h.call(as(B, { method: 'GET', path: `/v1/notices/${noticeId}` }));
    const own = await h.call(as(A, { method: 'GET', path: `/v1/notices/${noticeId}` }));
    expect(other.status).toBe(404);
    expect(own.status).toBe(200);
    expect(own.json.source).toBe('archive');
  });
});

describe('POST /v1/notices past the hot window', () => {
  it('the same notice is a 200 replay, a changed one a 409 naming the field, a batch item the same; nothing sent again', async () => {
    // Prepare
    const h = harness();
    const { noticeId } = await archivedSms(h);
    const enqueued = h.enqueued.length;

    // Act
    const replay = await h.call({ method: 'POST', path: '/v1/notices', body: NOTICE });
    const changed = await h.call({
      method: 'POST',
      path: '/v1/notices',
      body: { ...NOTICE, variables: { firstName: 'Grace' } },
    });
    const batch = await h.call({
      method: 'POST',
      path: '/v1/notices/batch',
      body: {
        notices: [
          NOTICE,
          { ...NOTICE, variables: { firstName: 'Ada', portalUrl: 'https://portal.example.com' } },
        ],
      },
    });

    // Assess
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({
      noticeId,
      created: false,
      channels: [{ channel: 'sms', state: 'delivered' }],
    });
    expect(changed.status).toBe(409);
    expect(changed.json).toMatchObject({
      type: `${PROBLEM}/notice-conflict`,
      noticeId,
      errors: [{ path: 'variables.firstName', code: 'differs_from_recorded' }],
      channels: [
        { channel: 'sms', state: 'delivered', outcome: 'conflict', differs: ['variables.firstName'] },
      ],
    });
    expect(batch.json.results.map((r: { status: number }) => r.status)).toEqual([200, 409]);
    expect(h.enqueued.length).toBe(enqueued);
    expect(h.sms.sent).toHaveLength(1);
    expect(await h.store.getNotice(noticeId)).toEqual([]);
  });

  it("another submitter's replay of the archived event is notice-taken, telling nothing", async () => {
    const h = harness();
    await archivedSms(h, A);
    const reply = await h.call(as(B, { method: 'POST', path: '/v1/notices', body: NOTICE }));
    expect(reply.status).toBe(409);
    expect(reply.json.type).toBe(`${PROBLEM}/notice-taken`);
    expect(reply.json).not.toHaveProperty('noticeId');
  });
});

describe('operator acts on an archived notice', () => {
  it('a resolution and a cancel answer a 409 problem naming it archived, not a 404 or a 5xx', async () => {
    // Prepare
    const h = harness();
    const { noticeId } = await archivedSms(h);

    // Act
    const resolution = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId}/channels/sms/resolution`,
      body: { outcome: 'accepted', reason: 'seen in the console' },
    });
    const cancel = await h.call({
      method: 'POST',
      path: `/v1/notices/${noticeId}/cancel`,
      body: { reason: 'not needed' },
    });

    // Assess
    expect(resolution.status).toBe(409);
    expect(resolution.raw.headers?.['content-type']).toBe('application/problem+json');
    expect(resolution.json).toMatchObject({
      type: `${PROBLEM}/state-conflict`,
      errors: [{ path: 'channel', code: 'archived' }],
      noticeId,
      channel: 'sms',
      state: 'delivered',
      source: 'archive',
    });
    expect(cancel.status).toBe(409);
    expect(cancel.json).toMatchObject({
      type: `${PROBLEM}/state-conflict`,
      errors: [{ path: 'noticeId', code: 'archived' }],
      noticeId,
      source: 'archive',
      channels: [{ channel: 'sms', state: 'delivered', cancelled: false }],
    });
  });

  it('a channel that never existed is still a 404', async () => {
    const h = harness();
    const { noticeId } = await archivedSms(h);
    const reply = await h.call(
      apiEvent({
        method: 'POST',
        path: `/v1/notices/${noticeId}/channels/email/resolution`,
        body: { outcome: 'accepted', reason: 'seen in the console' },
      }),
    );
    expect(reply.status).toBe(404);
  });
});
