/**
 * Provider failover through the local stack, as `npm start` runs it with
 * `SMS_PROVIDER=twilio SMS_FALLBACK_PROVIDER=eum` (issue 24): Twilio unreachable (its base URL a
 * loopback port nothing listens on, so every connection is refused), the EUM simulator the stack
 * starts as the fallback, the SMS sender's AWS calls checked against the union of both providers'
 * synthesized grants. The SMS ends at EUM after one refused attempt; the timeline names both.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { refusingOrigin } from '../helpers/raw-socket.ts';
import { getTimeline, noticeBody, postNotice, testRecipient, waitFor } from './support.ts';

afterAll(async () => {
  await stopAllStacks();
});

describe('npm start with SMS_PROVIDER=twilio SMS_FALLBACK_PROVIDER=eum', () => {
  it('Twilio refusing connections: the SMS is accepted by EUM after one refused attempt; the timeline names both', {
    timeout: 120_000,
  }, async () => {
    const stack = await startStackProcess({
      env: {
        SMS_PROVIDER: 'twilio',
        SMS_FALLBACK_PROVIDER: 'eum',
        TWILIO_BASE_URL: await refusingOrigin(),
        TWILIO_ACCOUNT_SID: `AC${randomBytes(16).toString('hex')}`,
        TWILIO_AUTH_TOKEN: randomBytes(16).toString('hex'),
        TWILIO_FROM: '+15005550006',
      },
    });
    expect(stack.output()).toContain('sms: twilio (fallback eum)');
    const eum = (stack.state.endpoints as unknown as Record<string, string>).eum;
    expect(eum).toMatch(/^http:\/\/127\.0\.0\.1:/);

    const { email, phone } = testRecipient();
    const created = await postNotice(stack.apiUrl, {
      ...noticeBody({ eventId: `evt_fo_${randomBytes(5).toString('hex')}`, email, phone }),
      channels: ['sms'],
    });
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;

    const sms = await waitFor(
      'the SMS accepted through EUM',
      async () => {
        const c = (await getTimeline(stack.apiUrl, noticeId)).channels.find((x) => x.channel === 'sms');
        return c && (c.state === 'accepted' || c.state === 'delivered') ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(sms.provider).toBe('eum');
    const reasons = sms.transitions.map((t) => t.reason);
    expect(reasons.slice(0, 5)).toEqual(['intake', 'claimed', 'failover', 'claimed', 'provider_accepted']);
    const failover = sms.transitions.find((t) => t.reason === 'failover');
    expect(failover?.detail).toMatch(/^twilio never_reached \(connection_refused\); next attempt via eum/);

    const held = (await (await fetch(`${eum}/__messages`)).json()) as { messages: { to: string }[] };
    expect(held.messages.filter((m) => m.to === phone)).toHaveLength(1);
    // The sender's EUM call passed the local IAM check (both providers' grants).
    expect(stack.output()).not.toMatch(/IAM: sendSms\S* may not/);
  });
});
