/**
 * `POST /v1/provider-events/resend` and `/sendgrid` through the provider-events function, on an
 * in-memory ledger: forged requests are refused and change nothing, genuine ones move the rows as
 * docs/architecture.md §10 says, and a repeated event (the same svix-id / sg_event_id, or the
 * same fact under a new id) changes nothing either.
 */
import { sign as ecdsaSign, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { createProviderEventsHandler } from '../../lambdas/handlers/provider-events.ts';
import { sign } from '../../lambdas/providers/resend/svix.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { loadInbound, providerEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { apiEvent } from '../helpers/api-events.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

const SECRET = 'whsec_c2ltdWxhdG9yLXNpZ25pbmcta2V5LTAwMDAwMDA=';
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const PUBLIC_KEY = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).toString('base64');
const ENV = {
  PUBLIC_BASE_URL: 'https://notices.example.test',
  RESEND_WEBHOOK_SECRET: SECRET,
  RESEND_API_KEY: 're_test',
  SENDGRID_WEBHOOK_PUBLIC_KEY: PUBLIC_KEY,
  SENDGRID_API_KEY: 'SG.test',
  SES_FROM_ADDRESS: 'n@example.com',
  TWILIO_AUTH_TOKEN: 'test-token',
};

async function setup(provider: 'resend' | 'sendgrid') {
  const world = fakeWorld();
  const store = world.store as MemoryLedgerStore;
  const config = readConfig(ENV);
  const runtime = providerEventsRuntime(
    config,
    { store, clock: { now: Date.now }, timing: world.deps.timing },
    await loadInbound(config, ENV),
  );
  const handler = createProviderEventsHandler(async () => runtime);
  const post = async (body: string, headers: Record<string, string>) => {
    const raw = await handler(
      apiEvent({ method: 'POST', path: `/v1/provider-events/${provider}`, body, headers }),
    );
    return raw.statusCode;
  };
  /** A notice whose email the fake transport accepted with `receipt` (or left unknown). */
  const sent = async (eventId: string, receipt: string, ambiguous = false) => {
    const result = await submitNotice({ ...EXAMPLE_REQUEST, eventId, channels: ['email'] }, world.deps);
    if (result.kind !== 'recorded') throw new Error(result.kind);
    world.email.script.push(
      ambiguous ? { kind: 'ambiguous', code: 'timeout' } : { kind: 'accepted', receiptId: receipt },
    );
    await deliverIntent({ noticeId: result.noticeId, channel: 'email' }, world.deps);
    return result.noticeId;
  };
  const row = (noticeId: string) => store.get(noticeId, 'email');
  const suppressions = () => [...store.suppressions.values()].flatMap((s) => s.records);
  return { world, store, post, sent, row, suppressions };
}

function svixHeaders(id: string, body: string, secret = SECRET) {
  const ts = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'svix-id': id,
    'svix-timestamp': String(ts),
    'svix-signature': sign(secret, id, ts, body),
  };
}

const resendEvent = (type: string, noticeId: string, emailId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type,
    created_at: new Date().toISOString(),
    data: {
      email_id: emailId,
      to: ['patient@example.com'],
      subject: 's',
      tags: { notice_intent: `${noticeId}-email` },
      ...extra,
    },
  });

