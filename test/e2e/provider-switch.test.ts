/**
 * Switching the e-mail provider while rows sent through the old one are still open
 * (docs/architecture.md §10 "Switching providers"): e-mail through SES first, then
 * `EMAIL_PROVIDER=infrai` and a restart with SES retained. The SES rows still settle by SES's own
 * events; new notices go through the gateway and settle by its pulled events alone.
 *
 * SES is a service the test runs (aws-ses-v2-local): in the first run the stack does not feed
 * its events (an external endpoint without LOCAL_SES_EVENTS), so the SES rows are left accepted,
 * awaiting their reports, when the stack stops; the second run feeds them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startSesLocal } from '../../local/ses/server.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import { makeDataDir, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, noticeBody, postNotice, testRecipient, waitFor } from './support.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close();
});

const channel = async (apiUrl: string, noticeId: string, name: 'email' | 'sms') =>
  (await getTimeline(apiUrl, noticeId)).channels.find((c) => c.channel === name);

describe('switching the e-mail provider', () => {
  it('SES rows still settle by SES events after EMAIL_PROVIDER=infrai; new notices go through the gateway', {
    timeout: 150_000,
  }, async () => {
    const ses = await startSesLocal();
    closers.push(() => ses.close());
    const dataDir = await makeDataDir();
    const tableName = uniqueTableName('switch');
    // An accepted row is first looked at a lease after intake (the due time it keeps): short here.
    const common = {
      RECONCILE_INTERVAL_MS: '1000',
      PROVIDER_TIMEOUT_MS: '2000',
      SEND_LEASE_MS: '3000',
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
    };

    const first = await startStackProcess({ dataDir, tableName, env: common });
    const old: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { email, phone } = testRecipient();
      const created = await postNotice(
        first.apiUrl,
        noticeBody({ eventId: `evt_sw_${randomBytes(5).toString('hex')}`, email, phone }),
      );
      expect(created.status).toBe(202);
      old.push(created.json.noticeId as string);
    }
    for (const noticeId of old) {
      await waitFor('SES accepted', async () =>
        (await channel(first.apiUrl, noticeId, 'email'))?.state === 'accepted' ? true : undefined,
      );
    }
    expect((await first.stop()).code).toBe(0);

    const second = await startStackProcess({
      dataDir,
      tableName,
      port: first.port,
      env: {
        ...common,
        EMAIL_PROVIDER: 'infrai',
        RETAINED_PROVIDERS: 'ses',
        LOCAL_SES_EVENTS: 'store',
        INFRAI_EVENT_POLL_MS: '1000',
      },
    });
    const gateway = second.state.endpoints as unknown as Record<string, string>;
    expect(gateway.infrai).toMatch(/\/v1$/);
    // The old rows: their provider is still SES, and SES's events settle them.
    for (const noticeId of old) {
      const email = await waitFor(
        'SES delivery after the switch',
        async () => {
          const c = await channel(second.apiUrl, noticeId, 'email');
          return c?.state === 'delivered' ? c : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(email.provider).toBe('ses');
      expect(email.transitions.at(-1)).toMatchObject({ reason: 'delivery_reported' });
    }
    // A new notice: through the gateway, settled by pulled events (the gateway pushes nothing).
    const { phone } = testRecipient();
    const created = await postNotice(
      second.apiUrl,
      noticeBody({
        eventId: `evt_sw_${randomBytes(5).toString('hex')}`,
        email: 'patient.switch@example.com',
        phone,
      }),
    );
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;
    const email = await waitFor(
      'gateway delivery by polling',
      async () => {
        const c = await channel(second.apiUrl, noticeId, 'email');
        return c?.state === 'delivered' ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(email.provider).toBe('infrai');
    const messages = (await (await fetch(`${gateway.infrai?.replace(/\/v1$/, '')}/__messages`)).json()) as {
      messages: { id: string }[];
      pulls: Record<string, number>;
    };
    expect(messages.messages.map((m) => m.id)).toEqual([email.providerReceiptId]);
    expect(messages.pulls[email.providerReceiptId as string]).toBeGreaterThanOrEqual(1);
    expect((await second.stop()).code).toBe(0);
  });
});
