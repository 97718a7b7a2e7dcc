/**
 * Issue 14's acceptance, against `npm start` (a child process with its own SMS simulator) and
 * through the `notice-ledger` CLI, the API and the served console page in Chromium:
 *
 * - a notice driven into `unknown` by the simulator's fault controls (the 201 held past the
 *   provider timeout, the listing the lookup needs failing, no status callbacks) shows up in
 *   `notice-ledger list --state unknown`, escalated once the grace is over; the operator checks
 *   the provider's side and resolves it `accepted` with a reason; CLI, API and page show the
 *   reason and the actor; exactly one message exists at the provider;
 * - a cancelled notice's reserved and retry_scheduled channels never reach the provider; a
 *   cancel of a channel in `sending` answers `cancelled: false` and changes nothing;
 * - the console's timeline page in a real browser for a notice that went through a 429 retry and
 *   an `unknown` resolved by an operator: lanes, reasons, order (`UPDATE_SCREENSHOTS=1` writes
 *   docs/console-timeline.png).
 *
 * Timings: a 3 s provider timeout, a reconciler every second and a 4 s grace, so that a timeout,
 * a lookup and an escalation happen within seconds; everything else is the default.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launchBrowser } from '../helpers/browser.ts';
import { runCliCaptured } from '../helpers/cli.ts';
import {
  localIamReport,
  type StackProcess,
  startStackProcess,
  stopAllStacks,
} from '../helpers/local-stack.ts';
import { logRecords } from './runbook-support.ts';
import { type ChannelTimeline, getTimeline, type Timeline, testRecipient, waitFor } from './support.ts';

const PROVIDER_TIMEOUT_MS = 3000;
/** Longer than the provider timeout: the provider got the message, our client gave up first. */
const HOLD_MS = 5000;

let stack: StackProcess;
let dir: string;
let simulator: string;

beforeAll(async () => {
  stack = await startStackProcess({
    env: {
      PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
      RECONCILE_INTERVAL_MS: '1000',
      UNKNOWN_GRACE_MS: '4000',
    },
  });
  simulator = stack.state.endpoints.twilio;
  dir = await mkdtemp(join(tmpdir(), 'nl-operator-e2e-'));
}, 120_000);

afterAll(async () => {
  await stopAllStacks();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What the stack's SMS workers did with each queue message of a notice ('delivery step' log lines). */
function deliverySteps(noticeId: string): string[] {
  return logRecords(stack.output(), 'delivery step')
    .filter((step) => step.noticeId === noticeId && step.channel === 'sms')
    .map((step) => (step.result as { kind: string }).kind);
}

function cli(args: string[], stdin = '') {
  return runCliCaptured(args, { env: { NOTICE_LEDGER_ENDPOINT: stack.apiUrl }, cwd: dir, stdin });
}

async function faults(patch: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${simulator}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (res.status !== 200) throw new Error(`POST /__faults answered ${res.status}: ${await res.text()}`);
}

/** What the provider holds for a number: the "provider console" an operator checks. */
async function messagesTo(phone: string): Promise<{ sid: string; to: string; status: string }[]> {
  const res = await fetch(`${simulator}/__messages`);
  const { messages } = (await res.json()) as { messages: { sid: string; to: string; status: string }[] };
  return messages.filter((m) => m.to === phone);
}

function smsNotice(eventId: string, phone: string, channels: string[] = ['sms']) {
  const { email } = testRecipient();
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email, phone },
    channels,
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
  };
}

async function send(body: unknown): Promise<string> {
  const result = await cli(['send', '-', '--json'], JSON.stringify(body));
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout).noticeId as string;
}

async function channel(noticeId: string, name: 'email' | 'sms'): Promise<ChannelTimeline> {
  const timeline = await getTimeline(stack.apiUrl, noticeId);
  const found = timeline.channels.find((c) => c.channel === name);
  if (!found) throw new Error(`no ${name} channel`);
  return found;
}

const reasons = (c: ChannelTimeline) => c.transitions.map((t) => t.reason);

/** Faults back to normal so the next case starts clean. */
async function clearFaults(): Promise<void> {
  await faults({ failNext: [], listingStatus: null, callbacksEnabled: true });
}

