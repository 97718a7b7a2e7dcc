/**
 * Randomized faults on Resend while the stack is killed with SIGKILL several times and restarted
 * on the same data (docs/architecture.md §9, with the email provider Resend): the Resend
 * counterpart of fault-random.test.ts, email only, with batch sends on. `EMAIL_BATCH_MAX=5`: small
 * batches make many provider calls (each draws a fault), and single sends and
 * `POST /emails/batch` calls mix (a queue batch with one ready row is sent alone).
 *
 * Faults, drawn per provider call from a seeded draw (the simulator's `faults.random`):
 * - taken, then the answer held past the client's timeout (slow accept);
 * - held past the timeout and dropped, nothing taken (slow drop);
 * - taken, then the socket reset; the socket reset, nothing taken;
 * - 500 (ambiguous for Resend), also after taking the message;
 * - 429 `rate_limit_exceeded` with `retry-after: 1`;
 * - 409 `concurrent_idempotent_requests` (retryable, short).
 * An idempotent replay (same key, same body) is answered from the key before any fault is drawn,
 * as Resend does. Meanwhile `KILLS` SIGKILLs land while notices are still being posted and sent.
 *
 * Afterwards, provider-side truth against the ledger: every accepted POST has its email row; no
 * intent has more than one email at Resend (`X-Notice-Intent`); every row is resolved; since a
 * Resend lookup inside the 24 h window is decisive (replay under the key), no row is failed as
 * `unknown_unresolved`; every `accepted`/`delivered` row names Resend's id for the one email.
 *
 * Priorities in the mix (issue 15, docs/architecture.md §11): notices cycle through critical,
 * standard and bulk, each lane has its own queues (`LOCAL_LANES=on`) and email sends through the
 * shared rate budget, so kills land on bookings and lane queues too; one email per intent
 * whatever the lane, and each row keeps its notice's priority.
 *
 * Sizes and seed: FAULT_RESEND_NOTICES (default 150), FAULT_KILLS (default 3), FAULT_SEED
 * (default random; printed, so a failing run can be replayed with the same provider draws).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { PRIORITIES, type Priority } from '../../lambdas/domain/priority.ts';
import type { SendFault } from '../../local/email-simulators/kit.ts';
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
  claimsOf,
  ESCALATION_REASONS,
  emailsFor,
  eventId,
  HOLD_PAST_TIMEOUT_MS,
  noticeRequest,
  path,
  positiveInt,
  postThroughKills,
  providerSide,
  RESOLVED,
  SENT,
  SHORT_TIMINGS,
  startProviders,
  waitForTimelines,
} from './runbook-support.ts';
import { assertWellFormed, type Timeline } from './support.ts';

const NOTICES = positiveInt(process.env.FAULT_RESEND_NOTICES, 150);
const KILLS = positiveInt(process.env.FAULT_KILLS, 3);
const SEED = positiveInt(process.env.FAULT_SEED, randomBytes(3).readUIntBE(0, 3) + 1);
/** Notices are posted over this window, so the kills land while work is in flight. */
const POST_WINDOW_MS = 20_000;
const PRODUCERS = 4;
const POST_PATIENCE_MS = 45_000;
const SETTLE_TIMEOUT_MS = 90_000;
/** The whole file must stay under four minutes on two cores. */
const TEST_TIMEOUT_MS = 220_000;

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** The draw: about 25% of first arrivals faulted. */
function drawFault(r: number): SendFault | undefined {
  const hold = HOLD_PAST_TIMEOUT_MS;
  if (r < 0.05) return { kind: 'timeout_after_accept', delayMs: hold };
  if (r < 0.09) return { kind: 'timeout_before_accept', delayMs: hold };
  if (r < 0.11) return { kind: 'reset_after_accept' };
  if (r < 0.13) return { kind: 'reset_before_accept' };
  if (r < 0.15) return { kind: 'status', status: 500 };
  if (r < 0.17) return { kind: 'status', status: 500, afterAccept: true };
  if (r < 0.22) return { kind: 'status', status: 429, name: 'rate_limit_exceeded', retryAfterSeconds: 1 };
  if (r < 0.25) return { kind: 'status', status: 409, name: 'concurrent_idempotent_requests' };
  return undefined;
}

function faultName(fault: SendFault | undefined): string {
  if (!fault) return 'pass';
  if (fault.kind !== 'status') return fault.kind;
  return `status_${fault.status}${fault.afterAccept ? '_after_accept' : ''}`;
}

