/**
 * A deployment of one channel, as `SMS_PROVIDER=none npm start` runs it (issue 21): no SMS
 * simulator, no SMS poller; an e-mail notice is delivered, a notice asking for SMS is refused
 * with 422 `channel_not_configured` naming the channel, and nothing of it is recorded.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, noticeBody, postNotice, testRecipient, waitFor } from './support.ts';

afterAll(async () => {
  await stopAllStacks();
});

describe('SMS_PROVIDER=none', () => {
  it('an e-mail notice is delivered; a notice asking for SMS is refused 422 channel_not_configured', {
    timeout: 120_000,
  }, async () => {
    const stack = await startStackProcess({ env: { SMS_PROVIDER: 'none', RECONCILE_INTERVAL_MS: '1000' } });
    const { email, phone } = testRecipient();
    const eventId = () => `evt_one_${randomBytes(5).toString('hex')}`;

    const both = await postNotice(stack.apiUrl, noticeBody({ eventId: eventId(), email, phone }));
    const emailOnly = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: eventId(), email, phone }),
      channels: ['email'],
    });

    expect(both.status).toBe(422);
    expect(both.contentType).toBe('application/problem+json');
    expect(both.json.errors).toEqual([
      {
        path: 'channels',
        code: 'channel_not_configured',
        message: 'this deployment does not send sms: its provider is none',
      },
    ]);
    expect(emailOnly.status).toBe(202);
    const noticeId = emailOnly.json.noticeId as string;
    const delivered = await waitFor('the e-mail delivered', async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels[0]?.state === 'delivered' ? timeline : undefined;
    });
    expect(delivered.channels.map((c) => c.channel)).toEqual(['email']);
    // The stack started no SMS simulator and says so.
    expect(stack.output()).toContain('Providers    email: ses, sms: none');
    expect(stack.output()).not.toMatch(/^ +Twilio +http/m);
    expect((await stack.stop()).code).toBe(0);
  });
});
