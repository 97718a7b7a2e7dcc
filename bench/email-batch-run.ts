/**
 * Provider batch sends against a per-request-limited provider (issue 12, docs/architecture.md
 * §4 "One dispatch path"): the Resend simulator capped at R requests/s (Resend's default team limit, 5/s;
 * a `POST /emails/batch` of up to 100 emails is one request), the same burst of email-only
 * notices sent by the local stack, each run on a fresh stack and table:
 * - single sends: `EMAIL_BATCH_MAX=1`, one `POST /emails` per email, ideal N/R;
 * - batches: `EMAIL_BATCH_MAX=100`, ideal N/(R × 100).
 * Our senders pace at the provider's rate (`EMAIL_SEND_RATE_PER_SECOND` = R, the channel's shared
 * rate budget: one token per provider call, whatever its size). Webhooks are off (as the SMS run's callbacks are), so every
 * row ends `accepted` by the sender's own write.
 *
 * Two ways to start the clock:
 * - `queued` (the provider-bound figure the issue's ideal describes): the notices are taken in
 *   first by a stack whose email sender is off (`LOCAL_SENDERS=sms`), then a stack with the
 *   sender starts on the same table and queues; the drain runs from its first provider call to
 *   the last acceptance recorded, and queue ages count from that first call;
 * - `burst` (what a client sees): intake and sending at once, the drain from the first POST.
 *   On the local stack this is bound by intake and ledger writes on DynamoDB Local (2 shared
 *   cores), not by the provider's cap; reported for batches only, beside the queued figure.
 * The single-send run uses its own, smaller N (ideal N/R = 600 s at N = 3000 is too long for a
 * bench): its drain is compared as drain / ideal with the batch runs', not in seconds.
 *
 * Measured as in throttle-run.ts: trigger = start of the intake POST that carried the notice;
 * accepted = the `at` of the row's `accepted` record; duplicates = emails beyond the first per
 * intent at the simulator (`X-Notice-Intent`); lost = notices without both an `accepted` row and
 * an email; calls per accepted = send calls the simulator received (single and batch, 429s
 * included) / distinct intents it holds an email for; queue age on a 250 ms grid.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type ResendSimulator, startResendSimulator } from '../local/email-simulators/resend.ts';
import type { ThrottleFigures } from './lib/figures.ts';
import { acceptedAt, benchNotices, type LedgerRow, postBurst, readLedgerRows } from './lib/notices.ts';
import { type StackHandle, startStackChild } from './lib/stack-process.ts';
import { percentile, type QueueAgePoint, queueAgeSeries, round } from './lib/stats.ts';

export interface EmailRunFigures extends ThrottleFigures {
  /** Emails per provider call asked of the stack (`EMAIL_BATCH_MAX`). */
  readonly batchMax: number;
  /** Send calls that were `POST /emails/batch`. */
  readonly batchCalls: number;
  /** Emails accepted per successful provider call, on average. */
  readonly emailsPerCall: number;
  readonly intakeSeconds: number;
  readonly finalStates: Record<string, number>;
  /** How the clock started (see above). */
  readonly clock: 'queued' | 'burst';
}

export interface EmailBatchResult {
  readonly providerRatePerSecond: number;
  /** Queued, one email per call. */
  readonly single: EmailRunFigures;
  /** Queued, batches of 100. */
  readonly batched: EmailRunFigures;
  /** Intake and sending at once, batches of 100. */
  readonly batchedBurst?: EmailRunFigures;
  readonly series: { readonly single: QueueAgePoint[]; readonly batched: QueueAgePoint[] };
}

export interface EmailBatchOptions {
  /** The stack's base environment (services, SMS provider); email settings are added here. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly ddb: DynamoDBClient;
  readonly rate: number;
  readonly batchedNotices: number;
  readonly singleNotices: number;
  /** Sender invocations in flight (the deployed e-mail event source's maximum concurrency: 5). */
  readonly concurrency: number;
  /** Also the batched burst with intake on the clock. */
  readonly burst: boolean;
  readonly tag: string;
  readonly log: (line: string) => void;
}

export async function runEmailBatchBench(options: EmailBatchOptions): Promise<EmailBatchResult> {
  const resend = await startResendSimulator({});
  try {
    const batched = await oneRun(resend, options, 100, options.batchedNotices, `${options.tag}eq`, 'queued');
    const single = await oneRun(resend, options, 1, options.singleNotices, `${options.tag}es`, 'queued');
    const burst = options.burst
      ? await oneRun(resend, options, 100, options.batchedNotices, `${options.tag}eb`, 'burst')
      : undefined;
    return {
      providerRatePerSecond: options.rate,
      single: single.figures,
      batched: batched.figures,
      ...(burst ? { batchedBurst: burst.figures } : {}),
      series: { single: single.series, batched: batched.series },
    };
  } finally {
    await resend.close();
  }
}

