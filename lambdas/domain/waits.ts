import type { Intent, LedgerTiming, TransitionRecord } from './intent.ts';
import { backoffDelayMs, type RandomSource, type RetryPolicy } from './retry-policy.ts';
import { Reason } from './state-machine.ts';
import {
  isWaitRecord,
  nextRecord,
  planSameState,
  planTransition,
  type TransitionPlan,
} from './transition.ts';

/*
 * No row waits in silence (docs/architecture.md §4 "No silent waits"). A row that is not moving
 * although nothing is wrong with it yet — its channel is held, or a check the provider must answer
 * before the send cannot be answered — says so on its timeline: one record `state → state` per
 * distinct cause (not one per deferral), written with the row's new due time. The record's detail
 * is the wait, written and read here only (`waitDetail`, `waitOf`).
 */

/** What a row waits on without an attempt. */
export type Wait =
  /** The channel's gate is closed: a provider's "slow down", or a hold until a person acts. */
  | {
      readonly kind: 'channel_held';
      readonly provider: string;
      /** The gate's reason: `provider_throttled`, or the provider's code of an operator hold. */
      readonly reason: string;
      readonly until: number;
    }
  /** A check the provider must answer before the send (its suppression list) was not answered. */
  | {
      readonly kind: 'provider_check_unavailable';
      readonly provider: string;
      /** Which check: `suppression_list`. */
      readonly check: string;
      /** Why it was not answered: the provider module's code (`infrai_http_500`, `check_failed` …). */
      readonly code: string;
    };

/**
 * A row takes at most this many wait records in all: a row waiting on many holds in turn stays
 * small (every write pays per started KB; a wait record is about 120 bytes). Waits past the bound
 * are still counted (`Deferred_<cause>`, lambdas/contract/metrics.ts).
 */
export const MAX_WAIT_RECORDS_PER_ROW = 3;

/** The row's records since its last move (`from !== to`): what it has waited on in its state. */
export function currentStretch(row: Pick<Intent, 'transitions'>): readonly TransitionRecord[] {
  const lastMove = row.transitions.findLastIndex((t) => t.from !== t.to);
  return row.transitions.slice(lastMove + 1);
}

/** When the row entered its current state: its last move. */
function stretchStart(row: Pick<Intent, 'transitions' | 'createdAt'>): number {
  return row.transitions.findLast((t) => t.from !== t.to)?.at ?? row.createdAt;
}

/** Codes and ids only (no address can pass): what a provider module or the gate calls a cause. */
const token = (text: string) => text.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 64) || 'unknown';
const TOKEN = '[A-Za-z0-9_.:-]+';
const HELD = new RegExp(`^(${TOKEN}) held the channel: (${TOKEN}) until (\\S+)$`);
const CHECK = new RegExp(`^(${TOKEN}) (${TOKEN}) not answered: (${TOKEN})$`);

/** The record's detail: `<provider> held the channel: provider_throttled until 2026-…Z`. */
export function waitDetail(wait: Wait): string {
  return wait.kind === 'channel_held'
    ? `${token(wait.provider)} held the channel: ${token(wait.reason)} until ${new Date(wait.until).toISOString()}`
    : `${token(wait.provider)} ${token(wait.check)} not answered: ${token(wait.code)}`;
}

/** The wait a record names, or undefined for any other record. */
export function waitOf(
  record: Pick<TransitionRecord, 'from' | 'to' | 'reason' | 'detail'>,
): Wait | undefined {
  if (!isWaitRecord(record) || record.detail === undefined) return undefined;
  if (record.reason === Reason.channelHeld) {
    const m = HELD.exec(record.detail);
    const until = m ? Date.parse(m[3] as string) : Number.NaN;
    return m && !Number.isNaN(until)
      ? { kind: 'channel_held', provider: m[1] as string, reason: m[2] as string, until }
      : undefined;
  }
  const m = CHECK.exec(record.detail);
  return m
    ? {
        kind: 'provider_check_unavailable',
        provider: m[1] as string,
        check: m[2] as string,
        code: m[3] as string,
      }
    : undefined;
}

/** The last wait the row recorded in its current state, if any. */
export function currentWait(
  row: Pick<Intent, 'transitions'>,
): { record: TransitionRecord; wait: Wait } | undefined {
  for (const record of [...currentStretch(row)].reverse()) {
    const wait = waitOf(record);
    if (wait) return { record, wait };
  }
  return undefined;
}

