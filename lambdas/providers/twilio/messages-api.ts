import { type TwilioApiConfig, twilioBasicAuth, twilioMessagesUrl } from './api.ts';

export interface TwilioLookupConfig extends TwilioApiConfig {
  /** Per HTTP request. */
  readonly timeoutMs?: number;
  /** Bounds a listing; see `findMessages`. */
  readonly maxPages?: number;
  readonly pageSize?: number;
}

/** What the reconciler needs to decide; no phone number or body is carried back. */
export interface FoundMessage {
  readonly sid: string;
  readonly status: string;
  /** Epoch ms; Twilio's resolution is one second. */
  readonly dateCreated: number;
  readonly errorCode: number | null;
}

export interface FindMessagesQuery {
  /** E.164 destination. */
  readonly to: string;
  /** Epoch ms: the attempt's start, less any clock-skew allowance the caller wants. */
  readonly sentAfter: number;
  /** When given, only messages whose body is exactly this (the rendered body we sent). */
  readonly bodyEquals?: string;
  readonly from?: string;
}

/**
 * Why a lookup could not answer. The message never includes the destination or body, so it
 * is safe to log; `httpStatus`/`twilioCode` let the caller back off on 429s.
 */
export class TwilioLookupError extends Error {
  override readonly name = 'TwilioLookupError';
  constructor(
    readonly reason: 'http_error' | 'network_error' | 'malformed_response' | 'page_limit_reached',
    readonly httpStatus?: number,
    readonly twilioCode?: number,
  ) {
    super(
      `Twilio lookup failed: ${reason}${httpStatus === undefined ? '' : ` (HTTP ${httpStatus}${twilioCode === undefined ? '' : `, code ${twilioCode}`})`}`,
    );
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_PAGES = 10;
const DEFAULT_PAGE_SIZE = 100;

/**
 * Messages sent to `to` since `sentAfter`, newest first, found by listing
 * `GET …/Messages.json?To=…&DateSent>=YYYY-MM-DD` page by page (at most `maxPages`).
 *
 * An empty array means the listing was read to its end and nothing matched. When the page
 * bound is reached first and nothing matched yet, this throws `page_limit_reached` instead:
 * "not found in the first N pages" must not be mistaken for "provably not accepted".
 *
 * Caveat for the caller: Twilio sets `date_sent` when it hands a message to the carrier, so a
 * message still `queued`/`accepted` may be missing from a DateSent-filtered listing. A miss
 * right after an ambiguous send is therefore only conclusive once the grace period has passed
 * (UNKNOWN_GRACE_MS), which is how the reconciler uses it.
 */
export async function findMessages(
  config: TwilioLookupConfig,
  query: FindMessagesQuery,
): Promise<FoundMessage[]> {
  const maxPages = Math.max(1, config.maxPages ?? DEFAULT_MAX_PAGES);
  const pageSize = Math.min(1000, Math.max(1, config.pageSize ?? DEFAULT_PAGE_SIZE));
  const firstUrl = new URL(twilioMessagesUrl(config));
  firstUrl.searchParams.set('To', query.to);
  if (query.from !== undefined) firstUrl.searchParams.set('From', query.from);
  // `DateSent>=D` in a query string is the parameter `DateSent>` with value D, which is how
  // Twilio's own clients spell "sent on or after D". Day granularity; refined locally below.
  firstUrl.searchParams.set('DateSent>', new Date(query.sentAfter).toISOString().slice(0, 10));
  firstUrl.searchParams.set('PageSize', String(pageSize));

  // date_created has one-second resolution: compare at that resolution or a message created
  // in the same second as `sentAfter` would be missed.
  const since = Math.floor(query.sentAfter / 1000) * 1000;
  const found: FoundMessage[] = [];
  let url: string | null = firstUrl.toString();
  for (let page = 0; page < maxPages && url !== null; page++) {
    const body = await getJson(config, url);
    if (body === null) throw new TwilioLookupError('http_error', 404);
    const messages = (body as { messages?: unknown }).messages;
    if (!Array.isArray(messages)) throw new TwilioLookupError('malformed_response');
    for (const raw of messages) {
      const message = parseMessage(raw);
      if (message === undefined) throw new TwilioLookupError('malformed_response');
      if (message.found.dateCreated < since) continue;
      if (query.bodyEquals !== undefined && message.body !== query.bodyEquals) continue;
      found.push(message.found);
    }
    url = nextPageUrl(config, (body as { next_page_uri?: unknown }).next_page_uri);
  }
  if (url !== null && found.length === 0) throw new TwilioLookupError('page_limit_reached');
  return found;
}

/** One message by SID; `null` when Twilio answers 404 (no such message in this account). */
export async function fetchMessage(config: TwilioLookupConfig, sid: string): Promise<FoundMessage | null> {
  const url = twilioMessagesUrl(config).replace(/\.json$/, `/${encodeURIComponent(sid)}.json`);
  const body = await getJson(config, url);
  if (body === null) return null;
  const message = parseMessage(body);
  if (message === undefined) throw new TwilioLookupError('malformed_response');
  return message.found;
}

/** Parsed JSON of a 2xx answer, `null` for a 404, throws `TwilioLookupError` otherwise. */
async function getJson(config: TwilioLookupConfig, url: string): Promise<unknown> {
  let response: Response;
  let text: string;
  try {
    response = await (config.fetch ?? fetch)(url, {
      headers: { authorization: twilioBasicAuth(config), accept: 'application/json' },
      signal: AbortSignal.timeout(config.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      redirect: 'manual',
    });
    text = await response.text();
  } catch {
    // The cause may quote the URL, which carries the phone number in its query string.
    throw new TwilioLookupError('network_error');
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new TwilioLookupError('malformed_response', response.status);
  }
  if (response.status === 404) return null;
  if (response.status < 200 || response.status >= 300) {
    const code = (body as { code?: unknown } | undefined)?.code;
    throw new TwilioLookupError('http_error', response.status, typeof code === 'number' ? code : undefined);
  }
  if (typeof body !== 'object' || body === null)
    throw new TwilioLookupError('malformed_response', response.status);
  return body;
}

/**
 * Follows `next_page_uri` only as a path on the configured origin: an absolute or
 * protocol-relative value would send our credentials to another host.
 */
function nextPageUrl(config: TwilioLookupConfig, nextPageUri: unknown): string | null {
  if (nextPageUri === null || nextPageUri === undefined || nextPageUri === '') return null;
  if (typeof nextPageUri !== 'string' || !nextPageUri.startsWith('/') || nextPageUri.startsWith('//')) {
    throw new TwilioLookupError('malformed_response');
  }
  return `${config.baseUrl.replace(/\/+$/, '')}${nextPageUri}`;
}

function parseMessage(raw: unknown): { found: FoundMessage; body: string | undefined } | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const m = raw as {
    sid?: unknown;
    status?: unknown;
    date_created?: unknown;
    error_code?: unknown;
    body?: unknown;
  };
  if (typeof m.sid !== 'string' || typeof m.status !== 'string' || typeof m.date_created !== 'string')
    return undefined;
  const dateCreated = Date.parse(m.date_created);
  if (Number.isNaN(dateCreated)) return undefined;
  const errorCode =
    typeof m.error_code === 'number'
      ? m.error_code
      : typeof m.error_code === 'string'
        ? Number(m.error_code) || null
        : null;
  return {
    found: { sid: m.sid, status: m.status, dateCreated, errorCode },
    body: typeof m.body === 'string' ? m.body : undefined,
  };
}