async function oneRun(
  resend: ResendSimulator,
  options: EmailBatchOptions,
  batchMax: number,
  n: number,
  tag: string,
  clock: 'queued' | 'burst',
): Promise<{ figures: EmailRunFigures; series: QueueAgePoint[] }> {
  const { log, rate } = options;
  resend.reset();
  resend.set({ rateLimitPerSecond: rate, webhooksEnabled: false });
  const dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-bench-email-'));
  const start = (extra: Record<string, string> = {}) =>
    startStackChild(
      {
        ...options.baseEnv,
        LEDGER_DATA_DIR: dataDir,
        LEDGER_TABLE_NAME: `bench-${tag}`,
        EMAIL_PROVIDER: 'resend',
        RESEND_BASE_URL: resend.baseUrl,
        RESEND_API_KEY: resend.apiKey,
        RESEND_WEBHOOK_SECRET: resend.webhookSecret,
        RESEND_FROM: 'Clinic <notices@example.com>',
        EMAIL_BATCH_MAX: String(batchMax),
        EMAIL_SEND_RATE_PER_SECOND: String(rate),
        LOCAL_SQS_CONCURRENCY: String(options.concurrency),
        ...extra,
      },
      log,
    );
  let stack: StackHandle | undefined;
  try {
    const ideal = n / (rate * batchMax);
    log(
      `email ${batchMax === 1 ? 'single sends' : `batches of ${batchMax}`} (${clock}): ${n} notices, Resend capped at ${rate} requests/s (ideal ${round(ideal, 1)} s)`,
    );
    const notices = benchNotices(tag, n, ['email']);
    const ids = notices.map((x) => x.noticeId);
    // Queued: intake by a stack whose email sender is off; then the sending stack.
    stack = await start(clock === 'queued' ? { LOCAL_SENDERS: 'sms' } : {});
    const intakeStart = Date.now();
    const posted = await postBurst(stack.apiUrl, notices);
    const intakeSeconds = (Math.max(...posted.batches.map((b) => b.finishedAt)) - intakeStart) / 1000;
    if (clock === 'queued') {
      await stack.stop();
      stack = await start();
    }
    const t0 = Date.now();
    const deadline = t0 + Math.max(90_000, 3 * ideal * 1000 + 30_000);
    let rows = new Map<string, LedgerRow>();
    let lastReport = Date.now();
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        log(
          `  t=${Math.round((Date.now() - t0) / 1000)} s: ${resend.counters.emailsCreated}/${n} emails, ${resend.counters.rateLimited} × 429`,
        );
      }
      if (resend.counters.emailsCreated < n) continue;
      rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'email');
      if (ids.every((id) => acceptedAt(rows.get(id)) !== undefined)) break;
    }
    const endedAt = Date.now();
    rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'email');
    let triggers = posted.triggers;
    if (clock === 'queued') {
      // The clock starts at the sender's first provider call (Resend's createdAt, same clock).
      const firstCall = Math.min(...resend.emails().map((e) => e.createdAt));
      triggers = triggers.map((t) => Math.max(t, firstCall));
    }
    return emailFigures({ batchMax, rate, ids, triggers, rows, resend, endedAt, intakeSeconds, clock });
  } finally {
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
function emailFigures(input: {
  batchMax: number;
  rate: number;
  ids: readonly string[];
  triggers: readonly number[];
  rows: ReadonlyMap<string, LedgerRow>;
  resend: ResendSimulator;
  endedAt: number;
  intakeSeconds: number;
  clock: 'queued' | 'burst';
}): { figures: EmailRunFigures; series: QueueAgePoint[] } {
  const n = input.ids.length;
  const perIntent = new Map<string, number>();
  for (const email of input.resend.emails()) {
    const intent = email.headers['X-Notice-Intent'];
    if (intent) perIntent.set(intent, (perIntent.get(intent) ?? 0) + 1);
  }
  let duplicates = 0;
  for (const count of perIntent.values()) duplicates += Math.max(0, count - 1);
  const resolved: number[] = [];
  const latencies: number[] = [];
  const finalStates: Record<string, number> = {};
  let accepted = 0;
  input.ids.forEach((id, i) => {
    const row = input.rows.get(id);
    finalStates[row?.state ?? 'missing'] = (finalStates[row?.state ?? 'missing'] ?? 0) + 1;
    const at = acceptedAt(row);
    if (at !== undefined && (perIntent.get(`${id}-email`) ?? 0) > 0) {
      accepted++;
      resolved.push(at);
      latencies.push((at - (input.triggers[i] as number)) / 1000);
    } else resolved.push(Number.POSITIVE_INFINITY);
  });
  const start = Math.min(...input.triggers);
  const end = accepted === n ? Math.max(...resolved) : input.endedAt;
  const series = queueAgeSeries(input.triggers, resolved, start, end);
  const idealSeconds = n / (input.rate * input.batchMax);
  const drainSeconds = (end - start) / 1000;
  const c = input.resend.counters;
  const okCalls = c.sendCalls - c.rateLimited - c.faultsInjected;
  return {
    series,
    figures: {
      notices: n,
      providerRatePerSecond: input.rate,
      drainSeconds: round(drainSeconds),
      idealSeconds: round(idealSeconds),
      drainOverIdeal: round(drainSeconds / idealSeconds, 3),
      providerCallsPerAccepted: round(c.sendCalls / Math.max(1, perIntent.size), 4),
      duplicates,
      lost: n - accepted,
      p50TriggerToAcceptedSeconds: round(percentile(latencies, 50)),
      p99TriggerToAcceptedSeconds: round(percentile(latencies, 99)),
      maxQueueAgeSeconds: round(Math.max(0, ...series.map((p) => p.oldestAgeSeconds))),
      providerCalls: c.sendCalls,
      providerRateLimited: c.rateLimited,
      accepted,
      batchMax: input.batchMax,
      batchCalls: c.batchCalls,
      emailsPerCall: round(c.emailsCreated / Math.max(1, okCalls), 1),
      intakeSeconds: round(input.intakeSeconds),
      finalStates,
      clock: input.clock,
    },
  };
}
