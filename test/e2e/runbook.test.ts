/**
 * The runbook of docs/architecture.md §7, as tests. Each case drives `npm start` (a child process) over HTTP
 * and asserts two things independently: the ledger (the operator timeline) and the provider
 * side (what the SES emulator and the SMS simulator actually hold). Every case must end with
 * exactly one provider-side message per (notice, channel), or zero where a suppression or a
 * permanent rejection says so, and a timeline that tells what happened, in order, with
 * `unknown` wherever the outcome of an attempt was ambiguous.
 *
 * Providers live in this process (runbook-support.ts) so that what they received survives a
 * kill -9 of the stack; each stack uses the test run's DynamoDB Local with a table of its own,
 * the same table across its restarts. SQS and the Scheduler stand-in are the stack's own
 * unless a case needs to tamper with them.
 *
 * Unknown policy: these stacks run with the default `UNKNOWN_POLICY=escalate`, and each case that
 * can leave an `unknown` ends with the operator's action, as the runbook asks of the person paged:
 * with `LOCAL_SES_EVENTS=store` the stack feeds SES events every 500 ms, so a mail SES accepted is
 * settled by its Delivery event (the configuration set publishes no Send) well within
 * `UNKNOWN_GRACE_MS` (4 s); an `unknown` email row with no event after the grace is escalated (SES offers no lookup) and stays `unknown`. The runbook's
 * operator (`runbookOperator`) then looks at the provider's side and resolves it through the API:
 * `not_sent` for a mail SES never got (a deliberate resend, with their name on it), `accepted` for
 * one it holds. An SMS is settled by the reconciler's own lookup (a complete listing).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../lambdas/domain/channel.ts';
import { CRASH_POINTS } from '../../local/crash-points.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import {
  freePort,
  makeDataDir,
  type StackProcess,
  type StackProcessOptions,
  startStackProcess,
  stopAllStacks,
} from '../helpers/local-stack.ts';
import {
  allResolved,
  atMs,
  channelOf,
  claimsOf,
  emailsFor,
  eventId,
  expectCrash,
  HOLD_PAST_TIMEOUT_MS,
  lanePriority,
  ledgerRow,
  logRecords,
  noticeRequest,
  type Providers,
  path,
  phoneBook,
  providerSide,
  RUNBOOK_OPERATOR,
  randomKey,
  reasonsOf,
  retryGaps,
  runbookOperator,
  SENT,
  SHORT_TIMINGS,
  startLossySqs,
  startProviders,
  textsFor,
  waitForTimelines,
} from './runbook-support.ts';
import { assertWellFormed, type ChannelTimeline, postNotice, type Timeline } from './support.ts';

const closers: (() => Promise<void>)[] = [];

afterAll(async () => {
  // Its start-up may still be under way (a filtered run): let it finish, then stop everything.
  await lostSchedule?.catch(() => undefined);
  await stopAllStacks();
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const LEASE_MS = Number(SHORT_TIMINGS.SEND_LEASE_MS);

interface Lab {
  readonly providers: Providers;
  readonly tableName: string;
  /** The configuration every start of this lab's stack gets. */
  readonly env: Readonly<Record<string, string>>;
  /** Starts the stack on this lab's data dir, port and table, with `extra` configuration on top. */
  start(extra?: Record<string, string>): Promise<StackProcess>;
}

/** The runbook's notices, spread over the three lanes (docs/architecture.md §11). */
function laneNotice(spec: Parameters<typeof noticeRequest>[0]): ReturnType<typeof noticeRequest> {
  return noticeRequest({ ...spec, priority: lanePriority(spec.eventId) });
}

async function lab(name: string, env: Record<string, string> = {}): Promise<Lab> {
  const providers = await startProviders();
  closers.push(() => providers.close());
  const tableName = uniqueTableName(`runbook-${name}`);
  const base: StackProcessOptions = {
    dynamodb: 'shared',
    dataDir: await makeDataDir(`notice-ledger-runbook-${name}-`),
    port: await freePort(),
    tableName,
  };
  // Priorities in the mix (issue 15): every lane has its own queues, notices are spread over them.
  const fullEnv = { ...providers.env, ...SHORT_TIMINGS, LOCAL_LANES: 'on', ...env };
  return {
    providers,
    tableName,
    env: fullEnv,
    start: (extra = {}) => startStackProcess({ ...base, env: { ...fullEnv, ...extra } }),
  };
}

function describeChannel(label: string, channel: ChannelTimeline, sent: number): string {
  return `${label} ${channel.channel}: ${channel.state}, provider-side ${sent}, attempts ${channel.attempts} | ${path(channel)}`;
}

/** Every timeline must be well formed: seq 1..n, each `from` the previous `to`, times in order. */
function expectWellFormed(channel: ChannelTimeline): void {
  expect(assertWellFormed(channel.transitions), path(channel)).toEqual([]);
}

/** Milliseconds from the record at index `from` to the one at index `to`. */
function msBetween(channel: ChannelTimeline, from: number, to: number): number {
  const a = channel.transitions[from];
  const b = channel.transitions[to];
  if (!a || !b) throw new Error(`no records ${from} and ${to} in ${path(channel)}`);
  return atMs(b) - atMs(a);
}

function detailOf(channel: ChannelTimeline, reason: string): string {
  const detail = channel.transitions.find((t) => t.reason === reason)?.detail;
  return typeof detail === 'string' ? detail : '';
}

// --- the lost schedule runs in the background: its retry is 61 s away ------------------------

/**
 * A retry further out than a minute is the one that goes through EventBridge Scheduler (shorter
 * ones ride on an SQS delay). The stand-in acknowledges the CreateSchedule and forgets it. It is
 * started before the other cases and awaited last, so its minute of waiting overlaps them.
 */
interface LostScheduleRun {
  readonly stack: StackProcess;
  readonly lab: Lab;
  readonly noticeId: string;
  readonly phone: string;
  readonly schedulerEndpoint: string;
  /** Resolves once the notice is resolved (bounded), with its timeline. */
  readonly settled: Promise<Timeline>;
}

