/**
 * The runbook of docs/architecture.md §7 with Resend for email (`startProviders({ email:
 * 'resend' })` in runbook-support.ts): its simulator lives in this process (what it holds
 * survives every kill -9 of the stack) and posts Svix-signed webhooks to the stack. Each case
 * asserts the ledger (the timeline) and the provider side (the simulator's emails, matched to
 * their intent by `X-Notice-Intent`) independently: exactly one email per intent, or none where
 * a suppression says so.
 *
 * What differs from SES: Resend takes the ledger's idempotency key, so an attempt whose outcome
 * is unknown is settled by replaying it under that key — Resend answers with the email it holds,
 * or (when the original never arrived) takes it now, once. No case here needs UNKNOWN_POLICY.
 * The batch case sends one `POST /emails/batch` for several notices and kills the worker after
 * the call answered, before any member's result is written.
 *
 * Priorities in the mix (issue 15, docs/architecture.md §11): every lab runs with lane queues of
 * its own (`LOCAL_LANES=on`) and its notices are spread over critical / standard / bulk by event
 * id, as in runbook.test.ts (the batch case puts its six in the critical lane: a poller's batch
 * comes from one lane's queue); the two-workers case injects its copies into the standard queue,
 * whatever the notice's lane.
 */
import { randomBytes } from 'node:crypto';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import {
  freePort,
  localIamReport,
  makeDataDir,
  type StackProcess,
  startStackProcess,
  stopAllStacks,
} from '../helpers/local-stack.ts';
import {
  allResolved,
  channelOf,
  claimsOf,
  emailsFor,
  eventId,
  expectCrash,
  lanePriority,
  ledgerRow,
  logRecords,
  noticeRequest,
  path,
  providerSide,
  type ResendProviders,
  randomKey,
  reasonsOf,
  retryGaps,
  SENT,
  SHORT_TIMINGS,
  startProviders,
  waitForTimelines,
} from './runbook-support.ts';
import { assertWellFormed, type ChannelTimeline, postNotice, type Timeline } from './support.ts';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

interface Lab {
  readonly providers: ResendProviders;
  readonly tableName: string;
  readonly port: number;
  readonly env: Readonly<Record<string, string>>;
  start(extra?: Record<string, string>): Promise<StackProcess>;
}

/** A stack on its own data dir, port and table, with Resend (posting webhooks to that port). */
async function lab(name: string, env: Record<string, string> = {}): Promise<Lab> {
  const port = await freePort();
  const providers = await startProviders({ email: 'resend', publicBaseUrl: `http://127.0.0.1:${port}` });
  closers.push(() => providers.close());
  const tableName = uniqueTableName(`runbook-resend-${name}`);
  const dataDir = await makeDataDir(`notice-ledger-runbook-resend-${name}-`);
  // Priorities in the mix (issue 15): every lane has its own queues, notices are spread over them.
  const fullEnv = { ...providers.env, ...SHORT_TIMINGS, LOCAL_LANES: 'on', ...env };
  return {
    providers,
    tableName,
    port,
    env: fullEnv,
    start: (extra = {}) =>
      startStackProcess({ dynamodb: 'shared', dataDir, port, tableName, env: { ...fullEnv, ...extra } }),
  };
}

const mail = (prefix = 'patient') => `${prefix}+${randomBytes(4).toString('hex')}@example.com`;

/** The suite's notices, spread over the three lanes by event id unless a lane is given (docs/architecture.md §11). */
function emailNotice(tag: string, address = mail(), lane?: Priority) {
  const id = eventId(tag);
  return noticeRequest({ eventId: id, email: address, priority: lane ?? lanePriority(id) });
}

function detailOf(channel: ChannelTimeline, reason: string): string {
  const detail = channel.transitions.find((t) => t.reason === reason)?.detail;
  return typeof detail === 'string' ? detail : '';
}

function expectOneEmail(channel: ChannelTimeline, ids: readonly string[]): void {
  expect(assertWellFormed(channel.transitions), path(channel)).toEqual([]);
  expect(ids, path(channel)).toHaveLength(1);
  expect(SENT.has(channel.state), path(channel)).toBe(true);
  expect(channel.providerReceiptId).toBe(ids[0]);
  expect(claimsOf(channel), path(channel)).toHaveLength(1);
}

