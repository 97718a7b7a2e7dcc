/**
 * The `failover` scenario (docs/benchmarks.md "Provider failover", issue 24): N SMS over two
 * providers on the local stack, `SMS_PROVIDER=twilio` behind a fault proxy and
 * `SMS_FALLBACK_PROVIDER=eum` (the EUM simulator the stack starts). Per Twilio send call, drawn
 * from a seeded PRNG:
 *   15 %  timeout after accepting (the simulator holds the message; the answer comes too late),
 *   15 %  timeout before accepting (nothing reaches the simulator),
 *   10 %  401 with Twilio's code 20003 (our account refused: the failover cause),
 *   60 %  passed through.
 * Lookups and status fetches pass untouched. Counted at the simulators, per destination number
 * (each notice has its own): `duplicates` = numbers with two messages or more across both
 * providers (must be 0), `lost` = notices no provider holds a message for (must be 0), and every
 * row must end out of the unresolved states. `callsPerAccepted` = send calls at both providers
 * (Twilio's counted at the proxy, refused and timed out ones included) per accepted notice.
 * Bounded: the drain waits at most `drainTimeoutMs` (N = 1000: under 9 minutes), every server
 * binds 127.0.0.1 and is stopped.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startFaultProxy } from '../local/fault-proxy.ts';
import { seededRandom } from '../local/seeded-random.ts';
import { startSmsSimulator } from '../local/sms-simulator/server.ts';
import { benchNotices, type LedgerRow, postBurst, readLedgerRows } from './lib/notices.ts';
import { startStackChild } from './lib/stack-process.ts';
import { round } from './lib/stats.ts';

export interface FailoverFigures {
  readonly notices: number;
  /** Rows whose primary attempt failed over to the fallback (one `failover` record each at most). */
  readonly failovers: number;
  /** Destination numbers holding two messages or more across both providers (must be 0). */
  readonly duplicates: number;
  /** Notices no provider holds a message for (must be 0). */
  readonly lost: number;
  /** Send calls at both providers per accepted notice. */
  readonly callsPerAccepted: number;
  /** Rows still unresolved (reserved, sending, retry_scheduled, unknown) at the end (must be 0). */
  readonly unresolved: number;
  readonly acceptedBy: { readonly twilio: number; readonly eum: number };
  readonly states: Readonly<Record<string, number>>;
  /** What the fault proxy did to Twilio's send calls. */
  readonly twilioCalls: {
    readonly timeoutAfterAccept: number;
    readonly timeoutBeforeAccept: number;
    readonly accountRefused: number;
    readonly passed: number;
  };
  readonly eumCalls: number;
  /** `unknown` rows the reconciler settled by asking Twilio. */
  readonly reconciled: { readonly accepted: number; readonly notSent: number };
  readonly drainSeconds: number;
  readonly faults: string;
}

const FROM = '+15005550006';
const PROVIDER_TIMEOUT_MS = 1_000;
const UNRESOLVED = new Set(['reserved', 'sending', 'retry_scheduled', 'unknown']);

const count = (rows: Iterable<LedgerRow>, reason: string) =>
  [...rows].filter((row) => row.transitions.some((t) => t.r === reason)).length;

