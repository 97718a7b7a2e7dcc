/**
 * The `deadlineRisk` scenario (docs/benchmarks.md, issue 15): a backlog of B SMS at a provider
 * capped at R/s, then N notices with a deadline of D seconds behind it, and, as a control, a few
 * critical notices with the same deadline (their lane is ahead of the backlog: they make it).
 * On the stack with lanes and the shared budget. Measured per deadline notice:
 * - warned: its row carries a `deadline_at_risk` record; warning delay = that record's time −
 *   its POST's start; published = the escalation marker is gone (intake publishes at once, else
 *   the next reconciler run);
 * - made it: accepted by its deadline.
 * Targets: every channel that did not make it warned within one reconciler interval of intake;
 * none warned that made it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SmsSimulator } from '../local/sms-simulator/server.ts';
import {
  acceptedAt,
  type BenchNotice,
  benchNotices,
  type LedgerRow,
  postBurst,
  readLedgerRows,
} from './lib/notices.ts';
import type { StackHandle } from './lib/stack-process.ts';
import { round } from './lib/stats.ts';

export interface DeadlineRiskFigures {
  readonly backlog: number;
  readonly notices: number;
  readonly controlCritical: number;
  readonly deadlineSeconds: number;
  readonly providerRatePerSecond: number;
  readonly reconcileIntervalSeconds: number;
  readonly missed: number;
  readonly madeIt: number;
  readonly warned: number;
  readonly warnedPublished: number;
  /** Missed their deadline without a warning (must be 0). */
  readonly missedUnwarned: number;
  /** Warned but made it (must be 0). */
  readonly warnedButMadeIt: number;
  readonly maxWarningDelaySeconds: number;
  readonly p50WarningDelaySeconds: number;
  readonly controlMadeIt: number;
  readonly controlWarned: number;
}

const riskRecord = (row: LedgerRow | undefined) => row?.transitions.find((t) => t.r === 'deadline_at_risk');

export async function runDeadlineRisk(options: {
  readonly stack: StackHandle;
  readonly simulator: SmsSimulator;
  readonly ddb: DynamoDBClient;
  readonly backlog: number;
  readonly notices: number;
  readonly controlCritical: number;
  readonly deadlineSeconds: number;
  readonly rate: number;
  readonly reconcileIntervalSeconds: number;
  readonly tag: string;
  readonly log: (line: string) => void;
}): Promise<DeadlineRiskFigures> {
  const { stack, simulator, rate, log } = options;
  simulator.reset();
  simulator.faults.set({ rateLimitPerSecond: rate, callbacksEnabled: false, deliveryFailures: [] });
  log(
    `deadline risk: ${options.notices} notices with a ${options.deadlineSeconds} s deadline behind ${options.backlog} at ${rate}/s`,
  );
  await postBurst(stack.apiUrl, benchNotices(`${options.tag}q`, options.backlog));
  const withDeadline = (list: BenchNotice[], priority: string) =>
    list.map((n) => ({
      ...n,
      body: {
        ...n.body,
        priority,
        deadline: new Date(Date.now() + options.deadlineSeconds * 1000).toISOString(),
      },
    }));
  // Deadlines are set when posted: each chunk's bodies are built just before their POST.
  const deadlineNotices = benchNotices(`${options.tag}d`, options.notices, ['sms'], 1);
  const control = benchNotices(`${options.tag}k`, options.controlCritical, ['sms'], 2);
  const triggers = new Map<string, number>();
  const post = async (list: BenchNotice[], priority: string) => {
    for (let i = 0; i < list.length; i += 100) {
      const chunk = withDeadline(list.slice(i, i + 100), priority);
      const { triggers: at } = await postBurst(stack.apiUrl, chunk, 1);
      for (const n of chunk) triggers.set(n.noticeId, at[n.index] as number);
    }
  };
  await Promise.all([post(deadlineNotices, 'standard'), post(control, 'critical')]);

  // Every deadline notice ends by its deadline plus one reconciler run (failed deadline_exceeded) or sooner.
  const ids = [...deadlineNotices, ...control].map((n) => n.noticeId);
  const settleBy = Date.now() + (options.deadlineSeconds + 2 * options.reconcileIntervalSeconds + 10) * 1000;
  let rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'sms');
  while (Date.now() < settleBy) {
    const open = ids.filter((id) =>
      ['reserved', 'sending', 'retry_scheduled', 'unknown'].includes(rows.get(id)?.state ?? ''),
    );
    if (open.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    rows = await readLedgerRows(options.ddb, stack.tableName, ids, 'sms');
  }

  const judge = (list: BenchNotice[]) =>
    list.map((n) => {
      const row = rows.get(n.noticeId);
      const accepted = acceptedAt(row);
      const madeIt = accepted !== undefined && row?.deadline !== undefined && accepted <= row.deadline;
      const risk = riskRecord(row);
      return {
        madeIt,
        warned: risk !== undefined,
        published: risk !== undefined && row?.escalationPending !== true,
        delay: risk ? (risk.at - (triggers.get(n.noticeId) as number)) / 1000 : Number.NaN,
      };
    });
  const main = judge(deadlineNotices);
  const ctl = judge(control);
  const delays = main
    .filter((m) => m.warned)
    .map((m) => m.delay)
    .sort((a, b) => a - b);
  return {
    backlog: options.backlog,
    notices: options.notices,
    controlCritical: options.controlCritical,
    deadlineSeconds: options.deadlineSeconds,
    providerRatePerSecond: rate,
    reconcileIntervalSeconds: options.reconcileIntervalSeconds,
    missed: main.filter((m) => !m.madeIt).length,
    madeIt: main.filter((m) => m.madeIt).length,
    warned: main.filter((m) => m.warned).length,
    warnedPublished: main.filter((m) => m.published).length,
    missedUnwarned: main.filter((m) => !m.madeIt && !m.warned).length,
    warnedButMadeIt: [...main, ...ctl].filter((m) => m.madeIt && m.warned).length,
    maxWarningDelaySeconds: round(delays.at(-1) ?? Number.NaN),
    p50WarningDelaySeconds: round(delays[Math.floor(delays.length / 2)] ?? Number.NaN),
    controlMadeIt: ctl.filter((m) => m.madeIt).length,
    controlWarned: ctl.filter((m) => m.warned).length,
  };
}
