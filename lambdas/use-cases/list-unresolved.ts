import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import { type IntentState, isUnresolved } from '../domain/state-machine.ts';
import type { NoticeReader } from '../ports/intent-ledger.port.ts';
import type { OpenIndex, OpenIntentRef } from '../ports/open-index.port.ts';

/**
 * `GET /v1/notices`: the unresolved channels, oldest first, read from the open-intent index
 * alone (docs/operators.md "Finding what is stuck"). The index is sorted by due time, not by age, so every page
 * walks the whole index (it holds open rows only: cost follows open rows, never the table) and
 * keeps the `limit` oldest past the position the caller reached; memory stays bounded by `limit`.
 * Rows in the index that are not unresolved (a failed row waiting for its escalation, and any
 * other state later code keeps there) are not listed.
 */

/** Where a page ended: the order key of its last item (createdAt, then noticeId, then channel). */
export interface ListPosition {
  readonly createdAt: number;
  readonly noticeId: string;
  readonly channel: Channel;
}

export interface UnresolvedQuery {
  readonly state?: IntentState | undefined;
  readonly channel?: Channel | undefined;
  /** Only rows created at or before this instant (epoch ms). */
  readonly createdAtOrBefore?: number | undefined;
  /** Only rows after this position (the previous page's last). */
  readonly after?: ListPosition | undefined;
  readonly limit: number;
}

export interface UnresolvedPage {
  readonly items: readonly OpenIntentRef[];
  /** The last item's position when more rows follow; absent on the last page. */
  readonly next?: ListPosition | undefined;
}

/** The tie-break of every operator list's order: by notice id, then channel. */
export function compareRowIds(
  a: { readonly noticeId: string; readonly channel: Channel },
  b: { readonly noticeId: string; readonly channel: Channel },
): number {
  return (
    (a.noticeId < b.noticeId ? -1 : a.noticeId > b.noticeId ? 1 : 0) ||
    (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0)
  );
}

/** Negative when `a` sorts first. */
export function comparePositions(a: ListPosition, b: ListPosition): number {
  return a.createdAt - b.createdAt || compareRowIds(a, b);
}

function matches(ref: OpenIntentRef, query: UnresolvedQuery): boolean {
  if (!isUnresolved(ref.state)) return false;
  if (query.state !== undefined && ref.state !== query.state) return false;
  if (query.channel !== undefined && ref.channel !== query.channel) return false;
  if (query.createdAtOrBefore !== undefined && ref.createdAt > query.createdAtOrBefore) return false;
  return query.after === undefined || comparePositions(ref, query.after) > 0;
}

/** The index pages are read this large: fewer requests, each rounded up to 4 KB of reads. */
const INDEX_PAGE = 1000;

export async function listUnresolved(
  query: UnresolvedQuery,
  deps: { readonly store: Pick<OpenIndex, 'listOpen'> },
): Promise<UnresolvedPage> {
  // The `limit + 1` oldest so far, sorted: one more than a page tells whether more follow.
  const keep = query.limit + 1;
  const oldest: OpenIntentRef[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.store.listOpen({ limit: INDEX_PAGE, ...(cursor ? { cursor } : {}) });
    for (const ref of page.items) {
      if (!matches(ref, query)) continue;
      const last = oldest[oldest.length - 1];
      if (oldest.length >= keep && last && comparePositions(ref, last) >= 0) continue;
      let at = oldest.findIndex((kept) => comparePositions(ref, kept) < 0);
      if (at === -1) at = oldest.length;
      oldest.splice(at, 0, ref);
      if (oldest.length > keep) oldest.pop();
    }
    cursor = page.cursor;
  } while (cursor);
  const items = oldest.slice(0, query.limit);
  const last = items[items.length - 1];
  return oldest.length > query.limit && last
    ? { items, next: { createdAt: last.createdAt, noticeId: last.noticeId, channel: last.channel } }
    : { items };
}

/** A listed row's key: `noticeId|channel`. */
export const listedKey = (ref: { readonly noticeId: string; readonly channel: Channel }) =>
  `${ref.noticeId}|${ref.channel}`;

/**
 * The rows of a page, by `listedKey`, for what the list shows beside each (its last reason and
 * what happens next): read after the index walk, one eventually consistent read per listed row
 * (0.5 RCU up to 4 KB; docs/table-design.md "Requests per operation"). A row gone meanwhile is
 * simply absent.
 */
export async function readListed(
  items: readonly { readonly noticeId: string; readonly channel: Channel }[],
  deps: { readonly store: Pick<NoticeReader, 'getRows'> },
): Promise<ReadonlyMap<string, Intent>> {
  if (items.length === 0) return new Map();
  const rows = await deps.store.getRows(items.map(({ noticeId, channel }) => ({ noticeId, channel })));
  return new Map(rows.map((row) => [listedKey(row), row]));
}