const RETRY_AFTER_LONG_S = 61;

async function startLostSchedule(): Promise<LostScheduleRun> {
  const l = await lab('schedule');
  const stack = await l.start();
  const schedulerEndpoint = stack.state.endpoints.scheduler;
  if (!schedulerEndpoint) throw new Error('the stack runs no Scheduler stand-in');
  const faults = await fetch(`${schedulerEndpoint}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dropNextCreates: 1 }),
  });
  if (faults.status !== 200) throw new Error(`POST /__faults answered ${faults.status}`);
  l.providers.sms.faults.set({
    failNext: [{ kind: 'status', status: 429, retryAfterSeconds: RETRY_AFTER_LONG_S }],
  });
  const phone = phoneBook()();
  const notice = laneNotice({ eventId: eventId('schedule'), phone });
  const posted = await postNotice(stack.apiUrl, notice.body);
  if (posted.status !== 202) throw new Error(`POST /v1/notices answered ${posted.status}`);
  const settled = waitForTimelines(stack.apiUrl, [notice.noticeId], allResolved, {
    timeoutMs: (RETRY_AFTER_LONG_S + 30) * 1000,
    intervalMs: 1000,
    what: 'the notice whose schedule was lost',
  }).then((timelines) => timelines[0] as Timeline);
  // Awaited by its test; a failure before then must not surface as an unhandled rejection.
  settled.catch(() => undefined);
  return { stack, lab: l, noticeId: notice.noticeId, phone, schedulerEndpoint, settled };
}

let lostSchedule: Promise<LostScheduleRun> | undefined;

beforeAll(() => {
  // Not awaited: a failure belongs to the lost-schedule test, not to every test of the file.
  lostSchedule = startLostSchedule();
  lostSchedule.catch(() => undefined);
});

// --- kill -9 at the three crash points -------------------------------------------------------

describe('kill -9 of the worker at a crash point, then restart on the same data', () => {
  for (const point of CRASH_POINTS) {
    // Three lives of the stack (two killed, one surviving), each starting DynamoDB Local's stream
    // consumers and the archive store: 150 s leaves a loaded 2-core machine room.
    it(`${point}: one provider-side message per channel, and the timeline says what happened`, {
      timeout: 150_000,
    }, async () => {
      // Prepare: one email-only and one SMS-only notice, each killed in its own life of the stack.
      const l = await lab(point.replaceAll('_', '-'));
      const phone = phoneBook()();
      const targets: { channel: Channel; notice: ReturnType<typeof noticeRequest> }[] = [
        {
          channel: 'email',
          notice: laneNotice({
            eventId: eventId(`${point}_e`),
            email: `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`,
          }),
        },
        { channel: 'sms', notice: laneNotice({ eventId: eventId(`${point}_s`), phone }) },
      ];
      const atCrash: { state: string | undefined; attempts: number | undefined; sent: number }[] = [];

      // Act: each life takes one notice and dies at the crash point.
      for (const { channel, notice } of targets) {
        const stack = await l.start({
          CRASH_POINT: point,
          CRASH_POINT_NOTICE: notice.noticeId,
          CRASH_POINT_CHANNEL: channel,
        });
        // The answer normally leaves long before the worker reaches the crash point; if the kill
        // won that race, the client's retry after the restart is a replay (200) of a durable intent.
        const posted = await postNotice(stack.apiUrl, notice.body).catch(() => undefined);
        const crash = await expectCrash(stack);
        expect(crash.signal).toBe('SIGKILL');
        expect(crash.line).toBe(`crash point ${point} reached for ${notice.noticeId}-${channel}: SIGKILL`);
        if (posted) expect(posted.status).toBe(202);
        const row = await ledgerRow(l.tableName, notice.noticeId, channel);
        const side = await providerSide(l.providers);
        atCrash.push({
          state: row?.state,
          attempts: row?.attempts,
          sent: channel === 'email' ? emailsFor(side, notice.noticeId).length : textsFor(side, phone).length,
        });
      }
      const survivor = await l.start();
      for (const { notice } of targets) {
        const replay = await postNotice(survivor.apiUrl, notice.body);
        expect([200, 202]).toContain(replay.status);
      }
      const operator = runbookOperator(survivor.apiUrl, l.providers, (id) =>
        id === targets[1]?.notice.noticeId ? phone : undefined,
      );
      const timelines = await waitForTimelines(
        survivor.apiUrl,
        targets.map((t) => t.notice.noticeId),
        allResolved,
        { timeoutMs: 45_000, what: `both channels after ${point}`, operator },
      );

      // Assess
      const side = await providerSide(l.providers);
      const lines: string[] = [];
      targets.forEach(({ channel, notice }, i) => {
        const timeline = timelines[i] as Timeline;
        const c = channelOf(timeline, channel);
        const ids = channel === 'email' ? emailsFor(side, notice.noticeId) : textsFor(side, phone);
        lines.push(describeChannel(point, c, ids.length));
        const crashed = atCrash[i];
        // At the crash the row holds the attempt's lease, whatever the provider got.
        expect(crashed?.state, `${channel} at the crash`).toBe('sending');
        expect(crashed?.attempts).toBe(1);
        expect(crashed?.sent, `${channel} provider-side at the crash`).toBe(point === 'before_send' ? 0 : 1);

        // Exactly one message at the provider, and the ledger names it.
        expect(ids, `${channel}: ${path(c)}`).toHaveLength(1);
        expect(SENT.has(c.state), `${channel}: ${path(c)}`).toBe(true);
        expect(c.providerReceiptId).toBe(ids[0]);
        expectWellFormed(c);
        const reasons = reasonsOf(c);
        if (point === 'before_send' && channel === 'sms') {
          // Nothing reached the provider: the lease expired into `unknown`, a complete listing
          // without it proved it, and a deliberate second attempt sent it once.
          expect(reasons.slice(0, 6)).toEqual([
            'intake',
            'claimed',
            'lease_expired',
            'reconciled_not_sent',
            'claimed',
            'provider_accepted',
          ]);
          expect(c.attempts).toBe(2);
        } else if (point === 'before_send') {
          // SES cannot be asked and sent no event: escalated after the grace, still unknown; the
          // operator finds no mail at SES and resolves `not_sent`; the resend is attempt 2.
          expect(reasons.slice(0, 7)).toEqual([
            'intake',
            'claimed',
            'lease_expired',
            'unknown_escalated',
            'operator_confirmed_not_sent',
            'claimed',
            'provider_accepted',
          ]);
          expect(c.transitions[4]).toMatchObject({
            actor: RUNBOOK_OPERATOR,
            detail: 'not in provider console',
          });
          expect(operator.acts).toEqual([
            { noticeId: notice.noticeId, channel: 'email', outcome: 'not_sent', status: 200 },
          ]);
          expect(c.attempts).toBe(2);
        } else if (channel === 'sms') {
          // The provider held it; the reconciler found it by listing, and nothing was resent.
          expect(reasons.slice(0, 4)).toEqual(['intake', 'claimed', 'lease_expired', 'reconciled_accepted']);
          expect(c.attempts).toBe(1);
        } else {
          // SES's Delivery event settles the row: either while it is still `sending` (the feed after
          // the restart came first) or after the reconciler turned the dead lease into `unknown`.
          expect(claimsOf(c)).toHaveLength(1);
          expect(c.attempts).toBe(1);
          const viaReport = ['intake', 'claimed', 'provider_accepted'];
          const viaUnknown = ['intake', 'claimed', 'lease_expired', 'reconciled_accepted'];
          expect([viaReport, viaUnknown]).toContainEqual(
            reasons.slice(0, reasons[2] === 'lease_expired' ? 4 : 3),
          );
          // Not the dead worker's own record: the provider's report.
          expect(
            detailOf(c, reasons[2] === 'lease_expired' ? 'reconciled_accepted' : 'provider_accepted'),
          ).toBe('reported by ses');
        }
      });
      console.info(`runbook ${point}:\n  ${lines.join('\n  ')}`);
      expect((await survivor.stop()).code).toBe(0);
    });
  }
});

// --- provider answers ------------------------------------------------------------------------

describe('provider answers', () => {
  it('429 with Retry-After: the advised delay is honoured, on SES a throttle backs off; one message each', {
    timeout: 60_000,
  }, async () => {
    // Prepare
    const l = await lab('throttle');
    const stack = await l.start();
    const phone = phoneBook()();
    const sms = laneNotice({ eventId: eventId('ra_s'), phone });
    const email = laneNotice({
      eventId: eventId('ra_e'),
      email: `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`,
    });
    l.providers.sms.faults.set({
      failNext: [
        { kind: 'status', status: 429, retryAfterSeconds: 2 },
        { kind: 'status', status: 429, retryAfterSeconds: 2 },
      ],
    });
    l.providers.sesProxy.queue.push({ kind: 'status', status: 429 });

    // Act
    expect((await postNotice(stack.apiUrl, sms.body)).status).toBe(202);
    expect((await postNotice(stack.apiUrl, email.body)).status).toBe(202);
    const [smsTimeline, emailTimeline] = await waitForTimelines(
      stack.apiUrl,
      [sms.noticeId, email.noticeId],
      allResolved,
      { timeoutMs: 30_000, what: 'the throttled notices' },
    );

    // Assess
    const side = await providerSide(l.providers);
    const s = channelOf(smsTimeline as Timeline, 'sms');
    const e = channelOf(emailTimeline as Timeline, 'email');
    console.info(
      `runbook 429:\n  ${describeChannel('429', s, textsFor(side, phone).length)}\n  ${describeChannel('429', e, emailsFor(side, email.noticeId).length)}`,
    );
    expect(textsFor(side, phone)).toHaveLength(1);
    expect(emailsFor(side, email.noticeId)).toHaveLength(1);
    expect(l.providers.sms.faults.counters.createCalls).toBe(3);
    expectWellFormed(s);
    expectWellFormed(e);
    expect(reasonsOf(s).slice(0, 7)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
    ]);
    // Retry-After honoured: every next claim came at least the advised 2 s after the 429.
    const gaps = retryGaps(s);
    expect(gaps).toHaveLength(2);
    for (const gap of gaps) {
      expect(gap.advisedMs).toBe(2000);
      expect(gap.waitedMs, gap.detail).toBeGreaterThanOrEqual(2000);
    }
    console.info(`  Retry-After 2 s → waited ${gaps.map((g) => g.waitedMs).join(' ms, ')} ms`);
    // SES sends no Retry-After: the row backs off and a second attempt is accepted.
    expect(reasonsOf(e).slice(0, 5)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
    ]);
    expect(detailOf(e, 'provider_throttled')).toMatch(/\(backoff\)$/);
    expect((await stack.stop()).code).toBe(0);
  });

  it('retries stop at the deadline and at MAX_ATTEMPTS, each ending failed with an escalation', {
    timeout: 60_000,
  }, async () => {
    // Prepare: a provider that keeps answering 503 (provably not accepted: retryable).
    const l = await lab('deadline');
    const stack = await l.start();
    const phones = phoneBook();
    const late = { phone: phones(), deadlineAt: Date.now() + 7_000 };
    const lateNotice = laneNotice({
      eventId: eventId('deadline'),
      phone: late.phone,
      deadline: new Date(late.deadlineAt).toISOString(),
    });
    l.providers.sms.faults.set({
      failNext: Array.from({ length: 12 }, () => ({
        kind: 'status' as const,
        status: 503,
        retryAfterSeconds: 2,
      })),
    });

    // Act 1: Retry-After 2 s against a deadline 7 s away.
    expect((await postNotice(stack.apiUrl, lateNotice.body)).status).toBe(202);
    const [lateTimeline] = await waitForTimelines(stack.apiUrl, [lateNotice.noticeId], allResolved, {
      timeoutMs: 20_000,
      what: 'the notice with a near deadline',
    });
    const deadlineCalls = l.providers.sms.faults.counters.createCalls;

    // Act 2: no advice, MAX_ATTEMPTS 8 with backoff capped at 2 s, deadline a day away.
    l.providers.sms.faults.set({
      failNext: Array.from({ length: 12 }, () => ({ kind: 'status' as const, status: 503 })),
    });
    const exhausted = { phone: phones() };
    const exhaustedNotice = laneNotice({ eventId: eventId('exhausted'), phone: exhausted.phone });
    expect((await postNotice(stack.apiUrl, exhaustedNotice.body)).status).toBe(202);
    const [exhaustedTimeline] = await waitForTimelines(
      stack.apiUrl,
      [exhaustedNotice.noticeId],
      allResolved,
      { timeoutMs: 30_000, what: 'the notice that runs out of attempts' },
    );
    l.providers.sms.faults.set({ failNext: [] });

    // Assess
    const side = await providerSide(l.providers);
    const d = channelOf(lateTimeline as Timeline, 'sms');
    const x = channelOf(exhaustedTimeline as Timeline, 'sms');
    console.info(
      `runbook deadline / attempts:\n  ${describeChannel('deadline', d, textsFor(side, late.phone).length)}\n  ${describeChannel('attempts', x, textsFor(side, exhausted.phone).length)}`,
    );
    for (const c of [d, x]) {
      expectWellFormed(c);
      expect(c.state).toBe('failed');
    }
    // The deadline: no claim at or after it; the row failed as soon as the next advised retry
    // would have landed past it, instead of lingering.
    const lastD = d.transitions.at(-1);
    if (!lastD) throw new Error('no transitions');
    expect(lastD.reason).toBe('deadline_exceeded');
    expect(lastD.detail).toBe('provider_unavailable: twilio_503');
    for (const claim of claimsOf(d)) expect(atMs(claim)).toBeLessThan(late.deadlineAt);
    // The failure is written when the last attempt's 503 comes back, which on a loaded machine
    // can be a little after the deadline: what matters is that the row did not wait for another
    // advised retry (2 s) and that such a retry would have landed past the deadline.
    const lastClaim = claimsOf(d).at(-1);
    if (!lastClaim) throw new Error('no claims');
    expect(atMs(lastD) - atMs(lastClaim)).toBeLessThan(2000);
    expect(atMs(lastClaim) + 2000).toBeGreaterThanOrEqual(late.deadlineAt);
    console.info(
      `  deadline: claims at +${claimsOf(d)
        .map((t) => atMs(t) - (late.deadlineAt - 7_000))
        .join(', +')} ms; failed ${atMs(lastD) - late.deadlineAt} ms after the deadline (negative: before)`,
    );
    expect(claimsOf(d).length).toBeGreaterThanOrEqual(2);
    expect(deadlineCalls).toBe(claimsOf(d).length);
    // Retry-After honoured on a 503 too.
    for (const gap of retryGaps(d)) expect(gap.waitedMs, gap.detail).toBeGreaterThanOrEqual(2000);
    // MAX_ATTEMPTS: eight claims, then attempts_exhausted.
    expect(claimsOf(x)).toHaveLength(Number(SHORT_TIMINGS.MAX_ATTEMPTS));
    expect(x.transitions.at(-1)?.reason).toBe('attempts_exhausted');
    // Nothing reached a phone, and each is escalated (an escalation event per row).
    expect(textsFor(side, late.phone)).toHaveLength(0);
    expect(textsFor(side, exhausted.phone)).toHaveLength(0);
    await waitFor(() =>
      [lateNotice.noticeId, exhaustedNotice.noticeId].every((id) =>
        logRecords(stack.output(), 'escalation').some((r) => r.noticeId === id),
      ),
    );
    const escalations = logRecords(stack.output(), 'escalation');
    expect(escalations.find((r) => r.noticeId === lateNotice.noticeId)?.reason).toBe('deadline_exceeded');
    expect(escalations.find((r) => r.noticeId === exhaustedNotice.noticeId)?.reason).toBe(
      'attempts_exhausted',
    );
    expect((await stack.stop()).code).toBe(0);
  });

  it('hard bounce: one message, then failed and suppressed; later notices never reach a provider; a permanent rejection sends nothing', {
    timeout: 60_000,
  }, async () => {
    // Prepare: SES's mailbox simulator bounces bounce@; the SMS simulator reports 30005 (unknown
    // number, a hard bounce) for numbers ending in 9005.
    const l = await lab('bounce');
    l.providers.sms.faults.set({
      deliveryFailures: [{ toSuffix: '9005', status: 'undelivered', errorCode: 30005 }],
    });
    const stack = await l.start();
    const phones = phoneBook(['9005']);
    const bouncingPhone = `+1555${String(100 + (randomBytes(1)[0] ?? 0)).slice(-3)}9005`;
    const bouncingEmail = 'bounce@simulator.amazonses.com';
    const first = laneNotice({ eventId: eventId('bounce1'), email: bouncingEmail, phone: bouncingPhone });
    const again = laneNotice({ eventId: eventId('bounce2'), email: bouncingEmail, phone: bouncingPhone });
    const rejectedPhone = phones();
    const rejected = laneNotice({
      eventId: eventId('rejected'),
      email: `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`,
      phone: rejectedPhone,
    });

    // Act
    expect((await postNotice(stack.apiUrl, first.body)).status).toBe(202);
    const [bounced] = await waitForTimelines(
      stack.apiUrl,
      [first.noticeId],
      (t) => t.channels.every((c) => c.state === 'failed'),
      { timeoutMs: 20_000, what: 'both channels to bounce' },
    );
    expect((await postNotice(stack.apiUrl, again.body)).status).toBe(202);
    l.providers.sms.faults.set({ failNext: [{ kind: 'status', status: 400, code: 21211 }] });
    l.providers.sesProxy.queue.push({
      kind: 'status',
      status: 400,
      headers: { 'x-amzn-errortype': 'MessageRejected' },
      body: JSON.stringify({ message: 'Email address is not verified.' }),
    });
    expect((await postNotice(stack.apiUrl, rejected.body)).status).toBe(202);
    const [suppressed, refused] = await waitForTimelines(
      stack.apiUrl,
      [again.noticeId, rejected.noticeId],
      allResolved,
      { timeoutMs: 20_000, what: 'the suppressed and the rejected notice' },
    );

    // Assess
    const side = await providerSide(l.providers);
    const lines: string[] = [];
    for (const channel of ['email', 'sms'] as const) {
      const b = channelOf(bounced as Timeline, channel);
      const s = channelOf(suppressed as Timeline, channel);
      const r = channelOf(refused as Timeline, channel);
      const sent = (noticeId: string, phone: string) =>
        channel === 'email' ? emailsFor(side, noticeId).length : textsFor(side, phone).length;
      lines.push(
        describeChannel('bounce', b, sent(first.noticeId, bouncingPhone)),
        describeChannel('after bounce', s, channel === 'email' ? sent(again.noticeId, '') : 0),
        describeChannel('rejected', r, sent(rejected.noticeId, rejectedPhone)),
      );
      for (const c of [b, s, r]) expectWellFormed(c);
      // One message went out and came back as a hard bounce; the provider's receipt is recorded.
      expect(reasonsOf(b)).toEqual(['intake', 'claimed', 'provider_accepted', 'hard_bounce']);
      expect(b.providerReceiptId).not.toBeNull();
      // The next notice to that destination stops before any transport.
      expect(s.state).toBe('suppressed');
      expect(reasonsOf(s)).toEqual(['intake', 'on_suppression_list']);
      // A permanent rejection: failed at once, no retry, nothing stored at the provider.
      expect(r.state).toBe('failed');
      expect(reasonsOf(r)).toEqual(['intake', 'claimed', 'provider_rejected']);
    }
    expect(emailsFor(side, first.noticeId)).toHaveLength(1);
    expect(emailsFor(side, again.noticeId)).toHaveLength(0);
    // The bouncing number got exactly one text in all: the second notice's was never sent.
    expect(textsFor(side, bouncingPhone)).toHaveLength(1);
    expect(emailsFor(side, rejected.noticeId)).toHaveLength(0);
    expect(textsFor(side, rejectedPhone)).toHaveLength(0);
    expect(detailOf(channelOf(refused as Timeline, 'sms'), 'provider_rejected')).toBe('twilio_21211');
    expect(detailOf(channelOf(refused as Timeline, 'email'), 'provider_rejected')).toBe(
      'ses_MessageRejected',
    );
    console.info(`runbook hard bounce / rejection:\n  ${lines.join('\n  ')}`);
    expect((await stack.stop()).code).toBe(0);
  });

  it('a timeout where the provider accepted and one where it did not: unknown, then settled; one message each', {
    timeout: 60_000,
  }, async () => {
    // Prepare. No Twilio callbacks here: a callback would settle the accepted send before the
    // reconciler had to ask (that path is the kill -9 test's), and this case is about asking.
    const l = await lab('timeout');
    const stack = await l.start();
    const phones = phoneBook();
    const mail = () => `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`;
    const cases = {
      smsAccepted: { notice: laneNotice({ eventId: eventId('to_sa'), phone: phones() }), channel: 'sms' },
      smsNotAccepted: {
        notice: laneNotice({ eventId: eventId('to_sn'), phone: phones() }),
        channel: 'sms',
      },
      emailAccepted: {
        notice: laneNotice({ eventId: eventId('to_ea'), email: mail() }),
        channel: 'email',
      },
      emailNotAccepted: {
        notice: laneNotice({ eventId: eventId('to_en'), email: mail() }),
        channel: 'email',
      },
      emailReset: { notice: laneNotice({ eventId: eventId('to_er'), email: mail() }), channel: 'email' },
    } as const;
    const { sms, sesProxy } = l.providers;
    sms.faults.set({ callbacksEnabled: false });

    // Act: one fault per send, each notice posted once its predecessor on the same provider
    // has drawn its fault (the fault queues are first come, first served).
    const postAfter = async (fault: () => void, key: keyof typeof cases, pending: () => number) => {
      fault();
      expect((await postNotice(stack.apiUrl, cases[key].notice.body)).status).toBe(202);
      await waitFor(() => pending() === 0);
    };
    const smsCalls = () => sms.faults.failNext.length;
    const sesCalls = () => sesProxy.queue.length;
    await postAfter(
      () => sms.faults.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_PAST_TIMEOUT_MS }] }),
      'smsAccepted',
      smsCalls,
    );
    await postAfter(
      () => sms.faults.set({ failNext: [{ kind: 'timeout_before_accept', delayMs: HOLD_PAST_TIMEOUT_MS }] }),
      'smsNotAccepted',
      smsCalls,
    );
    await postAfter(
      () => sesProxy.queue.push({ kind: 'timeout_after_accept', delayMs: HOLD_PAST_TIMEOUT_MS }),
      'emailAccepted',
      sesCalls,
    );
    await postAfter(
      () => sesProxy.queue.push({ kind: 'timeout_before_accept', delayMs: HOLD_PAST_TIMEOUT_MS }),
      'emailNotAccepted',
      sesCalls,
    );
    await postAfter(() => sesProxy.queue.push({ kind: 'reset_after_accept' }), 'emailReset', sesCalls);
    const keys = Object.keys(cases) as (keyof typeof cases)[];
    const phoneOf = (id: string) => {
      const key = keys.find((k) => cases[k].notice.noticeId === id);
      return key ? (cases[key].notice.body.recipient as { phone?: string }).phone : undefined;
    };
    const operator = runbookOperator(stack.apiUrl, l.providers, phoneOf);
    const timelines = await waitForTimelines(
      stack.apiUrl,
      keys.map((k) => cases[k].notice.noticeId),
      allResolved,
      { timeoutMs: 30_000, what: 'the timed-out notices', operator },
    );
    sms.faults.set({ callbacksEnabled: true });

    // Assess
    const side = await providerSide(l.providers);
    const got = Object.fromEntries(
      keys.map((k, i) => {
        const { notice, channel } = cases[k];
        const c = channelOf(timelines[i] as Timeline, channel);
        const phone = (notice.body.recipient as { phone?: string }).phone ?? '';
        const ids = channel === 'email' ? emailsFor(side, notice.noticeId) : textsFor(side, phone);
        return [k, { c, ids }];
      }),
    ) as Record<keyof typeof cases, { c: ChannelTimeline; ids: readonly string[] }>;
    console.info(
      `runbook timeouts:\n  ${keys.map((k) => describeChannel(k, got[k].c, got[k].ids.length)).join('\n  ')}`,
    );
    for (const k of keys) {
      const { c, ids } = got[k];
      expectWellFormed(c);
      expect(ids, `${k}: ${path(c)}`).toHaveLength(1);
      expect(SENT.has(c.state), `${k}: ${path(c)}`).toBe(true);
      expect(c.providerReceiptId).toBe(ids[0]);
    }
    // SMS, accepted behind the timeout: unknown, then found by listing; never resent.
    expect(reasonsOf(got.smsAccepted.c)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
    ]);
    // SMS, not accepted: unknown; a complete listing without it, once the grace has passed,
    // proves it was not sent; then one deliberate retry.
    expect(reasonsOf(got.smsNotAccepted.c)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_not_sent',
      'claimed',
      'provider_accepted',
    ]);
    expect(msBetween(got.smsNotAccepted.c, 2, 3)).toBeGreaterThanOrEqual(
      Number(SHORT_TIMINGS.UNKNOWN_GRACE_MS),
    );
    // Email, accepted behind the timeout: SES's Delivery event settles it, before or after the
    // worker's timeout (then recorded as unknown first); either way it is not resent.
    const ea = reasonsOf(got.emailAccepted.c);
    expect([
      ['intake', 'claimed', 'provider_accepted'],
      ['intake', 'claimed', 'provider_timeout', 'reconciled_accepted'],
    ]).toContainEqual(ea.slice(0, ea[2] === 'provider_timeout' ? 4 : 3));
    expect(claimsOf(got.emailAccepted.c)).toHaveLength(1);
    // Email, connection reset after SES took it: ambiguous at once, so the Delivery event (fed
    // every 500 ms) nearly always finds the row `unknown`; it settles it either way.
    const er = reasonsOf(got.emailReset.c);
    expect([
      ['intake', 'claimed', 'provider_accepted'],
      ['intake', 'claimed', 'provider_ambiguous', 'reconciled_accepted'],
    ]).toContainEqual(er.slice(0, er[2] === 'provider_ambiguous' ? 4 : 3));
    expect(claimsOf(got.emailReset.c)).toHaveLength(1);
    for (const k of ['emailAccepted', 'emailReset'] as const) {
      const c = got[k].c;
      const settled = reasonsOf(c).includes('reconciled_accepted')
        ? 'reconciled_accepted'
        : 'provider_accepted';
      expect(detailOf(c, settled), `${k}: ${path(c)}`).toBe('reported by ses');
    }
    // Email, not accepted: SES has no lookup and no event comes; after the grace it is
    // escalated and stays unknown; the operator finds nothing at SES and resolves `not_sent`,
    // a deliberate resend with their name on it.
    expect(reasonsOf(got.emailNotAccepted.c).slice(0, 7)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'unknown_escalated',
      'operator_confirmed_not_sent',
      'claimed',
      'provider_accepted',
    ]);
    expect(detailOf(got.emailNotAccepted.c, 'unknown_escalated')).toMatch(/^outcome still unknown/);
    expect(got.emailNotAccepted.c.transitions[4]).toMatchObject({ actor: RUNBOOK_OPERATOR });
    // The operator acted on that one only: every other unknown was settled by the provider's word.
    expect(operator.acts).toEqual([
      {
        noticeId: cases.emailNotAccepted.notice.noticeId,
        channel: 'email',
        outcome: 'not_sent',
        status: 200,
      },
    ]);
    expect((await stack.stop()).code).toBe(0);
  });
});

// --- workers and queues ----------------------------------------------------------------------

describe('workers and queues', () => {
  it('two workers on one key: every intent is claimed once and sent once', { timeout: 60_000 }, async () => {
    // Prepare: two stacks (two processes) on one table and one SQS, with the same keys; every
    // intent gets three extra copies of its queue message, so several workers hold it at once.
    const l = await lab('two-workers', { FINGERPRINT_KEY: randomKey(), ENVELOPE_LOCAL_KEY: randomKey() });
    const a = await l.start();
    const b = await startStackProcess({
      dynamodb: 'shared',
      dataDir: await makeDataDir('notice-ledger-runbook-worker-b-'),
      tableName: l.tableName,
      env: {
        ...l.env,
        AWS_ENDPOINT_URL_SQS: a.state.endpoints.sqs,
        ...(a.state.endpoints.scheduler ? { AWS_ENDPOINT_URL_SCHEDULER: a.state.endpoints.scheduler } : {}),
      },
    });
    const count = 10;
    // Each provider call takes 250 ms (under the 600 ms timeout): a worker holds its lease a while.
    l.providers.sms.faults.set({
      failNext: Array.from({ length: count }, () => ({
        kind: 'timeout_after_accept' as const,
        delayMs: 250,
      })),
    });
    for (let i = 0; i < count; i++)
      l.providers.sesProxy.queue.push({ kind: 'timeout_after_accept', delayMs: 250 });
    const phones = phoneBook();
    const notices = Array.from({ length: count }, (_, i) => {
      const phone = phones();
      return {
        phone,
        ...laneNotice({
          eventId: eventId(`two_${i}`),
          email: `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`,
          phone,
        }),
      };
    });
    const sqs = new SQSClient({
      endpoint: a.state.endpoints.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });

    // Act
    for (const notice of notices) {
      expect((await postNotice(a.apiUrl, notice.body)).status).toBe(202);
      for (const channel of ['email', 'sms'] as const) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: a.state.queues[channel].url,
            Entries: [0, 1, 2].map((n) => ({
              Id: String(n),
              MessageBody: JSON.stringify({ noticeId: notice.noticeId, channel }),
            })),
          }),
        );
      }
    }
    sqs.destroy();
    const timelines = await waitForTimelines(
      a.apiUrl,
      notices.map((n) => n.noticeId),
      allResolved,
      { timeoutMs: 30_000, what: 'the contended notices' },
    );

    // Assess
    const side = await providerSide(l.providers);
    const steps = (stack: StackProcess) =>
      logRecords(stack.output(), 'delivery step') as {
        noticeId?: string;
        channel?: string;
        result?: { kind?: string; why?: string };
      }[];
    // The rows settle before the surplus copies of their messages are all consumed: wait (bounded)
    // until both workers have logged a step for every one of the 80 messages.
    const mine = (records: ReturnType<typeof steps>) =>
      records.filter((r) => notices.some((n) => n.noticeId === r.noticeId)).length;
    await waitFor(() => mine(steps(a)) + mine(steps(b)) >= count * 2 * 4);
    const byWorker = { a: steps(a), b: steps(b) };
    const touchedBy = (stack: 'a' | 'b', noticeId: string, channel: string) =>
      byWorker[stack].filter((s) => s.noticeId === noticeId && s.channel === channel).length;
    let contended = 0;
    notices.forEach((notice, i) => {
      for (const channel of ['email', 'sms'] as const) {
        const c = channelOf(timelines[i] as Timeline, channel);
        const ids = channel === 'email' ? emailsFor(side, notice.noticeId) : textsFor(side, notice.phone);
        expectWellFormed(c);
        expect(ids, `${channel} of ${i}: ${path(c)}`).toHaveLength(1);
        expect(claimsOf(c), path(c)).toHaveLength(1);
        expect(c.attempts).toBe(1);
        expect(c.providerReceiptId).toBe(ids[0]);
        if (touchedBy('a', notice.noticeId, channel) > 0 && touchedBy('b', notice.noticeId, channel) > 0) {
          contended += 1;
        }
      }
    });
    const all = [...byWorker.a, ...byWorker.b].filter((s) => notices.some((n) => n.noticeId === s.noticeId));
    const tally = (pred: (s: (typeof all)[number]) => boolean) => all.filter(pred).length;
    const summary = {
      intents: count * 2,
      messages: count * 2 * 4,
      handledByA: byWorker.a.length,
      handledByB: byWorker.b.length,
      intentsSeenByBothProcesses: contended,
      // The claim winner: it recorded the provider's answer, or found it already recorded by
      // the provider's own report (a Twilio callback or SES event during the 250 ms call).
      recorded: tally((s) => s.result?.kind === 'recorded'),
      settledByReportFirst: tally((s) => s.result?.why === 'outcome_raced'),
      // The others: the row was no longer claimable when read, or the conditional claim failed.
      leftNotClaimable: tally((s) => s.result?.why === 'not_claimable'),
      lostTheClaimWrite: tally((s) => s.result?.why === 'claimed_elsewhere'),
      // A copy that arrived in the same invocation as another message for its row: one dispatch
      // path reads each row once per invocation (docs/architecture.md §4) and leaves the copy.
      repeatedInInvocation: tally((s) => s.result?.why === 'repeated_in_batch'),
      other: 0,
    };
    summary.other =
      all.length -
      summary.recorded -
      summary.settledByReportFirst -
      summary.leftNotClaimable -
      summary.lostTheClaimWrite -
      summary.repeatedInInvocation;
    console.info(`runbook two workers: ${JSON.stringify(summary)}`);
    // Both processes worked on the same keys; only one claim per key was ever written.
    expect(contended).toBeGreaterThan(0);
    // Every message was handled once: one per key won the claim, three found the key taken.
    expect(all).toHaveLength(count * 2 * 4);
    expect(summary.recorded + summary.settledByReportFirst).toBe(count * 2);
    expect(summary.leftNotClaimable + summary.lostTheClaimWrite + summary.repeatedInInvocation).toBe(
      count * 2 * 3,
    );
    expect((await b.stop()).code).toBe(0);
    expect((await a.stop()).code).toBe(0);
  });

  it('a lost queue message (the intake one, and a retry one): the reconciler re-enqueues; one message each', {
    timeout: 60_000,
  }, async () => {
    // Prepare: SQS sits behind a proxy that acknowledges chosen messages and drops them.
    const sqs = await startLossySqs();
    closers.push(() => sqs.close());
    const l = await lab('lost-message', { AWS_ENDPOINT_URL_SQS: sqs.endpoint });
    const stack = await l.start();
    const phones = phoneBook();
    const intake = laneNotice({
      eventId: eventId('lost_intake'),
      email: `success+${randomBytes(3).toString('hex')}@simulator.amazonses.com`,
      phone: phones(),
    });
    const retryPhone = phones();
    const retry = laneNotice({ eventId: eventId('lost_retry'), phone: retryPhone });
    sqs.loseNext({ noticeId: intake.noticeId, channel: 'email', count: 1 });
    sqs.loseNext({ noticeId: intake.noticeId, channel: 'sms', count: 1 });
    sqs.loseNext({ noticeId: retry.noticeId, channel: 'sms', count: 1, delayed: true });
    l.providers.sms.faults.set({ failNext: [{ kind: 'status', status: 429, retryAfterSeconds: 1 }] });

    // Act
    expect((await postNotice(stack.apiUrl, retry.body)).status).toBe(202);
    await waitFor(() => l.providers.sms.faults.counters.createCalls >= 1);
    expect((await postNotice(stack.apiUrl, intake.body)).status).toBe(202);
    const [retried, reserved] = await waitForTimelines(
      stack.apiUrl,
      [retry.noticeId, intake.noticeId],
      allResolved,
      { timeoutMs: 30_000, what: 'the notices whose messages were lost' },
    );

    // Assess
    const side = await providerSide(l.providers);
    const lines: string[] = [];
    // A body names the reference (and, off the standard lane, its priority).
    const lostRefs = sqs.lost.map((m) => {
      const { noticeId, channel } = JSON.parse(m.body) as { noticeId: string; channel: string };
      return { noticeId, channel };
    });
    expect(lostRefs).toEqual(
      expect.arrayContaining([
        { noticeId: intake.noticeId, channel: 'email' },
        { noticeId: intake.noticeId, channel: 'sms' },
        { noticeId: retry.noticeId, channel: 'sms' },
      ]),
    );
    expect(sqs.lost).toHaveLength(3);
    for (const channel of ['email', 'sms'] as const) {
      const c = channelOf(reserved as Timeline, channel);
      const ids =
        channel === 'email'
          ? emailsFor(side, intake.noticeId)
          : textsFor(side, (intake.body.recipient as { phone: string }).phone);
      lines.push(describeChannel('lost intake message', c, ids.length));
      expectWellFormed(c);
      expect(ids).toHaveLength(1);
      expect(reasonsOf(c).slice(0, 3)).toEqual(['intake', 'claimed', 'provider_accepted']);
      // Nobody had a message for it: the claim came only after the reconciler found the row
      // reserved for a whole lease and re-enqueued it.
      const waited = msBetween(c, 0, 1);
      expect(waited).toBeGreaterThanOrEqual(LEASE_MS);
      lines.push(`  intake → claim after ${waited} ms`);
    }
    const r = channelOf(retried as Timeline, 'sms');
    lines.push(describeChannel('lost retry message', r, textsFor(side, retryPhone).length));
    expectWellFormed(r);
    expect(textsFor(side, retryPhone)).toHaveLength(1);
    expect(reasonsOf(r).slice(0, 5)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
    ]);
    // The retry message (1 s delay) was lost: the row waited until nextAttemptAt + one lease.
    const [gap] = retryGaps(r);
    expect(gap?.advisedMs).toBe(1000);
    expect(gap?.waitedMs).toBeGreaterThanOrEqual(1000 + LEASE_MS);
    lines.push(`retry advised 1000 ms, message lost → next claim after ${gap?.waitedMs} ms`);
    const reenqueued = logRecords(stack.output(), 'reconciler run').reduce<{
      reserved: number;
      retry: number;
    }>(
      (sum, run) => {
        const actions = (run.actions ?? {}) as Record<string, number>;
        return {
          reserved: sum.reserved + (actions.reenqueue_reserved ?? 0),
          retry: sum.retry + (actions.reenqueue_retry_scheduled ?? 0),
        };
      },
      { reserved: 0, retry: 0 },
    );
    expect(reenqueued.reserved).toBeGreaterThanOrEqual(2);
    expect(reenqueued.retry).toBeGreaterThanOrEqual(1);
    console.info(
      `runbook lost queue message (reconciler re-enqueued ${JSON.stringify(reenqueued)}):\n  ${lines.join('\n  ')}`,
    );
    expect((await stack.stop()).code).toBe(0);
  });

  it('a lost schedule: the reconciler re-enqueues the overdue retry; Retry-After (61 s) honoured; one message', {
    timeout: 120_000,
  }, async () => {
    if (!lostSchedule) throw new Error('the lost-schedule run did not start');
    const run = await lostSchedule;
    const timeline = await run.settled;
    const c = channelOf(timeline, 'sms');
    const side = await providerSide(run.lab.providers);
    console.info(
      `runbook lost schedule:\n  ${describeChannel('lost schedule', c, textsFor(side, run.phone).length)}`,
    );
    expectWellFormed(c);
    expect(textsFor(side, run.phone)).toHaveLength(1);
    expect(c.providerReceiptId).toBe(textsFor(side, run.phone)[0]);
    expect(reasonsOf(c).slice(0, 5)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
    ]);
    // The stand-in took the CreateSchedule and dropped it, so nothing fired for this notice.
    const faults = (await (await fetch(`${run.schedulerEndpoint}/__faults`)).json()) as {
      dropNextCreates: number;
    };
    expect(faults.dropNextCreates).toBe(0);
    const schedules = (await (await fetch(`${run.schedulerEndpoint}/__schedules`)).json()) as {
      schedules: { name: string }[];
      fired: { name: string }[];
    };
    expect(
      [...schedules.schedules, ...schedules.fired].filter((s) => s.name.startsWith(run.noticeId)),
    ).toEqual([]);
    // Retry-After honoured, and the second attempt came from the reconciler, one lease late.
    const [gap] = retryGaps(c);
    expect(gap?.advisedMs).toBe(RETRY_AFTER_LONG_S * 1000);
    expect(gap?.waitedMs).toBeGreaterThanOrEqual(RETRY_AFTER_LONG_S * 1000 + LEASE_MS);
    console.info(
      `  Retry-After ${RETRY_AFTER_LONG_S} s, schedule lost → next claim after ${gap?.waitedMs} ms`,
    );
    const reenqueued = logRecords(run.stack.output(), 'reconciler run').some(
      (r) => ((r.actions ?? {}) as Record<string, number>).reenqueue_retry_scheduled,
    );
    expect(reenqueued).toBe(true);
    expect((await run.stack.stop()).code).toBe(0);
  });
});

/** Polls a synchronous condition; bounded in time and in count. */
async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < timeoutMs / 50 && Date.now() < deadline; i++) {
    if (condition()) return;
    await sleep(50);
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
