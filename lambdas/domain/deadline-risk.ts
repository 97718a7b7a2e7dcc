import type { Intent } from './intent.ts';
import type { Priority } from './priority.ts';
import { isUnresolved, Reason } from './state-machine.ts';
import type { TransitionPlan } from './transition.ts';
import { nextRecord, planSameState } from './transition.ts';

/**
 * When will a channel be sent, from what the dispatcher knows (docs/architecture.md §11,
 * "Deadline risk"), and is its deadline at risk. Pure: the caller reads the backlog.
 */
export interface Backlog {
  /** The channel's provider rate (sends/s). */
  readonly ratePerSecond: number;
  /**
   * Per lane, the references a new one of that priority would wait behind (queued, in flight and
   * delayed, in its own lane's queue and the higher lanes'; a queue lanes share counted once).
   */
  readonly ahead: Readonly<Partial<Record<Priority, number>>>;
  /** The shared budget's clock (ms): tokens are booked up to here. Absent: nothing booked ahead. */
  readonly clockMs?: number | undefined;
}

export interface EstimateOptions {
  /** How far ahead of the budget's clock this lane takes its tokens (ms). */
  readonly leadMs: number;
  /** From a token's time to the provider's acceptance: claim, call, record (ms). */
  readonly pipelineMs: number;
  /** References known to be ahead beyond `waiting` (e.g. earlier items of the same batch). */
  readonly aheadExtra?: number;
}

/**
 * now + what is booked ahead beyond this lane's lead + the references ahead of it (its lane and
 * every higher one) at the rate + the pipeline. FIFO within a lane, strict order across lanes.
 */
export function estimateSendAt(
  backlog: Backlog,
  lane: Priority,
  now: number,
  options: EstimateOptions,
): number {
  const ahead = Math.max(0, backlog.ahead[lane] ?? 0) + Math.max(0, options.aheadExtra ?? 0);
  const booked = Math.max(0, (backlog.clockMs ?? now) - now - options.leadMs);
  return Math.round(now + booked + (ahead / backlog.ratePerSecond) * 1000 + options.pipelineMs);
}

/** A deadline is at risk when the estimate passes it: the send would come too late. */
export function isDeadlineAtRisk(estimatedSendAt: number, deadline: number): boolean {
  return estimatedSendAt > deadline;
}

/** A guess of the rest of the way once a token is due: claim, provider call, outcome write. */
export const DEFAULT_PIPELINE_MS = 250;

/** Whether the row already carries its deadline-risk warning (it is given once). */
export function isMarkedAtRisk(intent: Pick<Intent, 'transitions'>): boolean {
  return intent.transitions.some((t) => t.reason === Reason.deadlineAtRisk);
}

/**
 * Warns early that an open row will likely miss its deadline (docs/architecture.md §11): one
 * record `state → state`, reason `deadline_at_risk`, the estimate in `detail`, written with the
 * durable `escalationPending` marker (due now in the open index: the reconciler publishes the
 * escalation and clears the marker). The row keeps its state and keeps trying; the marker
 * survives its later moves while it stays unresolved (planTransition), so a claim cannot drop
 * an escalation not yet published. At most once per row.
 */
export function planDeadlineRisk(
  intent: Intent,
  change: { readonly at: number; readonly estimatedSendAt: number },
): TransitionPlan | undefined {
  if (!isUnresolved(intent.state) || isMarkedAtRisk(intent) || intent.escalationPending) return undefined;
  const record = nextRecord(intent, intent.state, {
    at: change.at,
    reason: Reason.deadlineAtRisk,
    detail: `estimatedSendAt ${new Date(change.estimatedSendAt).toISOString()}`,
  });
  return planSameState(intent, record, {
    escalationPending: true,
    dueAt: Math.min(record.at, intent.deadline),
  });
}
