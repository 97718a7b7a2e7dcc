/**
 * The local console (local/console.ts) over the http function in-process: the pages it serves
 * are rendered from the API's own answers.
 */
import { describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../client/html/html.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { CONSOLE_REFRESH_SECONDS, isConsolePath, serveConsole } from '../../local/console.ts';
import { apiEvent } from '../helpers/api-events.ts';
import { T0 } from '../helpers/factories.ts';
import { harness } from '../helpers/http-harness.ts';

function setup() {
  const h = harness();
  const api = async (event: ReturnType<typeof apiEvent>) => (await h.call(event)).raw;
  const page = (path: string, method = 'GET') =>
    serveConsole(apiEvent({ method, path }), api, () => new Date(T0 + 5 * 60_000));
  return { h, page };
}

async function submitSms(h: ReturnType<typeof harness>, eventId: string): Promise<string> {
  const reply = await h.call({
    method: 'POST',
    path: '/v1/notices',
    body: {
      eventId,
      eventType: 'lab-result-ready',
      recipient: { id: 'pat_1042', phone: '+15551234567' },
      channels: ['sms'],
      template: { id: 'lab-result-ready', version: 'v3' },
      variables: { firstName: 'Ada' },
    },
  });
  return reply.json.noticeId as string;
}

describe('local console', () => {
  it('GET /console: unresolved channels oldest first, counts per state, the oldest age, links to timelines', async () => {
    const { h, page } = setup();
    const reserved = await submitSms(h, 'evt_console_1');
    const unknown = await submitSms(h, 'evt_console_2');
    h.sms.next = { kind: 'ambiguous', code: 'timeout' };
    await deliverIntent({ noticeId: unknown, channel: 'sms' }, h.deps);

    const reply = await page('/console');

    expect(reply.statusCode).toBe(200);
    expect(reply.headers?.['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.headers?.['content-security-policy']).toBe(PAGE_CSP);
    const html = reply.body ?? '';
    expect(html).toMatch(/data-count="reserved">1</);
    expect(html).toMatch(/data-count="unknown">1</);
    expect(html).toMatch(/data-oldest-age>5m/);
    expect(html).toContain(`href="/console/notices/${unknown}"`);
    expect(html).toContain(`href="/console/notices/${reserved}"`);
  });

  it('GET /console: each channel’s last reason and next step, the channels failed recently, and it reloads itself', async () => {
    const { h, page } = setup();
    const waiting = await submitSms(h, 'evt_console_w');
    const failing = await submitSms(h, 'evt_console_f');
    h.sms.next = { kind: 'rejected', code: 'twilio_21211', permanent: true };
    await deliverIntent({ noticeId: failing, channel: 'sms' }, h.deps);

    const html = (await page('/console')).body ?? '';

    // Reloads itself (the pages run no script: a meta refresh, which the CSP allows).
    expect(html).toContain(`<meta http-equiv="refresh" content="${CONSOLE_REFRESH_SECONDS}">`);
    const unresolved = html.slice(0, html.indexOf('Failed in the last 24 hours'));
    expect(unresolved).toContain(`data-notice="${waiting}"`);
    expect(unresolved).toMatch(
      /<td class="why"><code>intake<\/code><\/td>\s*<td class="next" data-next="send">waiting to be sent/,
    );
    const failed = html.slice(html.indexOf('Failed in the last 24 hours'));
    expect(failed).toContain(`data-notice="${failing}"`);
    expect(failed).toContain('<code>provider_rejected: twilio_21211</code>');
    expect(failed).toContain('data-next="none">nothing: failed');
    expect(unresolved).not.toContain(`data-notice="${failing}"`);
  });

  it('GET /console/notices/{id}: the timeline page; unknown ids are a 404 page', async () => {
    const { h, page } = setup();
    const noticeId = await submitSms(h, 'evt_console_3');
    await deliverIntent({ noticeId, channel: 'sms' }, h.deps);

    const found = await page(`/console/notices/${noticeId}`);
    const missing = await page(
      `/console/notices/${noticeId.replace(/.$/, noticeId.endsWith('a') ? 'b' : 'a')}`,
    );
    const malformed = await page('/console/notices/%E0%A4%A');
    const posted = await page('/console', 'POST');

    expect(found.statusCode).toBe(200);
    expect(found.body).toContain(`Notice ${noticeId}`);
    expect(found.body).toContain('data-lane="sms"');
    expect(found.body).toContain('data-reason="provider_accepted"');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('No such notice');
    expect(malformed.statusCode).toBe(400);
    expect(posted.statusCode).toBe(405);
  });

  it('claims only its own paths', () => {
    expect(isConsolePath('/console')).toBe(true);
    expect(isConsolePath('/console/notices/ntc_x')).toBe(true);
    expect(isConsolePath('/console/other')).toBe(false);
    expect(isConsolePath('/v1/notices')).toBe(false);
  });
});