describe('an unknown, resolved by an operator with the CLI', () => {
  it('appears in list --state unknown, is resolved accepted with a reason, and every view shows the operator; one message at the provider', {
    timeout: 90_000,
  }, async () => {
    // Prepare: the provider stores the message but answers after our timeout; its listing is
    // down, so the reconciler cannot find it; no callbacks either.
    const { phone } = testRecipient();
    await faults({
      failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_MS }],
      listingStatus: 503,
      callbacksEnabled: false,
    });
    const noticeId = await send(smsNotice(`evt_op_${randomBytes(5).toString('hex')}`, phone));

    // Act 1: the operator lists what is unknown; it is escalated once the grace is over.
    await waitFor(
      'the channel escalated',
      async () => {
        const c = await channel(noticeId, 'sms');
        return c.escalatedAt ? c : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const listed = await cli(['list', '--state', 'unknown', '--json']);
    const table = await cli(['list', '--state', 'unknown']);

    // The operator checks the provider's console: the message is there.
    const atProvider = await messagesTo(phone);

    // Act 2: resolve.
    const resolved = await cli([
      'resolve',
      noticeId,
      'sms',
      '--outcome',
      'accepted',
      '--reason',
      'seen in provider console',
      '--evidence',
      `message ${atProvider[0]?.sid}`,
    ]);
    await clearFaults();

    // Assess: the list.
    expect(listed.code).toBe(0);
    const item = JSON.parse(listed.stdout).items.find((i: { noticeId: string }) => i.noticeId === noticeId);
    expect(item).toMatchObject({ channel: 'sms', state: 'unknown', attempts: 1, escalated: true });
    expect(table.stdout).toContain(noticeId);
    expect(table.stdout).toMatch(/unknown \(escalated\)/);
    expect(atProvider).toHaveLength(1);

    // The resolution, in the CLI's answer, the CLI's timeline, the API and the page.
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain('accepted');
    const c = await channel(noticeId, 'sms');
    expect(c.state).toBe('accepted');
    expect(reasons(c)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'unknown_escalated',
      'operator_confirmed_accepted',
    ]);
    expect(c.transitions.at(-1)).toMatchObject({
      from: 'unknown',
      to: 'accepted',
      reason: 'operator_confirmed_accepted',
      actor: 'local',
      detail: `seen in provider console | evidence: message ${atProvider[0]?.sid}`,
    });
    const text = await cli(['get', noticeId]);
    expect(text.stdout).toMatch(
      /unknown → accepted\s+operator_confirmed_accepted\s+1\s+local\s+seen in provider console/,
    );
    expect(text.stdout).toMatch(/unknown → unknown\s+unknown_escalated \(escalated\)\s+1/);
    const page = await fetch(`${stack.apiUrl}/console/notices/${noticeId}`);
    const html = await page.text();
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html).toContain('operator_confirmed_accepted #1 by local');
    expect(html).toContain('seen in provider console');
    // No longer unknown; and nothing is sent again, however long we wait (the reconciler runs every second).
    const after = await cli(['list', '--state', 'unknown', '--json']);
    expect(JSON.parse(after.stdout).items.map((i: { noticeId: string }) => i.noticeId)).not.toContain(
      noticeId,
    );
    await sleep(3000);
    expect(await messagesTo(phone)).toHaveLength(1);
    expect(reasons(await channel(noticeId, 'sms'))).toHaveLength(5);
  });
});