/**
 * The due time of a row that waits until `wakeAt` (its queue message comes back then): a lease
 * later, so the reconciler re-enqueues it only if that message is lost; never past the deadline.
 */
export function waitDueAt(
  row: Pick<Intent, 'deadline' | 'nextAttemptAt'>,
  wakeAt: number,
  timing: LedgerTiming,
): number {
  return Math.min(Math.max(wakeAt, row.nextAttemptAt ?? 0) + timing.leaseMs, row.deadline);
}

/**
 * Records a wait on a claimable row (`reserved` / `retry_scheduled`): one record `state → state`
 * (reason `channel_held` or `provider_check_unavailable`, the wait in `detail`) and the row due a
 * lease after `wakeAt`, in one conditional write. Undefined when there is nothing to record: the
 * same wait is already on record since the row's last move (a hold is recorded once, however many
 * times it defers the row; a check's cause once, however many times it is asked), the row has
 * its `MAX_WAIT_RECORDS_PER_ROW`, or it is not waiting to be sent. A pending escalation keeps its
 * due time (due now, to be published).
 */
export function planWait(
  row: Intent,
  wait: Wait,
  change: { readonly at: number; readonly wakeAt: number },
  timing: LedgerTiming,
): TransitionPlan | undefined {
  if (row.state !== 'reserved' && row.state !== 'retry_scheduled') return undefined;
  const reason = wait.kind === 'channel_held' ? Reason.channelHeld : Reason.providerCheckUnavailable;
  const detail = waitDetail(wait);
  if (currentStretch(row).some((t) => t.reason === reason && t.detail === detail)) return undefined;
  if (row.transitions.filter(isWaitRecord).length >= MAX_WAIT_RECORDS_PER_ROW) return undefined;
  const record = nextRecord(row, row.state, { at: change.at, reason, detail });
  return planSameState(
    row,
    record,
    row.escalationPending ? {} : { dueAt: waitDueAt(row, change.wakeAt, timing) },
  );
}

/**
 * When to ask an unanswered pre-send check again: the retry policy's backoff (capped exponential,
 * full jitter, at least its base) over how long the row has waited on the check — since its first
 * `provider_check_unavailable` record in its state, else since it entered the state — so the
 * questions thin out as the wait grows (about one per doubling of the wait, at most the cap apart)
 * without a counter on the row. Never past the deadline: the row is failed there.
 */
export function checkRetryAt(row: Intent, now: number, policy: RetryPolicy, random: RandomSource): number {
  const first = currentStretch(row).find((t) => t.reason === Reason.providerCheckUnavailable);
  const waited = Math.max(0, now - (first?.at ?? stretchStart(row)));
  // The first backoff ceiling (base · 2^(n−1)) above what has been waited: with the jitter's
  // middle, each wait about doubles the last, as the retries of an attempt do.
  const n = waited < policy.baseMs ? 1 : 2 + Math.floor(Math.log2(waited / policy.baseMs));
  const delay = Math.max(policy.baseMs, backoffDelayMs(n, policy, random));
  return Math.min(now + delay, row.deadline);
}

/**
 * Why a row reached its deadline, for the `deadline_exceeded` record: the wait it last recorded in
 * its state (the hold or the check), else that no attempt was made, else its last move.
 */
export function deadlineDetail(row: Intent): string {
  const attempts = row.attempts === 0 ? 'no attempt made' : `after ${row.attempts} attempt(s)`;
  const waited = currentWait(row);
  if (waited) return `${attempts}; waited on ${waited.record.reason}: ${waited.record.detail}`;
  if (row.attempts === 0) return `${attempts} before the deadline`;
  const lastMove = row.transitions.findLast((t) => t.from !== t.to);
  return `${attempts}; last ${lastMove?.reason ?? row.state}`;
}

/** A claimable row past its deadline: `failed`, `deadline_exceeded` (escalated), saying why. */
export function planDeadlineExceeded(row: Intent, at: number, timing: LedgerTiming): TransitionPlan {
  return planTransition(
    row,
    { to: 'failed', reason: Reason.deadlineExceeded, at, detail: deadlineDetail(row) },
    timing,
  );
}
