/**
 * The local stack's console: two server-rendered pages over the API, served beside it by the
 * local gateway (docs/operators.md "Console"):
 *
 *   GET /console                       unresolved channels oldest first, counts per state, oldest age,
 *                                      each channel's last reason and next step; the channels failed
 *                                      in the last 24 hours; reloads itself every CONSOLE_REFRESH_SECONDS
 *   GET /console/notices/{noticeId}    the timeline page of one notice
 *   GET /console/events.json           the outcome events on the local bus, oldest first
 *                                      (`?after=<n>`: those after position n; `notice-ledger events`)
 *
 * They are local-only and not part of the route contract (lambdas/contract/routes.ts): the
 * deployed API is IAM-only and answers JSON, and a browser cannot sign SigV4, so a deployed
 * stack's page comes from `notice-ledger get <id> --html FILE` instead. The pages read what an
 * operator's client reads: they call the http function with the same requests
 * (`GET /v1/notices`, `GET /v1/notices/{noticeId}`) and render its answers with the client's
 * renderers (client/html/), so nothing here reads the ledger by another way.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { escapeHtml, PAGE_CSP, page } from '../client/html/html.ts';
import { renderListPage } from '../client/html/list-page.ts';
import { renderTimelinePage } from '../client/html/timeline-page.ts';
import { matchRoute } from '../lambdas/contract/routes.ts';
import type { NoticeList } from '../lambdas/edge/api-responses.ts';
import type { Timeline } from '../lambdas/edge/timeline.ts';
import { localOutcomeBus } from './services/outcomes.ts';

/** The console's routes: local only, never deployed (test/infra/routes.test.ts checks both). */
export const CONSOLE_ROUTES = ['/console', '/console/notices/{noticeId}', '/console/events.json'] as const;

/** The console lists at most this many channels (pages of 200); the counts say when more exist. */
const MAX_LISTED = 1000;

/** The failures the console shows: the most recent page of `GET /v1/notices?state=failed`. */
const FAILED_LISTED = 100;

/** How often the list page reloads itself (the pages run no script: a meta refresh). */
export const CONSOLE_REFRESH_SECONDS = 10;

type HttpApi = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export function isConsolePath(path: string): boolean {
  return CONSOLE_ROUTES.some((route) => matchRoute(route, path) !== undefined);
}

function html(status: number, body: string): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PAGE_CSP,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    body,
  };
}

/** The local bus's outcome events after `?after=` (default 0), at most `?limit=` (default and cap 1000). */
function outcomeEvents(event: APIGatewayProxyEventV2): APIGatewayProxyStructuredResultV2 {
  const number = (value: string | undefined, fallback: number) => {
    const n = Number(value);
    return value !== undefined && Number.isInteger(n) && n >= 0 ? n : fallback;
  };
  const after = number(event.queryStringParameters?.after, 0);
  const limit = Math.min(1000, Math.max(1, number(event.queryStringParameters?.limit, 1000)));
  const events = localOutcomeBus()?.events(after, limit) ?? [];
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify({ events, next: events[events.length - 1]?.n ?? after }),
  };
}

function errorPage(status: number, title: string, detail: string): APIGatewayProxyStructuredResultV2 {
  return html(
    status,
    page(
      title,
      'body { font: 14px system-ui, sans-serif; padding: 24px; }',
      `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(detail)}</p>
<p><a href="/console">Unresolved channels</a></p>`,
    ),
  );
}

/** An API request as the local gateway would hand it to the http function. */
function apiRequest(
  from: APIGatewayProxyEventV2,
  path: string,
  query: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  const rawQueryString = new URLSearchParams(query).toString();
  return {
    ...from,
    rawPath: path,
    rawQueryString,
    headers: { host: from.headers.host ?? '127.0.0.1', accept: 'application/json' },
    ...(rawQueryString ? { queryStringParameters: query } : { queryStringParameters: undefined }),
    requestContext: { ...from.requestContext, http: { ...from.requestContext.http, method: 'GET', path } },
    body: undefined,
    isBase64Encoded: false,
  };
}

async function readJson<T>(
  api: HttpApi,
  event: APIGatewayProxyEventV2,
): Promise<{ ok: true; body: T } | { ok: false; status: number; detail: string }> {
  const result = await api(event);
  const status = result.statusCode ?? 200;
  const body = result.body ? (JSON.parse(result.body) as unknown) : undefined;
  if (status === 200) return { ok: true, body: body as T };
  const detail = (body as { detail?: string } | undefined)?.detail ?? `the API answered ${status}`;
  return { ok: false, status, detail };
}

async function listPage(event: APIGatewayProxyEventV2, api: HttpApi, now: Date) {
  const items: NoticeList['items'] = [];
  let cursor: string | undefined;
  do {
    const page = await readJson<NoticeList>(
      api,
      apiRequest(event, '/v1/notices', { limit: '200', ...(cursor ? { cursor } : {}) }),
    );
    if (!page.ok) return errorPage(page.status, 'The list could not be read', page.detail);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? undefined;
  } while (cursor && items.length < MAX_LISTED);
  const failed = await readJson<NoticeList>(
    api,
    apiRequest(event, '/v1/notices', { state: 'failed', limit: String(FAILED_LISTED) }),
  );
  if (!failed.ok) return errorPage(failed.status, 'The failures could not be read', failed.detail);
  const counts = cursor
    ? undefined
    : Object.fromEntries(
        (['reserved', 'sending', 'retry_scheduled', 'unknown'] as const).map((state) => [
          state,
          items.filter((i) => i.state === state).length,
        ]),
      );
  return html(
    200,
    renderListPage(
      { items, nextCursor: cursor ?? null },
      {
        now,
        ...(counts ? { counts } : {}),
        noticeHref: (id) => `/console/notices/${encodeURIComponent(id)}`,
        title: 'Unresolved channels (local stack)',
        failed: failed.body,
        refreshSeconds: CONSOLE_REFRESH_SECONDS,
      },
    ),
  );
}

async function timelinePage(event: APIGatewayProxyEventV2, api: HttpApi, noticeId: string, now: Date) {
  const timeline = await readJson<Timeline>(
    api,
    apiRequest(event, `/v1/notices/${encodeURIComponent(noticeId)}`),
  );
  if (!timeline.ok) {
    return errorPage(
      timeline.status,
      timeline.status === 404 ? 'No such notice' : 'The notice could not be read',
      timeline.detail,
    );
  }
  return html(200, renderTimelinePage(timeline.body, { now }));
}

/** Answers a console request through the http function `api`. */
export async function serveConsole(
  event: APIGatewayProxyEventV2,
  api: HttpApi,
  now: () => Date = () => new Date(),
): Promise<APIGatewayProxyStructuredResultV2> {
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') {
    const refused = errorPage(405, 'Method not allowed', 'the console only reads');
    return { ...refused, headers: { ...refused.headers, allow: 'GET' } };
  }
  const path = event.rawPath || '/';
  if (matchRoute('/console', path)) return listPage(event, api, now());
  if (matchRoute('/console/events.json', path)) return outcomeEvents(event);
  const params = matchRoute('/console/notices/{noticeId}', path);
  if (params?.noticeId) {
    let noticeId: string;
    try {
      noticeId = decodeURIComponent(params.noticeId);
    } catch {
      noticeId = params.noticeId;
    }
    return timelinePage(event, api, noticeId, now());
  }
  return errorPage(404, 'Not found', 'no such console page');
}