it(`${NOTICES} email notices on Resend (single and batch sends), random faults, ${KILLS} × SIGKILL: nothing lost, no email twice`, {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const startedAt = Date.now();
  const port = await freePort();
  const providers = await startProviders({
    seed: SEED,
    email: 'resend',
    publicBaseUrl: `http://127.0.0.1:${port}`,
  });
  closers.push(() => providers.close());
  const { resend } = providers;
  const draw = prng(SEED ^ 0x7e5e);
  const faults: Record<string, number> = {};
  resend.faults.random = () => {
    const fault = drawFault(draw());
    const name = faultName(fault);
    faults[name] = (faults[name] ?? 0) + 1;
    return fault;
  };
  const options = {
    dynamodb: 'shared' as const,
    dataDir: await makeDataDir('notice-ledger-fault-random-resend-'),
    port,
    tableName: uniqueTableName('fault-random-resend'),
    env: {
      ...providers.env,
      ...SHORT_TIMINGS,
      MAX_ATTEMPTS: '12',
      UNKNOWN_POLICY: 'escalate',
      EMAIL_BATCH_MAX: '5',
      LOCAL_LANES: 'on',
      EMAIL_SEND_RATE_PER_SECOND: '40',
    },
  };
  let stack: StackProcess = await startStackProcess(options);
  const apiUrl = stack.apiUrl;
  const notices = Array.from({ length: NOTICES }, (_, i) =>
    noticeRequest({
      eventId: eventId(`rr${i}`),
      email: `patient+${randomBytes(4).toString('hex')}@example.com`,
      priority: PRIORITIES[i % PRIORITIES.length] as Priority,
    }),
  );

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
  const timelines = await waitForTimelines(
    apiUrl,
    notices.map((n) => n.noticeId),
    allResolved,
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 1000, what: 'every email of every notice to resolve' },
  );
  const settledMs = Date.now() - postStart;

  // Assess
  const side = await providerSide(providers);
  const rows = timelines.map((timeline: Timeline, i) => {
    const c = channelOf(timeline, 'email');
    return { i, c, ids: emailsFor(side, (notices[i] as (typeof notices)[number]).noticeId) };
  });
  const count = (pred: (row: (typeof rows)[number]) => boolean) => rows.filter(pred).length;
  const reasonCount = (reason: string) =>
    rows.reduce((sum, r) => sum + r.c.transitions.filter((t) => t.reason === reason).length, 0);
  const byState: Record<string, number> = {};
  for (const r of rows) byState[r.c.state] = (byState[r.c.state] ?? 0) + 1;
  const figures = {
    seed: SEED,
    notices: NOTICES,
    acceptedPosts: posted.filter((p) => p?.status === 202 || p?.status === 200).length,
    byState,
    unknownRowsSeen: count((r) => r.c.transitions.some((t) => t.to === 'unknown')),
    leaseExpired: reasonCount('lease_expired'),
    reconciledAccepted: reasonCount('reconciled_accepted'),
    reconciledNotSent: reasonCount('reconciled_not_sent'),
    retriesScheduled: count((r) => r.c.transitions.some((t) => t.to === 'retry_scheduled')),
    maxAttempts: Math.max(...rows.map((r) => r.c.attempts)),
    maxClaims: Math.max(...rows.map((r) => claimsOf(r.c).length)),
    duplicates: count((r) => r.ids.length > 1),
    resend: { ...resend.counters, faults },
    kills,
    resolvedAfterMs: settledMs,
    wallMs: Date.now() - startedAt,
  };
  console.info(`fault-random-resend figures:\n${JSON.stringify(figures, null, 2)}`);
  expect(figures.acceptedPosts).toBe(NOTICES);
  expect(kills).toHaveLength(KILLS);
  for (const kill of kills) expect(kill.signal).toBe('SIGKILL');
  // The faults happened, of most kinds, on single and batch calls.
  expect(Object.keys(faults).filter((k) => k !== 'pass').length).toBeGreaterThanOrEqual(4);
  expect(resend.counters.batchCalls).toBeGreaterThan(0);
  expect(resend.counters.sendCalls).toBeGreaterThan(resend.counters.batchCalls);
  expect(figures.unknownRowsSeen).toBeGreaterThan(0);
  const problems: string[] = [];
  for (const { i, c, ids } of rows) {
    const where = `notice ${i} (${c.state}, provider-side ${ids.length}): ${path(c)}`;
    if (ids.length > 1) problems.push(`duplicate: ${where}`);
    // Whatever lane it waited in, the row keeps its notice's priority.
    const priority = PRIORITIES[i % PRIORITIES.length];
    if (c.priority !== priority) problems.push(`priority ${c.priority} instead of ${priority}: ${where}`);
    if (!RESOLVED.has(c.state)) problems.push(`unresolved: ${where}`);
    if (c.state === 'failed') {
      const reason = c.transitions.at(-1)?.reason ?? '';
      if (!ESCALATION_REASONS.has(reason)) problems.push(`failed without an escalation reason: ${where}`);
      // A Resend lookup inside the key's window always decides: never undecidable here.
      if (reason === 'unknown_unresolved') problems.push(`undecided although Resend holds the key: ${where}`);
    }
    if (SENT.has(c.state) && (ids.length !== 1 || c.providerReceiptId !== ids[0]))
      problems.push(`ledger and provider disagree: ${where}`);
    for (const problem of assertWellFormed(c.transitions)) problems.push(`${problem}: ${where}`);
  }
  expect(problems).toEqual([]);
  expect(figures.duplicates).toBe(0);
  expect(Date.now() - startedAt).toBeLessThan(TEST_TIMEOUT_MS);
  expect((await stack.stop()).code).toBe(0);
});
