import { CHANNELS, type Channel } from '../domain/channel.ts';
import { isNoticeId } from '../domain/identity.ts';
import type { OpenIntentRef } from '../ports/open-index.port.ts';
import type { ListPosition, UnresolvedPage, UnresolvedQuery } from '../use-cases/list-unresolved.ts';
import type { NoticeList } from './api-responses.ts';
import {
  LISTABLE_STATES,
  type ListableState,
  type ListNoticesFilter,
  type Parsed,
} from './operator-requests.ts';

/**
 * The opaque `cursor` of `GET /v1/notices`: base64url of a small JSON object holding the filters
 * the first page was asked with, the age cutoff that page fixed (`olderThan` counted from the
 * first request, so paging does not drift), and where the last page ended. A cursor reused with
 * other filters, or one that is not ours, is a 400 naming `cursor`. It says nothing a caller
 * allowed to list could not see anyway; tampering only moves the position.
 */
interface CursorBody {
  readonly v: 1;
  readonly s?: ListableState;
  readonly ch?: Channel;
  readonly o?: number;
  /** createdAt cutoff, epoch ms. */
  readonly c?: number;
  /** Position after which the next page starts: [createdAt, noticeId, channel]. */
  readonly k: readonly [number, string, Channel];
}

/** The use case's query, narrowed to the states a caller may list. */
export interface ListRequest extends UnresolvedQuery {
  readonly state?: ListableState | undefined;
}

const badCursor = (message: string): Parsed<never> => ({
  ok: false,
  errors: [{ path: 'cursor', code: 'invalid_cursor', message }],
});

function decodeCursor(text: string): CursorBody | undefined {
  try {
    const body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<CursorBody>;
    const [createdAt, noticeId, channel] = (body.k ?? []) as unknown[];
    const valid =
      body.v === 1 &&
      typeof createdAt === 'number' &&
      Number.isSafeInteger(createdAt) &&
      typeof noticeId === 'string' &&
      isNoticeId(noticeId) &&
      CHANNELS.includes(channel as Channel) &&
      (body.c === undefined || Number.isSafeInteger(body.c)) &&
      (body.o === undefined || Number.isSafeInteger(body.o)) &&
      (body.s === undefined || (LISTABLE_STATES as readonly string[]).includes(body.s)) &&
      (body.ch === undefined || CHANNELS.includes(body.ch));
    return valid ? (body as CursorBody) : undefined;
  } catch {
    return undefined;
  }
}

/** What the store is asked for a parsed query at `now`: a first page, or the page after a cursor. */
export function toListRequest(filter: ListNoticesFilter, now: number): Parsed<ListRequest> {
  const base = { state: filter.state, channel: filter.channel, limit: filter.limit };
  if (filter.cursor === undefined) {
    return {
      ok: true,
      value: {
        ...base,
        createdAtOrBefore: filter.olderThanMs === undefined ? undefined : now - filter.olderThanMs,
      },
    };
  }
  const cursor = decodeCursor(filter.cursor);
  if (!cursor) return badCursor('is not a cursor this API gave out');
  if (cursor.s !== filter.state || cursor.ch !== filter.channel || cursor.o !== filter.olderThanMs) {
    return badCursor('was given for other filters: repeat state, channel and olderThan as on the first page');
  }
  const [createdAt, noticeId, channel] = cursor.k;
  return {
    ok: true,
    value: { ...base, createdAtOrBefore: cursor.c, after: { createdAt, noticeId, channel } },
  };
}

export function encodeCursor(filter: ListNoticesFilter, request: ListRequest, next: ListPosition): string {
  const body: CursorBody = {
    v: 1,
    ...(filter.state !== undefined ? { s: filter.state } : {}),
    ...(filter.channel !== undefined ? { ch: filter.channel } : {}),
    ...(filter.olderThanMs !== undefined ? { o: filter.olderThanMs } : {}),
    ...(request.createdAtOrBefore !== undefined ? { c: request.createdAtOrBefore } : {}),
    k: [next.createdAt, next.noticeId, next.channel],
  };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

function toItem(ref: OpenIntentRef, now: number): NoticeList['items'][number] {
  return {
    noticeId: ref.noticeId,
    channel: ref.channel,
    state: ref.state as ListableState,
    createdAt: iso(ref.createdAt),
    deadline: iso(ref.deadline),
    attempts: ref.attempts,
    ageSeconds: Math.max(0, Math.floor((now - ref.createdAt) / 1000)),
    escalated: ref.escalatedAt !== undefined,
  };
}

/** The body of `GET /v1/notices` (NoticeListSchema). */
export function toNoticeList(
  page: UnresolvedPage,
  filter: ListNoticesFilter,
  request: ListRequest,
  now: number,
): NoticeList {
  return {
    items: page.items.map((ref) => toItem(ref, now)),
    nextCursor: page.next ? encodeCursor(filter, request, page.next) : null,
  };
}
