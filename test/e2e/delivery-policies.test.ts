/**
 * Delivery policies against the local stack (docs/architecture.md §12, issue 24): a bounced
 * e-mail with a fallback to SMS sends exactly one SMS, reserved with reason `fallback`; a
 * delivered one sends none; a standard SMS to a recipient at 03:00 local time is held with the
 * estimate of 08:00 local, a critical one is sent at once. The local stack runs on the real clock,
 * so the release at the opening is shown with an injected clock in
 * test/use-cases/delivery-policies.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, noticeBody, postNotice, simulatorMessages, testRecipient, waitFor } from './support.ts';

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({
    env: { SMS_SEND_WINDOW: '08:00-21:00', SEND_WINDOW_TIME_ZONE: 'UTC', RECONCILE_INTERVAL_MS: '1000' },
  });
}, 120_000);

afterAll(async () => {
  await stopAllStacks();
});

const eventId = () => `evt_policy_${randomBytes(5).toString('hex')}`;
const smsTo = async (phone: string) =>
  (await simulatorMessages(stack.state.endpoints.twilio)).filter((m) => m.to === phone);

/** An `Etc/GMT…` zone in which it is now `hour`:xx (whole-hour offsets: minutes as in UTC). */
function zoneAt(hour: number, now: Date): string {
  let offset = (hour - now.getUTCHours() + 24) % 24; // hours to add to UTC
  if (offset > 14) offset -= 24;
  // POSIX signs: Etc/GMT-3 is UTC+3.
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

describe('channel fallback', () => {
  it('a bounced e-mail with fallback to SMS: exactly one SMS, reserved with reason fallback', {
    timeout: 60_000,
  }, async () => {
    const { phone, tag } = testRecipient();
    const accepted = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: eventId(), email: `bounce+${tag}@simulator.amazonses.com`, phone }),
      // Noon where the recipient is: the SMS window is open when the fallback reserves the SMS.
      recipient: {
        id: 'pat_1042',
        email: `bounce+${tag}@simulator.amazonses.com`,
        phone,
        timeZone: zoneAt(12, new Date()),
      },
      channels: ['email'],
      fallback: { from: 'email', to: 'sms', within: 'PT10M' },
    });
    expect(accepted.status).toBe(202);
    const noticeId = accepted.json.noticeId as string;
    const timeline = await waitFor(
      'the SMS sent by the fallback',
      async () => {
        const t = await getTimeline(stack.apiUrl, noticeId);
        const sms = t.channels.find((c) => c.channel === 'sms');
        return sms && ['accepted', 'delivered'].includes(sms.state) ? t : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 250 },
    );
    const [email, sms] = [timeline.channels[0], timeline.channels[1]];
    expect(email).toMatchObject({ channel: 'email', state: 'failed' });
    expect(sms?.transitions[0]).toMatchObject({
      from: null,
      to: 'reserved',
      reason: 'fallback',
      detail: 'email failed: hard_bounce',
    });
    expect(email?.transitions.filter((t) => t.reason === 'fallback')).toEqual([
      expect.objectContaining({
        from: 'failed',
        to: 'failed',
        detail: 'sms reserved; email failed: hard_bounce',
      }),
    ]);
    // A few more reconciler runs and provider events change nothing: one SMS.
    await sleep(3_000);
    expect(await smsTo(phone)).toHaveLength(1);
    const again = await getTimeline(stack.apiUrl, noticeId);
    expect(
      again.channels.find((c) => c.channel === 'email')?.transitions.filter((t) => t.reason === 'fallback'),
    ).toHaveLength(1);
  });

  it('a delivered e-mail: no SMS', { timeout: 60_000 }, async () => {
    const { email, phone } = testRecipient();
    const accepted = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: eventId(), email, phone }),
      channels: ['email'],
      fallback: { from: 'email', to: 'sms', within: 'PT1M' },
    });
    expect(accepted.status).toBe(202);
    const noticeId = accepted.json.noticeId as string;
    await waitFor(
      'the e-mail delivered',
      async () =>
        (await getTimeline(stack.apiUrl, noticeId)).channels[0]?.state === 'delivered' ? true : undefined,
      { timeoutMs: 40_000, intervalMs: 250 },
    );
    await sleep(3_000);
    const timeline = await getTimeline(stack.apiUrl, noticeId);
    expect(timeline.channels.map((c) => c.channel)).toEqual(['email']);
    expect(await smsTo(phone)).toHaveLength(0);
  });

  it('a replay without the fallback is a 409 naming fallback', { timeout: 30_000 }, async () => {
    const { email, phone } = testRecipient();
    const body = {
      ...noticeBody({ eventId: eventId(), email, phone }),
      channels: ['email'],
      fallback: { from: 'email', to: 'sms', within: 'PT10M' },
    };
    expect((await postNotice(stack.apiUrl, body)).status).toBe(202);
    const { fallback: _dropped, ...without } = body;
    const replay = await postNotice(stack.apiUrl, without);
    expect(replay.status).toBe(409);
    expect(JSON.stringify(replay.json)).toContain('"fallback"');
  });
});

