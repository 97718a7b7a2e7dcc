import type { Caller } from '../domain/caller.ts';
import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import {
  type CancelDecision,
  isCancelled,
  planCancel,
  planResolution,
  type ResolutionOutcome,
} from '../domain/operator-actions.ts';
import type { IntentState } from '../domain/state-machine.ts';
import { laneRef } from '../ports/intent-queue.port.ts';
import type { OperatorDependencies } from './dependencies.ts';
import { readNotice } from './read-notice.ts';

/**
 * What people do to rows through the API (docs/operators.md): settle an `unknown` channel on an
 * operator's word, and call a notice off. Both are planned by the pure functions of
 * domain/operator-actions.ts and written like every other move: one conditional write on the
 * state and version read. A write that finds the row moved (a worker, the reconciler or another
 * person got there first) re-reads and plans again from what is there now.
 */
/** Re-plans after this many stale writes in a row on one channel are given up (a 409). */
const MAX_RACES = 5;

export interface Resolution {
  readonly outcome: ResolutionOutcome;
  readonly reason: string;
  readonly evidence?: string | undefined;
  readonly actor: string;
}

export type ResolutionResult =
  | { readonly kind: 'resolved'; readonly row: Intent; readonly enqueued: boolean }
  | { readonly kind: 'not_found' }
  /** Only `unknown` channels are resolved by people: unchanged. */
  | { readonly kind: 'not_unknown'; readonly state: IntentState }
  /** The channel resolved and its row left the table (past the hot window): final, unchanged. */
  | { readonly kind: 'archived'; readonly state: IntentState }
  | { readonly kind: 'contended' };

/**
 * `accepted` → `accepted`; `not_sent` → `retry_scheduled` due now (or `failed` when the attempts
 * or the deadline are spent), and the resend is enqueued at once. A lost enqueue costs a delay,
 * not the send: the row is due in the open index, and the reconciler re-enqueues it.
 */
export async function resolveChannel(
  noticeId: string,
  channel: Channel,
  resolution: Resolution,
  deps: OperatorDependencies,
): Promise<ResolutionResult> {
  let row = await deps.store.get(noticeId, channel);
  if (!row) {
    const record = (await deps.keyRecords.keyRecordsOf(noticeId)).find((r) => r.channel === channel);
    return record ? { kind: 'archived', state: record.state } : { kind: 'not_found' };
  }
  for (let race = 0; race < MAX_RACES; race++) {
    if (!row) return { kind: 'not_found' };
    const decision = planResolution(
      row,
      { ...resolution, now: deps.clock.now() },
      { timing: deps.timing, policy: deps.retryPolicy, random: deps.random },
    );
    if (decision.kind === 'not_unknown') return { kind: 'not_unknown', state: decision.state };
    const result = await deps.store.apply(decision.plan);
    if (result.kind === 'stale') {
      row = result.current ?? (await deps.store.get(noticeId, channel));
      continue;
    }
    let enqueued = false;
    if (result.intent.state === 'retry_scheduled') {
      enqueued = await deps.queue.enqueue([laneRef(result.intent)]).then(
        () => true,
        () => false,
      );
    }
    return { kind: 'resolved', row: result.intent, enqueued };
  }
  return { kind: 'contended' };
}

export interface CancelledChannel {
  readonly channel: Channel;
  readonly state: IntentState;
  /** The channel is called off (now, or by an earlier cancel). */
  readonly cancelled: boolean;
  /**
   * What was decided; `contended` when the row kept moving under several tries (nothing written);
   * `archived` for a channel whose row left the table, resolved (past the hot window): final.
   */
  readonly decision: CancelDecision['kind'] | 'contended' | 'archived';
}

export type CancelResult =
  | { readonly kind: 'cancelled'; readonly channels: readonly CancelledChannel[] }
  /** Every channel the caller may see left the table resolved: nothing could be cancelled. */
  | { readonly kind: 'archived'; readonly channels: readonly CancelledChannel[] }
  | { readonly kind: 'not_found' };

/**
 * Per channel, separately: `reserved` / `retry_scheduled` → `failed` (`cancelled`); `sending` /
 * `unknown` are with the provider and cannot be called back (`cancelled: false`, unchanged);
 * anything settled is left. Idempotent: a second cancel answers the same, writing nothing. A
 * worker's claim and a cancel race on the row's version: whichever writes first wins, the other
 * sees the row moved (the worker leaves it; the cancel re-plans and answers `cancelled: false`).
 * A caller cancels the channels it may see (a submitter: those its principal submitted); a notice
 * with none of them is `not_found`, as one that does not exist. Its channels are found as the
 * timeline finds them (./read-notice.ts): a channel read from the archive left the table resolved
 * and is final (`archived`: cancelled only if an earlier cancel ended it); a notice whose every
 * channel is archived is `archived` as a whole.
 */
export async function cancelNotice(
  noticeId: string,
  request: { readonly reason: string; readonly actor: string },
  caller: Caller,
  deps: OperatorDependencies,
): Promise<CancelResult> {
  const read = await readNotice(noticeId, caller, deps);
  if (!read) return { kind: 'not_found' };
  const channels: CancelledChannel[] = [];
  for (const channel of read) {
    if (channel.source === 'archive') {
      const { row } = channel;
      const cancelled = isCancelled(planCancel(row, { ...request, now: deps.clock.now() }, deps.timing));
      channels.push({ channel: row.channel, state: row.state, cancelled, decision: 'archived' });
    } else {
      channels.push(await cancelChannel(channel.row, request, deps));
    }
  }
  const archived = channels.every((c) => c.decision === 'archived');
  return { kind: archived ? 'archived' : 'cancelled', channels };
}

/** One channel in the table: planned, written conditionally, re-planned when the row moved. */
async function cancelChannel(
  first: Intent,
  request: { readonly reason: string; readonly actor: string },
  deps: OperatorDependencies,
): Promise<CancelledChannel> {
  let row: Intent | undefined = first;
  let answer: CancelledChannel | undefined;
  for (let race = 0; row && !answer && race < MAX_RACES; race++) {
    const decision = planCancel(row, { ...request, now: deps.clock.now() }, deps.timing);
    if (decision.kind !== 'cancel') {
      answer = {
        channel: row.channel,
        state: row.state,
        cancelled: isCancelled(decision),
        decision: decision.kind,
      };
      break;
    }
    const result = await deps.store.apply(decision.plan);
    if (result.kind === 'applied') {
      answer = { channel: row.channel, state: result.intent.state, cancelled: true, decision: 'cancel' };
    } else {
      row = result.current ?? (await deps.store.get(first.noticeId, first.channel));
    }
  }
  // Still moving after several tries (or gone): report what is there now, not cancelled.
  return (
    answer ?? {
      channel: first.channel,
      state: (await deps.store.get(first.noticeId, first.channel))?.state ?? first.state,
      cancelled: false,
      decision: 'contended',
    }
  );
}
