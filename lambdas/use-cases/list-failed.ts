import { LedgerTable } from '../contract/ledger-table.ts';
import type { Channel } from '../domain/channel.ts';
import type { FailedRef, RecentFailures } from '../ports/recent-failures.port.ts';
import { compareRowIds } from './list-unresolved.ts';

/**
 * `GET /v1/notices?state=failed`: the channels that failed in the last day, newest first, from
 * the recent-failures list (docs/table-design.md "Recent failures"), at most the newest
 * `LedgerTable.recentFailures.max`. A failed row leaves the open index, so without this the
 * operators' list would lose a notice the moment it failed. Every page reads the window's list
 * (bounded by `max`) and keeps the `limit` newest past the position the caller reached.
 */

/** Where a page of failures ended: its last item (failedAt, then noticeId, then channel). */
export interface FailedPosition {
  readonly failedAt: number;
  readonly noticeId: string;
  readonly channel: Channel;
}

export interface FailedQuery {
  readonly channel?: Channel | undefined;
  /** Only rows created at or before this instant (epoch ms). */
  readonly createdAtOrBefore?: number | undefined;
  /** The window: failures from `since` to `until` (fixed by the first page, so paging does not drift). */
  readonly since: number;
  readonly until: number;
  readonly after?: FailedPosition | undefined;
  readonly limit: number;
}

export interface FailedPage {
  readonly items: readonly FailedRef[];
  readonly next?: FailedPosition | undefined;
}

/** Negative when `a` is listed first: newest first, then by id. */
export function compareFailed(a: FailedPosition, b: FailedPosition): number {
  return b.failedAt - a.failedAt || compareRowIds(a, b);
}

export async function listRecentFailures(
  query: FailedQuery,
  deps: { readonly store: Pick<RecentFailures, 'listFailed'> },
): Promise<FailedPage> {
  const failed = await deps.store.listFailed(query.since, query.until, LedgerTable.recentFailures.max);
  const matching = failed
    .filter(
      (ref) =>
        (query.channel === undefined || ref.channel === query.channel) &&
        (query.createdAtOrBefore === undefined || ref.createdAt <= query.createdAtOrBefore) &&
        (query.after === undefined || compareFailed(query.after, ref) < 0),
    )
    .sort(compareFailed);
  const items = matching.slice(0, query.limit);
  const last = items.at(-1);
  return matching.length > query.limit && last
    ? { items, next: { failedAt: last.failedAt, noticeId: last.noticeId, channel: last.channel } }
    : { items };
}