describe('cancel', () => {
  it('reserved and retry_scheduled channels end cancelled and never reach the provider; a channel in sending answers cancelled: false, unchanged', {
    timeout: 90_000,
  }, async () => {
    // Prepare 1: a channel held in `sending` (the provider sits on the request, then refuses).
    const held = testRecipient();
    await faults({ failNext: [{ kind: 'timeout_before_accept', delayMs: 2500 }] });
    const sendingId = await send(smsNotice(`evt_cs_${randomBytes(5).toString('hex')}`, held.phone));
    const inFlight = await waitFor('the channel sending', async () => {
      const c = await channel(sendingId, 'sms');
      return c.state === 'sending' ? c : undefined;
    });
    const sendingCancel = await cli(['cancel', sendingId, '--reason', 'appointment cancelled', '--json']);
    const untouched = await channel(sendingId, 'sms');

    // Prepare 2: a 429 with Retry-After 15 s: that channel is retry_scheduled and the channel's
    // gate is closed, so the next notice's channel waits in `reserved`.
    await waitFor(
      'the held attempt over',
      async () => ((await channel(sendingId, 'sms')).state !== 'sending' ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const throttled = testRecipient();
    const waiting = testRecipient();
    await faults({ failNext: [{ kind: 'status', status: 429, retryAfterSeconds: 15 }] });
    const retryId = await send(smsNotice(`evt_cr_${randomBytes(5).toString('hex')}`, throttled.phone));
    await waitFor('retry_scheduled', async () =>
      (await channel(retryId, 'sms')).state === 'retry_scheduled' ? true : undefined,
    );
    const reservedId = await send(smsNotice(`evt_cv_${randomBytes(5).toString('hex')}`, waiting.phone));
    await waitFor('its worker has seen the closed gate and put the message back', async () =>
      deliverySteps(reservedId).includes('deferred') ? true : undefined,
    );
    const reservedBefore = await channel(reservedId, 'sms');

    // Act
    const cancelled = await Promise.all(
      [retryId, reservedId].map((id) => cli(['cancel', id, '--reason', 'appointment cancelled', '--json'])),
    );
    const again = await cli(['cancel', reservedId, '--reason', 'asked twice', '--json']);
    const table = await cli(['cancel', reservedId, '--reason', 'asked twice']);
    // Past the advised 15 s: the gate opens and both queue messages come back to a worker, which
    // leaves the cancelled rows as they are (a step that does not put the message back again).
    const stepsAtCancel = [retryId, reservedId].map((id) => deliverySteps(id).length);
    await waitFor(
      'both queue messages back at a worker',
      async () =>
        [retryId, reservedId].every((id, i) =>
          deliverySteps(id)
            .slice(stepsAtCancel[i])
            .some((kind) => kind !== 'deferred'),
        )
          ? true
          : undefined,
      { timeoutMs: 40_000, intervalMs: 250 },
    );

    // Assess: in flight → not cancelled, nothing written.
    expect(inFlight.transitions).toHaveLength(2);
    expect(JSON.parse(sendingCancel.stdout)).toEqual({
      noticeId: sendingId,
      channels: [{ channel: 'sms', state: 'sending', cancelled: false }],
    });
    expect(untouched.transitions).toEqual(inFlight.transitions);
    // Reserved and retry_scheduled → failed, cancelled, with the actor; never at the provider.
    expect(reservedBefore.state).toBe('reserved');
    for (const [i, id] of [retryId, reservedId].entries()) {
      expect(JSON.parse(cancelled[i]?.stdout ?? '')).toEqual({
        noticeId: id,
        channels: [{ channel: 'sms', state: 'failed', cancelled: true }],
      });
      const c = await channel(id, 'sms');
      expect(c.state).toBe('failed');
      expect(c.transitions.at(-1)).toMatchObject({
        reason: 'cancelled',
        actor: 'local',
        detail: 'appointment cancelled',
      });
    }
    expect(reasons(await channel(retryId, 'sms'))).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'cancelled',
    ]);
    // The closed gate it waited behind is on its timeline, once (docs/architecture.md §4 "No silent waits").
    expect(reasons(await channel(reservedId, 'sms'))).toEqual(['intake', 'channel_held', 'cancelled']);
    expect((await channel(reservedId, 'sms')).transitions[1]?.detail).toMatch(
      /^twilio held the channel: provider_throttled until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(cancelled[1]?.stdout ?? ''));
    expect(table.stdout).toMatch(/sms\s+failed\s+yes/);
    expect(await messagesTo(throttled.phone)).toEqual([]);
    expect(await messagesTo(waiting.phone)).toEqual([]);
  });
});

