/**
 * Outcome events as signed Standard Webhooks (issue 23), end to end on the local stack: the
 * README's notice, a receiver of the test's own verifying every request with the Standard
 * Webhooks library, a receiver failing twice, and a secret rotation (two secrets, two signatures).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../client/cli/main.ts';
import { runCliCaptured } from '../helpers/cli.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { outcomeEventValidator } from '../helpers/outcome-schema.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { postNotice, waitFor } from './support.ts';

const secretA = `whsec_${randomBytes(24).toString('base64')}`;
const secretB = `whsec_${randomBytes(24).toString('base64')}`;
const RAW = ['success@simulator.amazonses.com', '+15551234567', '5551234567', 'Ada'];

let receiver: WebhookReceiver;
let stack: StackProcess;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startStackProcess({
    env: {
      OUTCOME_WEBHOOK_URL: receiver.url,
      // A rotation in progress: both secrets sign every webhook.
      OUTCOME_WEBHOOK_SECRET: `${secretA},${secretB}`,
      OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS: '1000,1000,1000',
    },
  });
}, 120_000);

afterAll(async () => {
  await stopAllStacks();
  await receiver?.close();
});

/** The README's first notice (a fresh event id: the table is shared by the tests of this file). */
function readmeNotice(eventId: string) {
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: 'success@simulator.amazonses.com', phone: '+15551234567' },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
    deadline: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  };
}

interface Payload {
  type: string;
  timestamp: string;
  data: { noticeId: string; channel: string; state: string; seq: number; reason: string };
}

const payloadOf = (body: string) => JSON.parse(body) as Payload;
const ofNotice = (noticeId: string) =>
  receiver.received.filter((r) => payloadOf(r.body).data.noticeId === noticeId);