describe('Resend: kill -9 of the worker at a crash point (single sends), then restart on the same data', () => {
  for (const point of ['before_send', 'after_accept', 'before_commit'] as const) {
    it(`${point}: one email, one claim; the replay under the key or Resend's own event settles it`, {
      timeout: 90_000,
    }, async () => {
      const l = await lab(point.replaceAll('_', '-'), { EMAIL_BATCH_MAX: '1' });
      const notice = emailNotice(point);
      const stack = await l.start({ CRASH_POINT: point, CRASH_POINT_NOTICE: notice.noticeId });
      const posted = await postNotice(stack.apiUrl, notice.body).catch(() => undefined);
      const crash = await expectCrash(stack);
      expect(crash.line).toBe(`crash point ${point} reached for ${notice.noticeId}-email: SIGKILL`);
      if (posted) expect(posted.status).toBe(202);
      expect((await ledgerRow(l.tableName, notice.noticeId, 'email'))?.state).toBe('sending');
      const atCrash = emailsFor(await providerSide(l.providers), notice.noticeId).length;
      expect(atCrash).toBe(point === 'before_send' ? 0 : 1);

      const survivor = await l.start();
      expect([200, 202]).toContain((await postNotice(survivor.apiUrl, notice.body)).status);
      const [timeline] = await waitForTimelines(survivor.apiUrl, [notice.noticeId], allResolved, {
        timeoutMs: 45_000,
        what: `the notice after ${point}`,
      });
      const c = channelOf(timeline as Timeline, 'email');
      const ids = emailsFor(await providerSide(l.providers), notice.noticeId);
      console.info(`runbook resend ${point}: ${c.state}, provider-side ${ids.length} | ${path(c)}`);
      expectOneEmail(c, ids);
      expect(c.attempts).toBe(1);
      const reasons = reasonsOf(c);
      if (point === 'before_send') {
        // Nothing reached Resend; the replay under the key was its first arrival: one email,
        // still attempt 1, and no resend decided by policy.
        expect(reasons.slice(0, 4)).toEqual(['intake', 'claimed', 'lease_expired', 'reconciled_accepted']);
        expect(detailOf(c, 'reconciled_accepted')).toBe('replayed under its idempotency key');
      } else {
        const viaEvent = ['intake', 'claimed', 'provider_accepted'];
        const viaUnknown = ['intake', 'claimed', 'lease_expired', 'reconciled_accepted'];
        expect([viaEvent, viaUnknown]).toContainEqual(
          reasons.slice(0, reasons[2] === 'lease_expired' ? 4 : 3),
        );
      }
      expect(reasons).not.toContain('unknown_unresolved');
      expect(l.providers.resend.counters.emailsCreated).toBe(1);
      expect((await survivor.stop()).code).toBe(0);
    });
  }
});

describe('Resend batch: kill -9 after the batch call answered, before any result is written', () => {
  it('every member settles once, by replaying the recorded call under its key; no email twice', {
    timeout: 120_000,
  }, async () => {
    const l = await lab('batch');
    const { resend } = l.providers;
    // Webhooks off: the members can only be settled by the reconciler's replay of the batch.
    resend.set({ webhooksEnabled: false });
    // One lane (critical, a queue of its own): a poller's batch is drawn from one lane's queue.
    const notices = Array.from({ length: 6 }, (_, i) => emailNotice(`batch${i}`, mail(), 'critical'));
    // Life 1: intake only (no email sender), so the second life finds all six in the queue.
    const intake = await l.start({ LOCAL_SENDERS: 'sms' });
    for (const n of notices) expect((await postNotice(intake.apiUrl, n.body)).status).toBe(202);
    expect((await intake.stop()).code).toBe(0);
    // Life 2: one poller takes the six in one invocation, one provider call, then the kill.
    const target = notices[2] as (typeof notices)[number];
    const crashing = await l.start({
      CRASH_POINT: 'after_accept',
      CRASH_POINT_NOTICE: target.noticeId,
      LOCAL_SQS_CONCURRENCY: '1',
    });
    const crash = await expectCrash(crashing);
    expect(crash.line).toBe(`crash point after_accept reached for ${target.noticeId}-email: SIGKILL`);
    expect(resend.counters.batchCalls).toBe(1);
    expect(resend.counters.emailsCreated).toBe(6);
    const rows = await Promise.all(notices.map((n) => ledgerRow(l.tableName, n.noticeId, 'email')));
    expect(rows.map((r) => r?.state)).toEqual(notices.map(() => 'sending'));
    const batchId = rows[0]?.batch;
    expect(batchId).toMatch(/^bat_/);
    expect(rows.every((r) => r?.batch === batchId)).toBe(true);

    // Life 3: leases expire, the rows turn unknown, and the reconciler replays the batch.
    const survivor = await l.start();
    const timelines = await waitForTimelines(
      survivor.apiUrl,
      notices.map((n) => n.noticeId),
      allResolved,
      { timeoutMs: 60_000, what: 'the batch members after the kill' },
    );
    const side = await providerSide(l.providers);
    const lines: string[] = [];
    timelines.forEach((timeline, i) => {
      const c = channelOf(timeline, 'email');
      const ids = emailsFor(side, notices[i]?.noticeId as string);
      lines.push(`${c.state}, provider-side ${ids.length} | ${path(c)}`);
      expectOneEmail(c, ids);
      expect(reasonsOf(c).slice(0, 4)).toEqual(['intake', 'claimed', 'lease_expired', 'reconciled_accepted']);
      expect(detailOf(c, 'reconciled_accepted')).toBe(`batch ${batchId} replayed under its idempotency key`);
    });
    console.info(
      `runbook resend batch (${resend.counters.batchCalls} batch calls, ${resend.counters.replays} answered from the key):\n  ${lines.join('\n  ')}`,
    );
    // The replay was answered from the key: nothing was created again.
    expect(resend.counters.emailsCreated).toBe(6);
    expect(resend.counters.replays).toBeGreaterThanOrEqual(1);
    expect(resend.emails().every((e) => e.via === 'batch')).toBe(true);
    resend.set({ webhooksEnabled: true });
    expect((await survivor.stop()).code).toBe(0);
  });
});