describe('the console timeline page in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let noticeId: string;

  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('a notice through a 429 retry and an unknown resolved by an operator: lanes, reasons, order', {
    timeout: 90_000,
  }, async () => {
    // Prepare: e-mail sent normally; SMS throttled once (Retry-After 1 s), then accepted behind
    // the timeout with the listing down: unknown, escalated, then resolved by an operator.
    await clearFaults();
    const recipient = testRecipient();
    await faults({
      failNext: [
        { kind: 'status', status: 429, retryAfterSeconds: 1 },
        { kind: 'timeout_after_accept', delayMs: HOLD_MS },
      ],
      listingStatus: 503,
      callbacksEnabled: false,
    });
    noticeId = await send({
      ...smsNotice(`evt_page_${randomBytes(5).toString('hex')}`, recipient.phone, ['email', 'sms']),
      recipient: { id: 'pat_1042', email: recipient.email, phone: recipient.phone },
    });
    await waitFor(
      'the SMS escalated',
      async () => ((await channel(noticeId, 'sms')).escalatedAt ? true : undefined),
      {
        timeoutMs: 40_000,
        intervalMs: 250,
      },
    );
    await sleep(2000); // a person takes a moment: the page then shows the escalation and the act apart
    const resolved = await fetch(`${stack.apiUrl}/v1/notices/${noticeId}/channels/sms/resolution`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'accepted', reason: 'seen in provider console', actor: 'ops-ada' }),
    });
    expect(resolved.status).toBe(200);
    await clearFaults();
    const timeline: Timeline = await waitFor('the e-mail delivered', async () => {
      const t = await getTimeline(stack.apiUrl, noticeId);
      return t.channels.find((c) => c.channel === 'email')?.state === 'delivered' ? t : undefined;
    });

    // Act
    page = await browser.context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const response = await page.goto(`${stack.apiUrl}/console/notices/${noticeId}`);

    // Assess
    expect(response?.status()).toBe(200);
    const lanes = await page
      .locator('[data-lane]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-lane')));
    expect(lanes).toEqual(['email', 'sms']);
    const points = async (lane: string) => {
      const out: {
        seq: number;
        reason: string;
        x: number;
        label: string;
        person: boolean;
        escalation: boolean;
      }[] = [];
      const located = page.locator(`[data-lane="${lane}"] .point[data-seq]`);
      for (let i = 0; i < (await located.count()); i++) {
        const p = located.nth(i);
        const box = await p.locator('.dot').boundingBox();
        const classes = (await p.getAttribute('class')) ?? '';
        out.push({
          seq: Number(await p.getAttribute('data-seq')),
          reason: String(await p.getAttribute('data-reason')),
          x: (box?.x ?? 0) + (box?.width ?? 0) / 2,
          label: ((await p.locator('.label').textContent()) ?? '').trim(),
          person: classes.includes('person'),
          escalation: classes.includes('escalation'),
        });
      }
      return out;
    };
    const email = await points('email');
    const sms = await points('sms');
    expect(email.map((p) => p.reason)).toEqual([
      'intake',
      'claimed',
      'provider_accepted',
      'delivery_reported',
    ]);
    expect(sms.map((p) => p.reason)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_timeout',
      'unknown_escalated',
      'operator_confirmed_accepted',
    ]);
    for (const lane of [email, sms]) {
      expect(lane.map((p) => p.seq)).toEqual(lane.map((_, i) => i + 1));
      for (let i = 1; i < lane.length; i++)
        expect(lane[i]?.x, `point ${i + 1}`).toBeGreaterThanOrEqual(lane[i - 1]?.x ?? 0);
    }
    expect(sms[3]?.label).toBe('claimed #2');
    expect(sms[5]?.escalation).toBe(true);
    expect(sms[6]).toMatchObject({ person: true, label: 'operator_confirmed_accepted #2 by ops-ada' });
    expect(await page.locator('[data-lane="sms"] [data-wait="retry"]').count()).toBe(1);
    expect(await page.locator('[data-lane="sms"] [data-wait="unknown"]').count()).toBe(1);
    const row = page.locator('[data-channel="sms"] table.transitions tr[data-seq="7"]');
    expect(await row.locator('td.actor').textContent()).toBe('ops-ada');
    expect(await row.locator('td.detail').textContent()).toBe('seen in provider console');
    // The page is what the API says, and it loads nothing else.
    expect(timeline.channels.find((c) => c.channel === 'sms')?.transitions).toHaveLength(7);
    expect(requests).toEqual([`${stack.apiUrl}/console/notices/${noticeId}`]);

    const shot = await page.screenshot({ fullPage: true });
    expect(shot.byteLength).toBeGreaterThan(10_000);
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await writeFile(join(import.meta.dirname, '..', '..', 'docs', 'console-timeline.png'), shot);
    }
  });

  it('GET /console lists what is still unresolved, with counts and links to these pages', async () => {
    const list = await browser.context.newPage();
    await list.goto(`${stack.apiUrl}/console`);
    expect(await list.locator('h1').textContent()).toBe('Unresolved channels (local stack)');
    for (const state of ['reserved', 'sending', 'retry_scheduled', 'unknown']) {
      expect(Number(await list.locator(`[data-count="${state}"]`).textContent())).toBeGreaterThanOrEqual(0);
    }
    // The resolved notice is not listed.
    expect(await list.locator(`tr[data-notice="${noticeId}"]`).count()).toBe(0);
  });
});

describe('local IAM (local/iam/)', () => {
  it('every stack of this file ran with IAM enforced, and no AWS call of any function or event source was denied', () => {
    const report = localIamReport();
    expect(report.ready).toBeGreaterThan(0);
    expect(report.enforced).toBe(report.ready);
    expect(report.denials).toEqual([]);
  });
});