describe('send windows (SMS_SEND_WINDOW=08:00-21:00)', () => {
  it('a standard SMS to a recipient at 03:00 local time is held with the estimate of 08:00 local', {
    timeout: 90_000,
  }, async () => {
    // Not in the last seconds of an hour: the zone is chosen here and the hour read at intake.
    if (new Date().getUTCMinutes() === 59) await sleep(61_000 - new Date().getUTCSeconds() * 1000);
    const now = new Date();
    const timeZone = zoneAt(3, now);
    const { phone } = testRecipient();
    const body = noticeBody({ eventId: eventId(), email: 'unused@example.com', phone });
    const accepted = await postNotice(stack.apiUrl, {
      ...body,
      channels: ['sms'],
      recipient: { id: 'pat_1042', phone, timeZone },
    });
    expect(accepted.status).toBe(202);
    // 03:mm local → 08:00 local: the start of this UTC hour + 5 h.
    const opening = new Date(now);
    opening.setUTCMinutes(0, 0, 0);
    opening.setUTCHours(opening.getUTCHours() + 5);
    const [channel] = accepted.json.channels as Record<string, unknown>[];
    expect(channel).toMatchObject({
      channel: 'sms',
      state: 'reserved',
      estimatedSendAt: opening.toISOString(),
      deadlineAtRisk: false,
    });
    await sleep(3_000);
    const timeline = await getTimeline(stack.apiUrl, accepted.json.noticeId as string);
    expect(timeline.channels[0]).toMatchObject({ state: 'reserved', attempts: 0 });
    expect(timeline.channels[0]?.transitions.at(-1)).toMatchObject({
      reason: 'held_for_send_window',
      detail: `until ${opening.toISOString()} (send window 08:00-21:00 ${timeZone})`,
    });
    expect(await smsTo(phone)).toHaveLength(0);
  });

  it('a critical SMS to the same recipient is sent at once, with send_window_not_applied', {
    timeout: 40_000,
  }, async () => {
    const timeZone = zoneAt(3, new Date());
    const { phone } = testRecipient();
    const accepted = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: eventId(), email: 'unused@example.com', phone }),
      channels: ['sms'],
      recipient: { id: 'pat_1042', phone, timeZone },
      priority: 'critical',
    });
    expect(accepted.status).toBe(202);
    const sent = await waitFor(
      'the SMS sent',
      async () => ((await smsTo(phone)).length > 0 ? true : undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 250,
      },
    );
    expect(sent).toBe(true);
    const timeline = await getTimeline(stack.apiUrl, accepted.json.noticeId as string);
    expect(timeline.channels[0]?.transitions.map((t) => t.reason)).toContain('send_window_not_applied');
  });

  it('an unknown recipient.timeZone is a 400 invalid_time_zone', { timeout: 30_000 }, async () => {
    const { phone } = testRecipient();
    const refused = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: eventId(), email: 'unused@example.com', phone }),
      channels: ['sms'],
      recipient: { id: 'pat_1042', phone, timeZone: 'Mars/Olympus' },
    });
    expect(refused.status).toBe(400);
    expect(refused.contentType).toBe('application/problem+json');
    expect(refused.json.errors).toEqual([
      expect.objectContaining({ path: 'recipient.timeZone', code: 'invalid_time_zone' }),
    ]);
  });
});
