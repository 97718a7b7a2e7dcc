/**
 * How many bulk records may be in flight at once: derived from the channel's rate, and used by
 * the CDK stack (the bulk lanes' event sources) and the local stack (their pollers) alike
 * (docs/architecture.md §11, "Bulk cannot book far ahead").
 *
 * Why: every record in flight books its token before it waits for it, so the records in flight
 * in a lane hold (in flight ÷ R) seconds of the channel's budget. A critical reference may go
 * ahead of those only by its lead (`RATE_BUDGET_LEAD_MS`); anything booked beyond that it waits
 * for. An event source running many more bulk records than the rate needs would therefore
 * queue critical behind bulk again — up to the sender's inline wait. Capping the bulk lane's
 * records in flight at R × this horizon keeps bulk's bookings within the horizon, whatever
 * maximum concurrency the deployment gives the channel, while bulk still holds enough tokens to
 * keep the provider busy (a send takes well under the horizon).
 */
export const BULK_BOOKING_HORIZON_MS = 1_500;

/** Lambda's smallest maximum concurrency of an SQS event source. */
export const MIN_EVENT_SOURCE_CONCURRENCY = 2;

export interface EventSourceShape {
  readonly batchSize: number;
  readonly maxConcurrency: number;
}

/**
 * The bulk lane's event source: the channel's own, narrowed so that batch size × concurrency
 * stays within R × BULK_BOOKING_HORIZON_MS (never below one record per batch and Lambda's
 * minimum concurrency, never above what the channel is given). Without a known rate there is no
 * budget to book ahead of, and the channel's event source is used as it is.
 */
export function bulkLaneEventSource<T extends EventSourceShape>(
  source: T,
  ratePerSecond: number | undefined,
): T {
  if (!ratePerSecond || ratePerSecond <= 0) return source;
  const records = Math.max(1, Math.floor((ratePerSecond * BULK_BOOKING_HORIZON_MS) / 1000));
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
