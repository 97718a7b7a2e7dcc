/**
 * How many records of a lane may be in flight at once: derived from the channel's rate, and
 * used by the CDK stack (the lanes' event sources) and the local stack (their pollers) alike
 * (docs/architecture.md §11, "Lower lanes cannot book far ahead").
 *
 * Why: every record in flight books its token before it waits for it, so a lane's records in
 * flight hold (in flight ÷ R) seconds of the channel's budget. A critical reference may go ahead
 * of those only by its lead (`RATE_BUDGET_LEAD_MS`, 500 ms by default); anything booked beyond
 * that it waits for. An event source running many more standard or bulk records than the rate
 * needs (a channel given a maximum concurrency of 50 at 25/s: 250 records, 10 s) would therefore
 * queue critical behind them again, up to the sender's inline wait. Capping each lower lane's
 * records in flight at R × its horizon keeps its bookings within that horizon whatever maximum
 * concurrency the deployment gives the channel; together at most 1.6 s, so critical waits at most
 * 1.6 s − its lead behind both (measured: with both 1.2 s and 0.8 s, the 2 s behind both gave a
 * critical p99 of 2.07 s; docs/benchmarks.md). Each horizon is still several provider calls long,
 * so a lane that has the channel to itself keeps the provider busy.
 */
export const LANE_BOOKING_HORIZON_MS = {
  /** Critical is not capped: it goes ahead of the others, and its volume is its own. */
  critical: undefined,
  standard: 800,
  bulk: 800,
} as const satisfies Record<'critical' | 'standard' | 'bulk', number | undefined>;

export type LaneName = keyof typeof LANE_BOOKING_HORIZON_MS;

/** Lambda's smallest maximum concurrency of an SQS event source. */
export const MIN_EVENT_SOURCE_CONCURRENCY = 2;

export interface EventSourceShape {
  readonly batchSize: number;
  readonly maxConcurrency: number;
}

/**
 * A lane's event source: the channel's own, narrowed so that batch size × concurrency stays
 * within R × the lane's horizon (never below one record per batch and Lambda's minimum
 * concurrency, never above what the channel is given). Without a known rate there is no budget
 * to book ahead of, and the channel's event source is used as it is; so is critical's.
 */
export function laneEventSource<T extends EventSourceShape>(
  lane: LaneName,
  source: T,
  ratePerSecond: number | undefined,
): T {
  const horizonMs = LANE_BOOKING_HORIZON_MS[lane];
  if (horizonMs === undefined || !ratePerSecond || ratePerSecond <= 0) return source;
  const records = Math.max(1, Math.floor((ratePerSecond * horizonMs) / 1000));
  const batchSize = Math.min(
    source.batchSize,
    Math.max(1, Math.floor(records / MIN_EVENT_SOURCE_CONCURRENCY)),
  );
  const maxConcurrency = Math.min(
    source.maxConcurrency,
    Math.max(MIN_EVENT_SOURCE_CONCURRENCY, Math.floor(records / batchSize)),
  );
  return { ...source, batchSize, maxConcurrency };
}
