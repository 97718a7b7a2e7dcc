/**
 * The email simulators' test-only control endpoints (local/email-simulators/kit.ts,
 * `handleControl`), over HTTP as the local stack's users and tests reach them: settings patches
 * are checked (unknown keys, bad rates and faults refused with 400, nothing applied), the
 * settings and what the simulator holds can be read, and a reset empties it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startResendSimulator } from '../../local/email-simulators/resend.ts';
import { startSendGridSimulator } from '../../local/email-simulators/sendgrid.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const simulators = [
  {
    name: 'Resend',
    listPath: '/__emails',
    listKey: 'emails',
    async start() {
      const s = await startResendSimulator({});
      closers.push(() => s.close());
      return {
        baseUrl: s.baseUrl,
        async sendOne() {
          const r = await fetch(`${s.baseUrl}/emails`, {
            method: 'POST',
            headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't' }),
          });
          return r.status;
        },
      };
    },
  },
  {
    name: 'SendGrid',
    listPath: '/__messages',
    listKey: 'messages',
    async start() {
      const s = await startSendGridSimulator({});
      closers.push(() => s.close());
      return {
        baseUrl: s.baseUrl,
        async sendOne() {
          const r = await fetch(`${s.baseUrl}/v3/mail/send`, {
            method: 'POST',
            headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              personalizations: [{ to: [{ email: 'b@example.com' }] }],
              from: { email: 'a@example.com' },
              subject: 's',
              content: [{ type: 'text/plain', value: 't' }],
            }),
          });
          return r.status;
        },
      };
    },
  },
] as const;

describe.each(simulators)('$name simulator control endpoints', ({ listPath, listKey, start }) => {
  it('refuses bad settings with 400 and applies none; applies good ones; lists and resets', async () => {
    const sim = await start();
    const faults = (body?: unknown) =>
      fetch(`${sim.baseUrl}/__faults`, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    for (const [bad, message] of [
      [{ nosuch: 1 }, 'unknown setting: nosuch'],
      [{ rateLimitPerSecond: -1 }, 'rateLimitPerSecond must be > 0 or null'],
      [{ failNext: [{ kind: 'explode' }] }, 'unknown fault kind'],
      [{ probabilities: { status500: 0.8, status429: 0.8 } }, 'probabilities must sum to at most 1'],
    ] as const) {
      const r = await faults(bad);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe(message);
    }
    // A refused patch applied nothing: the failNext of a patch whose rate was bad is not queued.
    expect(
      (await faults({ rateLimitPerSecond: 0, failNext: [{ kind: 'status', status: 500 }] })).status,
    ).toBe(400);
    let settings = (await (await faults()).json()) as { failNext: unknown[]; rateLimitPerSecond: unknown };
    expect(settings.failNext).toEqual([]);

    const ok = await faults({ rateLimitPerSecond: 2, failNext: [{ kind: 'status', status: 500 }] });
    expect(ok.status).toBe(200);
    settings = (await ok.json()) as typeof settings;
    expect(settings.failNext).toEqual([{ kind: 'status', status: 500 }]);

    expect(await sim.sendOne()).toBe(500);
    expect(await sim.sendOne()).toBeLessThan(300);
    const listed = (await (await fetch(`${sim.baseUrl}${listPath}`)).json()) as Record<string, unknown[]>;
    expect(listed[listKey]).toHaveLength(1);
    const hooks = await fetch(`${sim.baseUrl}/__webhooks`);
    expect(Object.keys((await hooks.json()) as object).sort()).toEqual(['counters', 'delivered', 'pending']);

    expect((await fetch(`${sim.baseUrl}/__reset`, { method: 'POST' })).status).toBe(204);
    const after = (await (await fetch(`${sim.baseUrl}${listPath}`)).json()) as Record<string, unknown[]>;
    expect(after[listKey]).toHaveLength(0);
  });
});