describe('Resend: provider answers', () => {
  it('429 with retry-after: honoured; a hard bounce fails and suppresses; the next notice never reaches Resend; a refused key holds the channel', {
    timeout: 90_000,
  }, async () => {
    const l = await lab('answers', { EMAIL_BATCH_MAX: '1', OPERATOR_HOLD_MS: '2000' });
    const { resend } = l.providers;
    const stack = await l.start();
    // 429.
    resend.set({
      failNext: [{ kind: 'status', status: 429, name: 'rate_limit_exceeded', retryAfterSeconds: 2 }],
    });
    const throttled = emailNotice('ra');
    expect((await postNotice(stack.apiUrl, throttled.body)).status).toBe(202);
    // Hard bounce, then a second notice to the same address.
    const bouncing = mail('bounce');
    const first = emailNotice('bounce1', bouncing);
    const second = emailNotice('bounce2', bouncing);
    const [t429] = await waitForTimelines(stack.apiUrl, [throttled.noticeId], allResolved, {
      what: 'the throttled notice',
    });
    expect((await postNotice(stack.apiUrl, first.body)).status).toBe(202);
    const [bounced] = await waitForTimelines(
      stack.apiUrl,
      [first.noticeId],
      (t) => t.channels.every((c) => c.state === 'failed'),
      { what: 'the bounce' },
    );
    expect((await postNotice(stack.apiUrl, second.body)).status).toBe(202);
    const [suppressed] = await waitForTimelines(stack.apiUrl, [second.noticeId], allResolved, {
      what: 'the suppressed notice',
    });
    // A key Resend refuses (401): operator_action_required; held, escalated, the attempt given back; then sent.
    resend.set({ failNext: [{ kind: 'status', status: 401, name: 'restricted_api_key' }] });
    const blocked = emailNotice('blocked');
    expect((await postNotice(stack.apiUrl, blocked.body)).status).toBe(202);
    const [held] = await waitForTimelines(stack.apiUrl, [blocked.noticeId], allResolved, {
      timeoutMs: 30_000,
      what: 'the notice behind the hold',
    });

    const side = await providerSide(l.providers);
    const c429 = channelOf(t429 as Timeline, 'email');
    expect(reasonsOf(c429).slice(0, 5)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
    ]);
    const [gap] = retryGaps(c429);
    expect(gap?.advisedMs).toBe(2000);
    expect(gap?.waitedMs).toBeGreaterThanOrEqual(2000);
    expect(emailsFor(side, throttled.noticeId)).toHaveLength(1);

    const b = channelOf(bounced as Timeline, 'email');
    expect(reasonsOf(b)).toEqual(['intake', 'claimed', 'provider_accepted', 'hard_bounce']);
    expect(emailsFor(side, first.noticeId)).toHaveLength(1);
    const s = channelOf(suppressed as Timeline, 'email');
    expect(reasonsOf(s)).toEqual(['intake', 'on_suppression_list']);
    expect(s.state).toBe('suppressed');
    expect(emailsFor(side, second.noticeId)).toHaveLength(0);

    const h = channelOf(held as Timeline, 'email');
    expect(reasonsOf(h).slice(0, 5)).toEqual([
      'intake',
      'claimed',
      'operator_action_required',
      'claimed',
      'provider_accepted',
    ]);
    expect(detailOf(h, 'operator_action_required')).toBe(
      'resend_401_restricted_api_key; channel held 2000 ms, attempt not counted',
    );
    expect(h.attempts).toBe(1);
    expect(claimsOf(h).map((t) => t.attempt)).toEqual([1, 1]);
    expect(emailsFor(side, blocked.noticeId)).toHaveLength(1);
    expect(
      logRecords(stack.output(), 'escalation').find((r) => r.noticeId === blocked.noticeId)?.reason,
    ).toBe('operator_action_required');
    console.info(
      `runbook resend answers:\n  429 ${path(c429)}\n  bounce ${path(b)}\n  after bounce ${path(s)}\n  held ${path(h)}`,
    );
    expect((await stack.stop()).code).toBe(0);
  });
});