describe('outcome webhooks', () => {
  it('tells the receiver accepted and delivered for both channels of the README notice, signed, without a raw destination', {
    timeout: 60_000,
  }, async () => {
    // Act
    const created = await postNotice(stack.apiUrl, readmeNotice('evt_8f31'));
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;
    const delivered = await waitFor(
      'delivered webhooks of both channels',
      async () => {
        const done = ofNotice(noticeId).filter((r) => r.status === 200);
        const types = new Set(done.map((r) => `${payloadOf(r.body).data.channel}:${payloadOf(r.body).type}`));
        const all = ['email', 'sms'].every(
          (c) => types.has(`${c}:notice.channel.accepted`) && types.has(`${c}:notice.channel.delivered`),
        );
        return all ? done : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 200 },
    );

    // Assess: every request verifies with the library, under each secret of the rotation.
    for (const request of delivered) {
      for (const secret of [secretA, secretB]) {
        const verified = new Webhook(secret).verify(request.body, request.headers) as Payload;
        expect(verified.data.noticeId).toBe(noticeId);
      }
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toMatch(/^msg_/);
      expect(Object.keys(JSON.parse(request.body)).sort()).toEqual(['data', 'timestamp', 'type']);
      const everything = `${request.body}\n${JSON.stringify(request.headers)}`;
      for (const raw of RAW) expect(everything).not.toContain(raw);
    }
    // Per channel, the transitions in seq order: reserved, sending, accepted, delivered.
    for (const channel of ['email', 'sms']) {
      const bySeq = new Map(
        delivered
          .map((r) => payloadOf(r.body))
          .filter((p) => p.data.channel === channel && p.type !== 'notice.channel.fact')
          .map((p) => [p.data.seq, p.data.state] as const),
      );
      expect([...bySeq.entries()].sort(([a], [b]) => a - b)).toEqual([
        [1, 'reserved'],
        [2, 'sending'],
        [3, 'accepted'],
        [4, 'delivered'],
      ]);
    }
    // The same events are on the bus, in the schema of docs/outcome-events.schema.json.
    const validate = outcomeEventValidator();
    const bus = (await (await fetch(`${stack.apiUrl}/console/events.json`)).json()) as {
      events: { detailType: string; detail: Payload & { id: string } }[];
    };
    const ours = bus.events.filter((e) => e.detail.data.noticeId === noticeId);
    expect(ours.length).toBeGreaterThanOrEqual(8);
    for (const event of ours) {
      expect(validate(event.detail), JSON.stringify(validate.errors)).toBe(true);
      expect(event.detailType).toBe(event.detail.type);
    }
  });

  it('retries a receiver answering 500 twice, then 200, with the same webhook-id, and never after the 200', {
    timeout: 60_000,
  }, async () => {
    // Prepare: the first two tries of this notice's email `reserved` event are refused.
    const eventId = `evt_${randomBytes(6).toString('hex')}`;
    receiver.failNext(
      (_id, body) =>
        payloadOf(body).data.channel === 'email' &&
        payloadOf(body).type === 'notice.channel.reserved' &&
        JSON.parse(body).data.eventId === eventId,
      2,
      500,
    );

    // Act
    const created = await postNotice(stack.apiUrl, readmeNotice(eventId));
    const noticeId = created.json.noticeId as string;
    const tries = await waitFor(
      'the refused event delivered',
      async () => {
        const mine = ofNotice(noticeId).filter(
          (r) =>
            payloadOf(r.body).data.channel === 'email' &&
            payloadOf(r.body).type === 'notice.channel.reserved',
        );
        return mine.some((r) => r.status === 200) ? mine : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 200 },
    );
    await sleep(3_000);

    // Assess
    const all = ofNotice(noticeId).filter(
      (r) =>
        payloadOf(r.body).data.channel === 'email' && payloadOf(r.body).type === 'notice.channel.reserved',
    );
    expect(all.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(new Set(all.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(tries[0]?.headers['webhook-id']).toBe(all[2]?.headers['webhook-id']);
    // Each try is signed anew (its own timestamp), and verifies.
    for (const request of all)
      expect(() => new Webhook(secretA).verify(request.body, request.headers)).not.toThrow();
  });

  it('signs with both secrets during a rotation: two signatures, either verifies alone', {
    timeout: 30_000,
  }, async () => {
    const request = await waitFor('a webhook', async () => receiver.received.find((r) => r.status === 200));
    const signatures = request.headers['webhook-signature']?.split(' ') ?? [];
    expect(signatures).toHaveLength(2);
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    for (const secret of [secretA, secretB]) {
      expect(() => new Webhook(secret).verify(request.body, request.headers)).not.toThrow();
    }
    // Another secret verifies neither.
    const stranger = `whsec_${randomBytes(24).toString('base64')}`;
    expect(() => new Webhook(stranger).verify(request.body, request.headers)).toThrow();
  });
});

describe('notice-ledger events', () => {
  it('prints the stream as a table, and --follow prints what comes next', { timeout: 60_000 }, async () => {
    // Prepare
    let followed = '';
    const stop = new AbortController();
    const following = runCli(['events', '--follow', '--endpoint', stack.apiUrl], {
      stdout: (text) => {
        followed += text;
      },
      stderr: () => undefined,
      readStdin: async () => '',
      env: {},
      now: () => new Date(),
      cwd: process.cwd(),
      signal: stop.signal,
    });

    // Act
    const created = await postNotice(stack.apiUrl, readmeNotice(`evt_${randomBytes(6).toString('hex')}`));
    const noticeId = created.json.noticeId as string;
    await waitFor(
      'the first two transitions of each channel followed',
      async () =>
        (followed.match(new RegExp(`${noticeId} +(email|sms) +[12] `, 'g')) ?? []).length >= 4
          ? true
          : undefined,
      { timeoutMs: 45_000, intervalMs: 200 },
    ).finally(() => stop.abort());
    expect(await following).toBe(0);
    const once = await runCliCaptured(['events', '--endpoint', stack.apiUrl], {
      env: {},
      cwd: process.cwd(),
    });

    // Assess
    expect(followed.split('\n')[0]).toMatch(
      /^#\s+at \(UTC\)\s+type\s+notice\s+channel\s+seq\s+state\s+reason/,
    );
    expect(once.code).toBe(0);
    const rows = once.stdout.split('\n').filter((line) => line.includes(noticeId));
    for (const channel of ['email', 'sms']) {
      expect(rows.filter((line) => new RegExp(` ${channel} +1 +reserved +intake `).test(line))).toHaveLength(
        1,
      );
      expect(rows.filter((line) => new RegExp(` ${channel} +2 +sending +claimed `).test(line))).toHaveLength(
        1,
      );
    }
    for (const raw of RAW) expect(once.stdout).not.toContain(raw);
  });
});
