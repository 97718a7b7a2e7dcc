/**
 * How many records of a lane may be in flight at once: derived from the channel's rate, and
 * used by the CDK stack (the lanes' event sources) and the local stack (their pollers) alike
 * (docs/architecture.md §11, "Lower lanes cannot book far ahead").
 *
 * Why: every provider call in flight books its token before it waits for it, so a lane's calls
 * in flight hold (in flight ÷ R) seconds of the channel's budget (one record is one call unless
 * the provider takes many per call). A critical reference may go ahead
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
 * A lane's event source: the channel's own, narrowed so that the provider calls its records in
 * flight make stay within R × the lane's horizon (never below one call per invocation and
 * Lambda's minimum concurrency, never above what the channel is given). Without a known rate
 * there is no budget to book ahead of, and the channel's event source is used as it is; so is
 * critical's.
 *
 * The budget counts provider CALLS (a provider limits requests, not messages), and a call
 * carries up to `recordsPerCall` records where the provider has a batch call (`EMAIL_BATCH_MAX`):
 * an invocation keeps at least one full call's worth of records, so that batches stay batches
 * when the rate is low (at 1 call/s and 5 e-mails per call, a cap counted in records would give
 * one record per invocation, and the batch lever would vanish exactly when it is needed). And it
 * holds whole calls: 10 records at 3 per call would be calls of 3, 3, 3 and 1, the last one a
 * token for one e-mail (a quarter of the lane's budget spent on a fortieth of its e-mails;
 * measured in docs/benchmarks.md, "Priority through a batching provider"), so 9.
 */
export function laneEventSource<T extends EventSourceShape>(
  lane: LaneName,
  source: T,
  ratePerSecond: number | undefined,
  recordsPerCall = 1,
): T {
  const horizonMs = LANE_BOOKING_HORIZON_MS[lane];
  if (horizonMs === undefined || !ratePerSecond || ratePerSecond <= 0) return source;
  const perCall = Math.max(1, Math.floor(recordsPerCall));
  const calls = Math.max(1, Math.floor((ratePerSecond * horizonMs) / 1000));
  const callsPerInvocation = Math.max(1, Math.floor(calls / MIN_EVENT_SOURCE_CONCURRENCY));
  const records = Math.min(source.batchSize, callsPerInvocation * perCall);
  const batchSize = records >= perCall ? records - (records % perCall) : records;
  const maxConcurrency = Math.min(
    source.maxConcurrency,
    Math.max(MIN_EVENT_SOURCE_CONCURRENCY, Math.floor(calls / Math.ceil(batchSize / perCall))),
  );
  return { ...source, batchSize, maxConcurrency };
}