describe('Resend: two workers on one key', () => {
  it('two processes, every message four times: each intent claimed once, one email each (batches racing for the rows)', {
    timeout: 90_000,
  }, async () => {
    const l = await lab('two-workers', { FINGERPRINT_KEY: randomKey(), ENVELOPE_LOCAL_KEY: randomKey() });
    const a = await l.start();
    const b = await startStackProcess({
      dynamodb: 'shared',
      dataDir: await makeDataDir('notice-ledger-runbook-resend-b-'),
      tableName: l.tableName,
      env: {
        ...l.env,
        AWS_ENDPOINT_URL_SQS: a.state.endpoints.sqs,
        ...(a.state.endpoints.scheduler ? { AWS_ENDPOINT_URL_SCHEDULER: a.state.endpoints.scheduler } : {}),
      },
    });
    // Each provider call takes 250 ms: the rows stay claimed while the other worker reads them.
    l.providers.resend.faults.random = () => ({ kind: 'timeout_after_accept', delayMs: 250 });
    const notices = Array.from({ length: 10 }, (_, i) => emailNotice(`two${i}`));
    const sqs = new SQSClient({
      endpoint: a.state.endpoints.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    for (const n of notices) {
      expect((await postNotice(a.apiUrl, n.body)).status).toBe(202);
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: a.state.queues.email.url,
          Entries: [0, 1, 2].map((k) => ({
            Id: String(k),
            MessageBody: JSON.stringify({ noticeId: n.noticeId, channel: 'email' }),
          })),
        }),
      );
    }
    sqs.destroy();
    const timelines = await waitForTimelines(
      a.apiUrl,
      notices.map((n) => n.noticeId),
      allResolved,
      {
        timeoutMs: 30_000,
        what: 'the contended notices',
      },
    );
    l.providers.resend.faults.random = undefined;
    const side = await providerSide(l.providers);
    timelines.forEach((timeline, i) => {
      const c = channelOf(timeline, 'email');
      expectOneEmail(c, emailsFor(side, notices[i]?.noticeId as string));
      expect(c.attempts).toBe(1);
    });
    // Every one of the 40 messages is handled (the surplus copies after the rows settled too).
    const ours = () =>
      [...logRecords(a.output(), 'delivery step'), ...logRecords(b.output(), 'delivery step')].filter((r) =>
        notices.some((n) => n.noticeId === r.noticeId),
      ) as { result?: { kind?: string; why?: string } }[];
    for (let i = 0; i < 300 && ours().length < 40; i++) await new Promise((r) => setTimeout(r, 100));
    const steps = ours();
    const tally: Record<string, number> = {};
    for (const s of steps) {
      const key = s.result?.kind === 'recorded' ? 'recorded' : (s.result?.why ?? s.result?.kind ?? '?');
      tally[key] = (tally[key] ?? 0) + 1;
    }
    const won = (tally.recorded ?? 0) + (tally.outcome_raced ?? 0);
    // The others: the row was no longer claimable when read, the conditional claim failed, or
    // the copy came in the same queue batch as its first (left before any claim).
    const left = (tally.claimed_elsewhere ?? 0) + (tally.not_claimable ?? 0) + (tally.repeated_in_batch ?? 0);
    console.info(
      `runbook resend two workers: ${steps.length} steps ${JSON.stringify(tally)}; ${l.providers.resend.counters.sendCalls} provider calls (${l.providers.resend.counters.batchCalls} batch)`,
    );
    expect(steps).toHaveLength(40);
    expect(won).toBe(10);
    expect(left).toBe(30);
    expect(l.providers.resend.counters.emailsCreated).toBe(10);
    expect((await b.stop()).code).toBe(0);
    expect((await a.stop()).code).toBe(0);
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
