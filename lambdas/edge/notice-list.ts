import { LedgerTable } from '../contract/ledger-table.ts';
import { CHANNELS, type Channel } from '../domain/channel.ts';
import { isNoticeId } from '../domain/identity.ts';
import type { Intent } from '../domain/intent.ts';
import { escalates, type Reason } from '../domain/state-machine.ts';
import type { OpenIntentRef } from '../ports/open-index.port.ts';
import type { FailedRef } from '../ports/recent-failures.port.ts';
import type { FailedPage, FailedPosition, FailedQuery } from '../use-cases/list-failed.ts';
import {
  type ListPosition,
  listedKey,
  type UnresolvedPage,
  type UnresolvedQuery,
} from '../use-cases/list-unresolved.ts';
import type { NoticeList } from './api-responses.ts';
import {
  LISTABLE_STATES,
  type ListableState,
  type ListNoticesFilter,
  type Parsed,
} from './operator-requests.ts';
import { lastReasonView, nextStepView, type RowViewContext } from './timeline.ts';

/**
 * The opaque `cursor` of `GET /v1/notices`: base64url of a small JSON object holding the filters
 * the first page was asked with, the age cutoff that page fixed (`olderThan` counted from the
 * first request, so paging does not drift), for `state=failed` the end of the window that page
 * fixed, and where the last page ended. A cursor reused with other filters, or one that is not
 * ours, is a 400 naming `cursor`. It says nothing a caller allowed to list could not see anyway;
 * tampering only moves the position.
 */
interface CursorBody {
  readonly v: 1;
  readonly s?: ListableState;
  readonly ch?: Channel;
  readonly o?: number;
  /** createdAt cutoff, epoch ms. */
  readonly c?: number;
  /** state=failed: the end of the window, epoch ms (the window is the day before it). */
  readonly u?: number;
  /**
   * Position after which the next page starts: [createdAt, noticeId, channel] (unresolved,
   * oldest first), or [failedAt, noticeId, channel] (failed, newest first).
   */
  readonly k: readonly [number, string, Channel];
}

/** What the store is asked for: the unresolved channels (the open index), or the recent failures. */
export type ListRequest =
  | ({ readonly kind: 'unresolved' } & UnresolvedQuery & { readonly state?: ListableState | undefined })
  | ({ readonly kind: 'failed' } & FailedQuery);

const badCursor = (message: string): Parsed<never> => ({
  ok: false,
  errors: [{ path: 'cursor', code: 'invalid_cursor', message }],
});

function decodeCursor(text: string): CursorBody | undefined {
  try {
    const body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<CursorBody>;
    const [at, noticeId, channel] = (body.k ?? []) as unknown[];
    const valid =
      body.v === 1 &&
      typeof at === 'number' &&
      Number.isSafeInteger(at) &&
      typeof noticeId === 'string' &&
      isNoticeId(noticeId) &&
      CHANNELS.includes(channel as Channel) &&
      (body.c === undefined || Number.isSafeInteger(body.c)) &&
      (body.o === undefined || Number.isSafeInteger(body.o)) &&
      (body.u === undefined || Number.isSafeInteger(body.u)) &&
      (body.s === 'failed') === (body.u !== undefined) &&
      (body.s === undefined || (LISTABLE_STATES as readonly string[]).includes(body.s)) &&
      (body.ch === undefined || CHANNELS.includes(body.ch));
    return valid ? (body as CursorBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The failures' window ending at `until`. */
function failedWindow(until: number) {
  return { since: until - LedgerTable.recentFailures.windowMs, until };
}

/** What the store is asked for a parsed query at `now`: a first page, or the page after a cursor. */
export function toListRequest(filter: ListNoticesFilter, now: number): Parsed<ListRequest> {
  const base = { channel: filter.channel, limit: filter.limit };
  const first = (createdAtOrBefore: number | undefined, until: number): ListRequest =>
    filter.state === 'failed'
      ? { kind: 'failed', ...base, createdAtOrBefore, ...failedWindow(until) }
      : { kind: 'unresolved', ...base, state: filter.state, createdAtOrBefore };
  if (filter.cursor === undefined) {
    return {
      ok: true,
      value: first(filter.olderThanMs === undefined ? undefined : now - filter.olderThanMs, now),
    };
  }
  const cursor = decodeCursor(filter.cursor);
  if (!cursor) return badCursor('is not a cursor this API gave out');
  if (cursor.s !== filter.state || cursor.ch !== filter.channel || cursor.o !== filter.olderThanMs) {
    return badCursor('was given for other filters: repeat state, channel and olderThan as on the first page');
  }
  const [at, noticeId, channel] = cursor.k;
  const request = first(cursor.c, cursor.u ?? now);
  return {
    ok: true,
    value:
      request.kind === 'failed'
        ? { ...request, after: { failedAt: at, noticeId, channel } }
        : { ...request, after: { createdAt: at, noticeId, channel } },
  };
}

export function encodeCursor(
  filter: ListNoticesFilter,
  request: ListRequest,
  next: ListPosition | FailedPosition,
): string {
  const body: CursorBody = {
    v: 1,
    ...(filter.state !== undefined ? { s: filter.state } : {}),
    ...(filter.channel !== undefined ? { ch: filter.channel } : {}),
    ...(filter.olderThanMs !== undefined ? { o: filter.olderThanMs } : {}),
    ...(request.createdAtOrBefore !== undefined ? { c: request.createdAtOrBefore } : {}),
    ...(request.kind === 'failed' ? { u: request.until } : {}),
    k: ['failedAt' in next ? next.failedAt : next.createdAt, next.noticeId, next.channel],
  };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

/** A listed channel: its index item (or recent-failure item), and its row when it could be read. */
function toItem(
  ref: OpenIntentRef | FailedRef,
  row: Intent | undefined,
  context: RowViewContext,
): NoticeList['items'][number] {
  const failed = 'failedAt' in ref;
  return {
    noticeId: ref.noticeId,
    channel: ref.channel,
    state: failed ? 'failed' : (ref.state as ListableState),
    createdAt: iso(ref.createdAt),
    deadline: iso(ref.deadline),
    attempts: ref.attempts,
    ageSeconds: Math.max(0, Math.floor((context.now - ref.createdAt) / 1000)),
    escalated: failed ? escalates('failed', ref.reason as Reason) : ref.escalatedAt !== undefined,
    lastReason: row ? lastReasonView(row) : null,
    next: row ? nextStepView(row, context) : null,
  };
}

/** One page of the list, with the rows it shows (`readListed`). */
export type ListedPage =
  | { readonly kind: 'unresolved'; readonly page: UnresolvedPage }
  | { readonly kind: 'failed'; readonly page: FailedPage };

/** The body of `GET /v1/notices` (NoticeListSchema). */
export function toNoticeList(
  listed: ListedPage,
  rows: ReadonlyMap<string, Intent>,
  filter: ListNoticesFilter,
  request: ListRequest,
  context: RowViewContext,
): NoticeList {
  const { page } = listed;
  const items: readonly (OpenIntentRef | FailedRef)[] = page.items;
  return {
    items: items.map((ref) => toItem(ref, rows.get(listedKey(ref)), context)),
    nextCursor: page.next ? encodeCursor(filter, request, page.next) : null,
  };
}
