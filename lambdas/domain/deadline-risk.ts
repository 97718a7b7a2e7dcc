import { lanesAhead, type Priority } from './priority.ts';

/**
 * When will a channel be sent, from what the dispatcher knows (docs/architecture.md §11,
 * "Deadline risk"), and is its deadline at risk. Pure: the caller reads the backlog.
 */
export interface Backlog {
  /** The channel's provider rate (sends/s). */
  readonly ratePerSecond: number;
  /** References waiting per lane (queued, in flight and delayed), approximate. */
  readonly waiting: Readonly<Partial<Record<Priority, number>>>;
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
  const ahead =
    lanesAhead(lane).reduce((sum, l) => sum + Math.max(0, backlog.waiting[l] ?? 0), 0) +
    Math.max(0, options.aheadExtra ?? 0);
  const booked = Math.max(0, (backlog.clockMs ?? now) - now - options.leadMs);
  return Math.round(now + booked + (ahead / backlog.ratePerSecond) * 1000 + options.pipelineMs);
}

/** A deadline is at risk when the estimate passes it: the send would come too late. */
export function isDeadlineAtRisk(estimatedSendAt: number, deadline: number): boolean {
  return estimatedSendAt > deadline;
}
