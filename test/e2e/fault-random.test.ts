/**
 * Randomized faults on both providers while the stack is killed with SIGKILL several times and
 * restarted on the same data (docs/architecture.md §9, "kill -9 anywhere, any number of times: no notice lost,
 * no duplicate send beyond a recorded and reconciled `unknown`").
 *
 * Faults, drawn per provider call:
 * - SMS (the simulator's seeded probabilities): the message stored but the 201 held past the
 *   timeout, nothing stored and the answer held past the timeout, 500 (ambiguous for Twilio),
 *   429 with Retry-After 1 s;
 * - SES (fault proxy in front of aws-ses-v2-local, seeded draw): forwarded and answer held past
 *   the timeout, held and dropped unforwarded, 429, 500 (ambiguous for SES), 503 (retryable).
 * Meanwhile `KILLS` SIGKILLs land while notices are still being posted and sent.
 *
 * Afterwards, provider-side truth against the ledger: every channel of every accepted POST is
 * in the ledger; no (notice, channel) has more than one message at its provider; every row is
 * resolved, `failed` only with an escalation reason; every `accepted`/`delivered` row names the
 * provider's own id for the one message the provider holds.
 *
 * Configuration: `UNKNOWN_POLICY=fail` (what `escalate` meant before issue 14: no person acts in
 * this test, and its end state must be final). SES has no lookup, so an email whose outcome stays
 * unknown past UNKNOWN_GRACE_MS (no SES event) is failed and escalated for a person to decide:
 * after a restart the event feed replays the whole store, and a resend policy could then resend
 * a mail whose Delivery event was merely late. `MAX_ATTEMPTS=12`: with ~20% of provider calls faulted
 * and each kill costing the rows it catches one attempt, 8 attempts would leave a real (if small)
 * chance of `attempts_exhausted` from random draws alone; 12 makes that negligible (~0.2^12), so
 * an exhausted row here would point at a defect rather than at bad luck.
 *
 * Priorities in the mix (issue 15, docs/architecture.md §11): notices cycle through critical,
 * standard and bulk, each lane has its own queues (`LOCAL_LANES=on`) and both channels send
 * through the shared rate budget, so kills land on bookings and lane queues too; one intent per
 * (notice, channel) whatever the lane, and each channel keeps its notice's priority.
 *
 * Sizes and seed: FAULT_NOTICES (default 200), FAULT_KILLS (default 3), FAULT_SEED (default
 * random; printed, so a failing run can be replayed with the same provider draws).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { PRIORITIES, type Priority } from '../../lambdas/domain/priority.ts';
import type { ProxyFault } from '../../local/fault-proxy.ts';
import { seededRandom as prng } from '../../local/seeded-random.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import {
  freePort,
  makeDataDir,
  type StackProcess,
  startStackProcess,
  stopAllStacks,
} from '../helpers/local-stack.ts';
import {
  allResolved,
  channelOf,
  ESCALATION_REASONS,
  emailsFor,
  eventId,
  HOLD_PAST_TIMEOUT_MS,
  noticeRequest,
  path,
  phoneBook,
  positiveInt,
  postThroughKills,
  providerSide,
  RESOLVED,
  SENT,
  SHORT_TIMINGS,
  startProviders,
  textsFor,
  waitForTimelines,
} from './runbook-support.ts';
import { assertWellFormed, type Timeline } from './support.ts';

const NOTICES = positiveInt(process.env.FAULT_NOTICES, 200);
const KILLS = positiveInt(process.env.FAULT_KILLS, 3);
const SEED = positiveInt(process.env.FAULT_SEED, randomBytes(3).readUIntBE(0, 3) + 1);
/** Notices are posted over this window, so the kills land while work is in flight. */
const POST_WINDOW_MS = 24_000;
const PRODUCERS = 4;
/** Per notice: how long a client keeps retrying its POST (through kills and restarts). */
const POST_PATIENCE_MS = 45_000;
const SETTLE_TIMEOUT_MS = 90_000;
/**
 * Longer than the runbook's 4 s: the grace must outlast the slowest way a provider's answer can
 * reach the ledger, and here that is the SES event feed after a restart, which replays the
 * emulator's whole store (hundreds of events, eight mails at a time) before it reaches the
 * mails sent just before the kill. A shorter grace escalates mails SES did accept.
 */
const UNKNOWN_GRACE_MS = 12_000;
/** The whole file must stay under four minutes on two cores. */
const TEST_TIMEOUT_MS = 230_000;

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