export async function runFailover(options: {
  /** The bench's stack environment (DynamoDB, SQS, SES, scheduler endpoints). */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly ddb: DynamoDBClient;
  readonly notices: number;
  readonly tag: string;
  readonly log: (line: string) => void;
  /** @default 120 s + 0.4 s per notice */
  readonly drainTimeoutMs?: number;
}): Promise<FailoverFigures> {
  const { log } = options;
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const twilio = await startSmsSimulator({ fromNumbers: [FROM], statusDelayMs: 20 });
    cleanups.push(() => twilio.close());
    const proxy = await startFaultProxy({
      upstream: twilio.baseUrl,
      match: (method, path) => method === 'POST' && path.endsWith('/Messages.json'),
    });
    cleanups.push(() => proxy.close());
    const random = seededRandom(24);
    const late = PROVIDER_TIMEOUT_MS + 500;
    // Asked once per send call (only those match): what each call met, counted here.
    const twilioCalls = { timeoutAfterAccept: 0, timeoutBeforeAccept: 0, accountRefused: 0, passed: 0 };
    proxy.random = () => {
      const r = random();
      if (r < 0.15) {
        twilioCalls.timeoutAfterAccept += 1;
        return { kind: 'timeout_after_accept', delayMs: late };
      }
      if (r < 0.3) {
        twilioCalls.timeoutBeforeAccept += 1;
        return { kind: 'timeout_before_accept', delayMs: late };
      }
      if (r < 0.4) {
        twilioCalls.accountRefused += 1;
        return {
          kind: 'status',
          status: 401,
          body: JSON.stringify({ code: 20003, message: 'Authenticate', status: 401 }),
        };
      }
      twilioCalls.passed += 1;
      return { kind: 'pass' };
    };
    const dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-bench-failover-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const tableName = `bench-${options.tag}-failover`;
    const stack = await startStackChild(
      {
        ...options.baseEnv,
        LEDGER_DATA_DIR: dataDir,
        LEDGER_TABLE_NAME: tableName,
        TWILIO_BASE_URL: proxy.endpoint,
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_FROM: FROM,
        SMS_PROVIDER: 'twilio',
        SMS_FALLBACK_PROVIDER: 'eum',
        // No rate budget: the scenario is about outcomes, not pacing.
        SMS_SEND_RATE_PER_SECOND: '0',
        PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
        SEND_LEASE_MS: '10000',
        RECONCILE_INTERVAL_MS: '1000',
        // A Twilio listing without the message proves "not sent" only after the grace (a message
        // may not be listed yet right after the call): 5 s here instead of 10 minutes.
        UNKNOWN_GRACE_MS: '5000',
        RETRY_BASE_MS: '200',
        RETRY_CAP_MS: '2000',
      },
      log,
    );
    cleanups.push(() => stack.stop());
    const state = JSON.parse(await readFile(join(dataDir, 'local-stack.json'), 'utf8')) as {
      endpoints: Record<string, string>;
    };
    const eumEndpoint = state.endpoints.eum;
    if (!eumEndpoint) throw new Error('the stack started no EUM simulator');

    const notices = benchNotices(`${options.tag}f`, options.notices, ['sms'], 7);
    const ids = notices.map((n) => n.noticeId);
    log(`failover: ${notices.length} SMS, Twilio behind faults, EUM as the fallback`);
    const started = Date.now();
    await postBurst(stack.apiUrl, notices);
    const deadline = started + (options.drainTimeoutMs ?? 120_000 + 400 * notices.length);
    let rows = new Map<string, LedgerRow>();
    for (;;) {
      rows = await readLedgerRows(options.ddb, tableName, ids, 'sms');
      const open =
        [...rows.values()].filter((r) => UNRESOLVED.has(r.state)).length + (ids.length - rows.size);
      if (open === 0 || Date.now() > deadline) break;
      await sleep(1_000);
    }
    const drainSeconds = round((Date.now() - started) / 1000, 1);
    // Calls still held by the proxy (a late answer) end within `late`; then count.
    await sleep(late + 200);
    rows = await readLedgerRows(options.ddb, tableName, ids, 'sms');

    const eum = (await (await fetch(`${eumEndpoint}/__messages`)).json()) as {
      messages: { to: string }[];
      counters: { sendCalls: number };
    };
    const perNumber = new Map<string, number>();
    for (const to of [...twilio.messages().map((m) => m.to), ...eum.messages.map((m) => m.to)]) {
      perNumber.set(to, (perNumber.get(to) ?? 0) + 1);
    }
    const states: Record<string, number> = {};
    for (const row of rows.values()) states[row.state] = (states[row.state] ?? 0) + 1;
    const accepted = [...rows.values()].filter(
      (r) => r.state === 'accepted' || r.state === 'delivered',
    ).length;
    const sendCalls = Object.values(twilioCalls).reduce((a, n) => a + n, 0);
    const figures: FailoverFigures = {
      notices: notices.length,
      failovers: count(rows.values(), 'failover'),
      duplicates: [...perNumber.values()].filter((n) => n > 1).length,
      lost: notices.filter((n) => !perNumber.has(n.phone)).length,
      callsPerAccepted: accepted === 0 ? 0 : round((sendCalls + eum.counters.sendCalls) / accepted, 3),
      unresolved: [...rows.values()].filter((r) => UNRESOLVED.has(r.state)).length + (ids.length - rows.size),
      acceptedBy: {
        twilio: new Set(twilio.messages().map((m) => m.to)).size,
        eum: new Set(eum.messages.map((m) => m.to)).size,
      },
      states,
      twilioCalls: { ...twilioCalls },
      eumCalls: eum.counters.sendCalls,
      reconciled: {
        accepted: count(rows.values(), 'reconciled_accepted'),
        notSent: count(rows.values(), 'reconciled_not_sent'),
      },
      drainSeconds,
      faults:
        'Twilio send calls: 15 % timeout after accepting, 15 % timeout before, 10 % 401 (20003), 60 % pass (seed 24); ' +
        `PROVIDER_TIMEOUT_MS ${PROVIDER_TIMEOUT_MS}`,
    };
    log(
      `failover: ${figures.failovers} failovers, ${figures.duplicates} duplicates, ${figures.lost} lost, ` +
        `${figures.unresolved} unresolved, ${figures.callsPerAccepted} calls per accepted, drained in ${drainSeconds} s`,
    );
    return figures;
  } finally {
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()?.();
      } catch (error) {
        log(`failover cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