describe('POST /v1/provider-events/resend', () => {
  it('forged or unsigned: refused, nothing changes', async () => {
    const t = await setup('resend');
    const id = await t.sent('evt_r1', 'email-1');
    const before = await t.row(id);
    const body = resendEvent('email.bounced', id, 'email-1', {
      bounce: { type: 'Permanent', subType: 'General' },
    });
    expect(await t.post(body, svixHeaders('msg_1', body, 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA=='))).toBe(
      403,
    );
    expect(await t.post(body, { 'content-type': 'application/json' })).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 600;
    expect(
      await t.post(body, {
        'content-type': 'application/json',
        'svix-id': 'msg_1',
        'svix-timestamp': String(stale),
        'svix-signature': sign(SECRET, 'msg_1', stale, body),
      }),
    ).toBe(403);
    expect(await t.row(id)).toEqual(before);
    expect(t.suppressions()).toEqual([]);
  });

  it('genuine events move the rows; a repeat (same svix-id, or the same fact again) changes nothing', async () => {
    const t = await setup('resend');
    const delivered = await t.sent('evt_r2', 'email-2');
    const bounced = await t.sent('evt_r3', 'email-3');
    const unknown = await t.sent('evt_r4', 'unused', true);
    expect((await t.row(unknown))?.state).toBe('unknown');

    const d = resendEvent('email.delivered', delivered, 'email-2');
    expect(await t.post(d, svixHeaders('msg_d', d))).toBe(200);
    expect((await t.row(delivered))?.state).toBe('delivered');
    const b = resendEvent('email.bounced', bounced, 'email-3', {
      bounce: { type: 'Permanent', subType: 'NoEmail' },
    });
    expect(await t.post(b, svixHeaders('msg_b', b))).toBe(200);
    expect((await t.row(bounced))?.transitions.at(-1)).toMatchObject({ to: 'failed', reason: 'hard_bounce' });
    expect(t.suppressions()).toMatchObject([
      { reason: 'hard_bounce', actor: 'resend', code: 'resend_bounce_Permanent_NoEmail' },
    ]);
    // email.sent settles an ambiguous send with the id the event names.
    const s = resendEvent('email.sent', unknown, 'email-4');
    expect(await t.post(s, svixHeaders('msg_s', s))).toBe(200);
    expect(await t.row(unknown)).toMatchObject({ state: 'accepted', providerReceiptId: 'email-4' });

    const snapshot = await Promise.all([delivered, bounced, unknown].map((id) => t.row(id)));
    // Svix's retry of the same message, and the same events under new ids.
    for (const [body, id] of [
      [d, 'msg_d'],
      [b, 'msg_b'],
      [s, 'msg_s'],
      [d, 'msg_d2'],
      [b, 'msg_b2'],
    ] as const) {
      expect(await t.post(body, svixHeaders(id, body))).toBe(200);
    }
    expect(await Promise.all([delivered, bounced, unknown].map((id) => t.row(id)))).toEqual(snapshot);
    expect(t.suppressions()).toHaveLength(1);
    // A complaint after delivery is a fact on the delivered row, told once.
    const c = resendEvent('email.complained', delivered, 'email-2');
    expect(await t.post(c, svixHeaders('msg_c', c))).toBe(200);
    expect(await t.post(c, svixHeaders('msg_c', c))).toBe(200);
    const after = await t.row(delivered);
    expect(after?.state).toBe('delivered');
    expect(after?.transitions.filter((r) => r.reason === 'complaint')).toHaveLength(1);
  });
});

function sendgridHeaders(body: string, signedAt = Date.now()) {
  const timestamp = String(Math.floor(signedAt / 1000));
  const signature = ecdsaSign('sha256', Buffer.from(timestamp + body), {
    key: privateKey,
    dsaEncoding: 'der',
  });
  return {
    'content-type': 'application/json',
    'x-twilio-email-event-webhook-signature': signature.toString('base64'),
    'x-twilio-email-event-webhook-timestamp': timestamp,
  };
}

const sgEvent = (
  event: string,
  noticeId: string,
  receipt: string,
  id: string,
  extra: Record<string, unknown> = {},
) => ({
  email: 'patient@example.com',
  timestamp: Math.floor(Date.now() / 1000),
  event,
  sg_event_id: id,
  sg_message_id: `${receipt}.filterdrecv-1-0.0`,
  notice_intent: `${noticeId}-email`,
  ...extra,
});

describe('POST /v1/provider-events/sendgrid', () => {
  it('forged: 403, nothing changes', async () => {
    const t = await setup('sendgrid');
    const id = await t.sent('evt_s1', 'W86EgYT6SQKk0lRflfLRsA');
    const before = await t.row(id);
    const body = JSON.stringify([sgEvent('bounce', id, 'W86EgYT6SQKk0lRflfLRsA', 'e1', { type: 'bounce' })]);
    const headers = sendgridHeaders(body);
    expect(await t.post(`${body} `, headers)).toBe(403);
    expect(await t.post(body, { 'content-type': 'application/json' })).toBe(403);
    expect(await t.row(id)).toEqual(before);
    expect(t.suppressions()).toEqual([]);
  });

  it('signed more than 10 minutes ago or ahead: 403, nothing changes', async () => {
    const t = await setup('sendgrid');
    const id = await t.sent('evt_s4', 'W86EgYT6SQKk0lRflfLRsA');
    const before = await t.row(id);
    const body = JSON.stringify([sgEvent('bounce', id, 'W86EgYT6SQKk0lRflfLRsA', 'e4', { type: 'bounce' })]);
    expect(await t.post(body, sendgridHeaders(body, Date.now() - 11 * 60_000))).toBe(403);
    expect(await t.post(body, sendgridHeaders(body, Date.now() + 11 * 60_000))).toBe(403);
    expect(await t.row(id)).toEqual(before);
    expect(t.suppressions()).toEqual([]);
    // The same events signed now are read.
    expect(await t.post(body, sendgridHeaders(body))).toBe(200);
    expect((await t.row(id))?.state).toBe('failed');
  });

  it('a batched delivery settles each row; the same events again (same sg_event_id) change nothing', async () => {
    const t = await setup('sendgrid');
    const a = await t.sent('evt_s2', 'AAAAAAAAAAAAAAAAAAAAAA', true);
    const b = await t.sent('evt_s3', 'BBBBBBBBBBBBBBBBBBBBBB');
    const body = JSON.stringify([
      sgEvent('processed', a, 'AAAAAAAAAAAAAAAAAAAAAA', 'a1'),
      sgEvent('delivered', a, 'AAAAAAAAAAAAAAAAAAAAAA', 'a2'),
      sgEvent('delivered', a, 'AAAAAAAAAAAAAAAAAAAAAA', 'a2'),
      sgEvent('bounce', b, 'BBBBBBBBBBBBBBBBBBBBBB', 'b1', { type: 'bounce' }),
      sgEvent('deferred', b, 'BBBBBBBBBBBBBBBBBBBBBB', 'b0'),
    ]);
    expect(await t.post(body, sendgridHeaders(body))).toBe(200);
    expect(await t.row(a)).toMatchObject({ state: 'delivered', providerReceiptId: 'AAAAAAAAAAAAAAAAAAAAAA' });
    expect((await t.row(a))?.transitions.map((r) => r.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
      'delivery_reported',
    ]);
    expect((await t.row(b))?.transitions.at(-1)).toMatchObject({ to: 'failed', reason: 'hard_bounce' });
    const snapshot = [await t.row(a), await t.row(b)];
    expect(await t.post(body, sendgridHeaders(body))).toBe(200);
    expect([await t.row(a), await t.row(b)]).toEqual(snapshot);
    expect(t.suppressions()).toHaveLength(1);
  });
});