it(`${NOTICES} notices, faults on both providers, ${KILLS} × SIGKILL: nothing lost, nothing sent twice, every row resolved or escalated`, {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const startedAt = Date.now();
  // Prepare: providers in this process (they outlive every kill), faults on both.
  const providers = await startProviders({ seed: SEED });
  closers.push(() => providers.close());
  const { sms, sesProxy } = providers;
  sms.faults.set({
    probabilities: { timeoutAfterAccept: 0.05, timeoutBeforeAccept: 0.05, status500: 0.05, status429: 0.03 },
    randomTimeoutMs: HOLD_PAST_TIMEOUT_MS,
  });
  const sesDraw = prng(SEED ^ 0x5e5);
  const sesFaults: Record<string, number> = {};
  let sesCalls = 0;
  sesProxy.random = (): ProxyFault => {
    sesCalls += 1;
    const r = sesDraw();
    const fault: ProxyFault =
      r < 0.05
        ? { kind: 'timeout_after_accept', delayMs: HOLD_PAST_TIMEOUT_MS }
        : r < 0.1
          ? { kind: 'timeout_before_accept', delayMs: HOLD_PAST_TIMEOUT_MS }
          : r < 0.13
            ? { kind: 'status', status: 429 }
            : r < 0.16
              ? { kind: 'status', status: 500 }
              : r < 0.19
                ? { kind: 'status', status: 503 }
                : { kind: 'pass' };
    const name = fault.kind === 'status' ? `status_${fault.status}` : fault.kind;
    sesFaults[name] = (sesFaults[name] ?? 0) + 1;
    return fault;
  };
  const options = {
    dynamodb: 'shared' as const,
    dataDir: await makeDataDir('notice-ledger-fault-random-'),
    port: await freePort(),
    tableName: uniqueTableName('fault-random'),
    env: {
      ...providers.env,
      ...SHORT_TIMINGS,
      MAX_ATTEMPTS: '12',
      UNKNOWN_POLICY: 'fail',
      UNKNOWN_GRACE_MS: String(UNKNOWN_GRACE_MS),
      LOCAL_LANES: 'on',
      EMAIL_SEND_RATE_PER_SECOND: '40',
      SMS_SEND_RATE_PER_SECOND: '40',
    },
  };
  let stack: StackProcess = await startStackProcess(options);
  const apiUrl = stack.apiUrl;
  const phone = phoneBook();
  const notices = Array.from({ length: NOTICES }, (_, i) => {
    const destination = phone();
    const request = noticeRequest({
      eventId: eventId(`rnd${i}`),
      email: `success+${randomBytes(4).toString('hex')}@simulator.amazonses.com`,
      phone: destination,
    });
    const priority = PRIORITIES[i % PRIORITIES.length] as Priority;
    return { phone: destination, priority, noticeId: request.noticeId, body: { ...request.body, priority } };
  });

  // Act: producers post on a schedule, retrying through the kills as any client would;
  // meanwhile the stack is SIGKILLed and restarted on the same data dir, port and table.
  const postStart = Date.now();
  const run = await postThroughKills({
    apiUrl,
    bodies: notices.map((n) => n.body),
    windowMs: POST_WINDOW_MS,
    producers: PRODUCERS,
    patienceMs: POST_PATIENCE_MS,
    kills: KILLS,
    stack,
    restart: () => startStackProcess(options),
  });
  const { posted, kills } = run;
  stack = run.stack;
  const postedMs = Date.now() - postStart;
  const timelines = await waitForTimelines(
    apiUrl,
    notices.map((n) => n.noticeId),
    allResolved,
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 1000, what: 'every channel of every notice to resolve' },
  );
  const settledMs = Date.now() - postStart;

  // Assess
  const side = await providerSide(providers);
  const rows = timelines.flatMap((timeline: Timeline, i) => {
    const notice = notices[i] as (typeof notices)[number];
    return (['email', 'sms'] as const).map((channel) => {
      const c = channelOf(timeline, channel);
      const ids = channel === 'email' ? emailsFor(side, notice.noticeId) : textsFor(side, notice.phone);
      return { i, channel, c, ids };
    });
  });
  const count = (pred: (row: (typeof rows)[number]) => boolean) => rows.filter(pred).length;
  const reasonCount = (reason: string) =>
    rows.reduce((sum, r) => sum + r.c.transitions.filter((t) => t.reason === reason).length, 0);
  const byState: Record<string, number> = {};
  for (const r of rows) byState[r.c.state] = (byState[r.c.state] ?? 0) + 1;
  const escalated = rows.filter((r) => r.c.state === 'failed');
  const escalationReasons: Record<string, number> = {};
  for (const r of escalated) {
    const reason = r.c.transitions.at(-1)?.reason ?? '?';
    escalationReasons[reason] = (escalationReasons[reason] ?? 0) + 1;
  }
  const ourEmails = notices.reduce((sum, n) => sum + emailsFor(side, n.noticeId).length, 0);
  const ourTexts = notices.reduce((sum, n) => sum + textsFor(side, n.phone).length, 0);
  const figures = {
    seed: SEED,
    notices: NOTICES,
    acceptedPosts: posted.filter((p) => p?.status === 202 || p?.status === 200).length,
    postsThatNeededRetries: posted.filter((p) => (p?.tries ?? 0) > 1).length,
    postsAnsweredAsReplay: posted.filter((p) => p?.status === 200).length,
    intents: rows.length,
    byState,
    unknownRowsSeen: count((r) => r.c.transitions.some((t) => t.to === 'unknown')),
    leaseExpired: reasonCount('lease_expired'),
    reconciledAccepted: reasonCount('reconciled_accepted'),
    reconciledNotSent: reasonCount('reconciled_not_sent'),
    escalations: escalated.length,
    escalationReasons,
    escalatedButAtProvider: count((r) => r.c.state === 'failed' && r.ids.length > 0),
    retriesScheduled: count((r) => r.c.transitions.some((t) => t.to === 'retry_scheduled')),
    maxAttempts: Math.max(...rows.map((r) => r.c.attempts)),
    sms: {
      providerCalls: sms.faults.counters.createCalls,
      acceptedMessages: ourTexts,
      faultsInjected: sms.faults.counters.faultsInjected,
      rateLimited: sms.faults.counters.rateLimited,
    },
    email: { providerCalls: sesCalls, acceptedMessages: ourEmails, faults: sesFaults },
    kills,
    postedInMs: postedMs,
    resolvedAfterMs: settledMs,
    wallMs: Date.now() - startedAt,
  };
  console.info(`fault-random figures:\n${JSON.stringify(figures, null, 2)}`);
  // Every accepted POST: both channels in the ledger.
  expect(figures.acceptedPosts).toBe(NOTICES);
  for (const timeline of timelines) {
    expect(timeline.channels.map((c) => c.channel).sort()).toEqual(['email', 'sms']);
  }
  // The kills happened, as SIGKILLs, while work was in flight.
  expect(kills).toHaveLength(KILLS);
  for (const kill of kills) expect(kill.signal).toBe('SIGKILL');
  // The faults happened, on both providers.
  expect(figures.sms.faultsInjected).toBeGreaterThan(0);
  expect(Object.keys(sesFaults).filter((k) => k !== 'pass').length).toBeGreaterThanOrEqual(4);
  expect(figures.unknownRowsSeen).toBeGreaterThan(0);
  const problems: string[] = [];
  for (const { i, channel, c, ids } of rows) {
    const where = `notice ${i} ${channel} (${c.state}, provider-side ${ids.length}): ${path(c)}`;
    // No duplicate send.
    if (ids.length > 1) problems.push(`duplicate: ${where}`);
    // Resolved, and failed only as an escalation (no permanent rejection was injected).
    if (!RESOLVED.has(c.state)) problems.push(`unresolved: ${where}`);
    if (c.state === 'failed' && !ESCALATION_REASONS.has(c.transitions.at(-1)?.reason ?? ''))
      problems.push(`failed without an escalation reason: ${where}`);
    // What the ledger calls sent is what the provider holds, under the provider's own id.
    if (SENT.has(c.state) && (ids.length !== 1 || c.providerReceiptId !== ids[0]))
      problems.push(`ledger and provider disagree: ${where}`);
    for (const problem of assertWellFormed(c.transitions)) problems.push(`${problem}: ${where}`);
    // Whatever lane it waited in, the channel keeps its notice's priority.
    const priority = (notices[i] as (typeof notices)[number]).priority;
    if (c.priority !== priority) problems.push(`priority ${c.priority} instead of ${priority}: ${where}`);
  }
  expect(problems).toEqual([]);
  expect(Date.now() - startedAt).toBeLessThan(TEST_TIMEOUT_MS);
  expect((await stack.stop()).code).toBe(0);
});
