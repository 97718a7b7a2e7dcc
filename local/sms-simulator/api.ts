/**
 * The simulator's Twilio REST surface (2010-04-01): the message JSON Twilio answers with, its
 * error bodies, the create checks in Twilio's order, and the list endpoint's filters and paging.
 * Error messages quote the number as Twilio's do; they go to the client only, never to a log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ALPHANUMERIC_SENDER, E164, type MessageStore, SHORT_CODE, type StoredMessage } from './store.ts';

export const API_VERSION = '2010-04-01';
export const MAX_FORM_BYTES = 64 * 1024;
const MAX_BODY_CHARS = 1600;

/** Twilio's date format: `Thu, 30 Jul 2015 20:12:31 +0000`. */
export function rfc2822(ms: number): string {
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

export const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  30003: 'Unreachable destination handset',
  30005: 'Unknown destination handset',
  30006: 'Landline or unreachable carrier',
  30007: 'Message filtered',
  30008: 'Unknown error',
};

/** Default Twilio error codes for injected status faults without an explicit code. */
export const DEFAULT_ERROR_CODES: Readonly<Record<number, number>> = {
  400: 21211,
  401: 20003,
  403: 20003,
  404: 20404,
  429: 20429,
  500: 20500,
  503: 20503,
};

export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface DateRange {
  from: number;
  to: number;
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` covers the whole UTC day; any other parseable timestamp is taken to the second. */
function parseDateFilter(value: string): DateRange {
  const trimmed = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const start = Date.parse(`${trimmed}T00:00:00Z`);
    if (!Number.isNaN(start)) return { from: start, to: start + DAY_MS - 1 };
  } else {
    const at = Date.parse(trimmed);
    if (!Number.isNaN(at)) {
      const second = Math.floor(at / 1000) * 1000;
      return { from: second, to: second + 999 };
    }
  }
  throw new HttpProblem(400, 20001, 'Invalid DateSent filter');
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function twilioError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  json(
    res,
    status,
    { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
    headers,
  );
}

export function toTwilioJson(accountPath: string, m: StoredMessage): Record<string, unknown> {
  const uri = `${accountPath}/Messages/${m.sid}.json`;
  return {
    account_sid: m.accountSid,
    api_version: API_VERSION,
    body: m.body,
    date_created: rfc2822(m.dateCreated),
    date_sent: m.dateSent === null ? null : rfc2822(m.dateSent),
    date_updated: rfc2822(m.dateUpdated),
    direction: 'outbound-api',
    error_code: m.errorCode,
    error_message: m.errorMessage,
    from: m.from,
    messaging_service_sid: null,
    num_media: '0',
    num_segments: String(m.numSegments),
    price: null,
    price_unit: 'USD',
    sid: m.sid,
    status: m.status,
    subresource_uris: { media: `${accountPath}/Messages/${m.sid}/Media.json` },
    to: m.to,
    uri,
  };
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpProblem(413, 20001, 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req));
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    throw new HttpProblem(400, 20001, 'Body is not JSON');
  }
}

/** Twilio's checks, in Twilio's order; the message quotes the number as Twilio's does. */
export function validateCreate(
  form: URLSearchParams,
  fromNumbers: ReadonlySet<string> | undefined,
): {
  to: string;
  from: string;
  body: string;
  statusCallback: string | null;
} {
  const to = form.get('To');
  const from = form.get('From');
  const body = form.get('Body') ?? '';
  const statusCallback = form.get('StatusCallback');
  if (to === null || to === '') throw new HttpProblem(400, 21604, "A 'To' phone number is required.");
  if (!E164.test(to)) throw new HttpProblem(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
  if (from === null || from === '') throw new HttpProblem(400, 21603, "A 'From' phone number is required.");
  if (!E164.test(from) && !ALPHANUMERIC_SENDER.test(from) && !SHORT_CODE.test(from)) {
    throw new HttpProblem(
      400,
      21212,
      `The 'From' number ${from} is not a valid phone number, shortcode, or alphanumeric sender ID.`,
    );
  }
  if (fromNumbers !== undefined && !fromNumbers.has(from)) {
    throw new HttpProblem(
      400,
      21606,
      `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`,
    );
  }
  if (to === from) throw new HttpProblem(400, 21266, "'To' and 'From' number cannot be the same.");
  if (body === '') throw new HttpProblem(400, 21602, 'Message body is required.');
  if ([...body].length > MAX_BODY_CHARS) {
    throw new HttpProblem(400, 21617, 'The concatenated message body exceeds the 1600 character limit.');
  }
  if (statusCallback !== null && statusCallback !== '') {
    let valid = false;
    try {
      const url = new URL(statusCallback);
      valid = url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      valid = false;
    }
    if (!valid) throw new HttpProblem(400, 21609, 'The StatusCallback URL is not a valid URL.');
  }
  return { to, from, body, statusCallback: statusCallback === '' ? null : statusCallback };
}

export function handleList(store: MessageStore, accountPath: string, url: URL, res: ServerResponse): void {
  const q = url.searchParams;
  const to = q.get('To');
  const from = q.get('From');
  // `DateSent>=D` arrives as the key `DateSent>` (the `=` separates key and value); accept
  // an encoded `DateSent>=` key too. Both bounds are inclusive, as Twilio documents.
  const afterRaw = q.get('DateSent>') ?? q.get('DateSent>=');
  const beforeRaw = q.get('DateSent<') ?? q.get('DateSent<=');
  const exactRaw = q.get('DateSent');
  const after = afterRaw === null ? undefined : parseDateFilter(afterRaw).from;
  const before = beforeRaw === null ? undefined : parseDateFilter(beforeRaw).to;
  const exact = exactRaw === null ? undefined : parseDateFilter(exactRaw);
  const pageSizeRaw = q.get('PageSize');
  const pageSize =
    pageSizeRaw === null ? 50 : Math.min(1000, Math.max(1, Number.parseInt(pageSizeRaw, 10) || 50));
  const page = Math.max(0, Number.parseInt(q.get('Page') ?? '0', 10) || 0);
  const token = q.get('PageToken');

  const matches = [...store.all]
    .filter((m) => {
      if (to !== null && m.to !== to) return false;
      if (from !== null && m.from !== from) return false;
      // Real Twilio fills date_sent only once a message leaves its queue; the simulator falls
      // back to date_created so a still-queued message can be found (documented leniency).
      const date = m.dateSent ?? m.dateCreated;
      if (after !== undefined && date < after) return false;
      if (before !== undefined && date > before) return false;
      if (exact !== undefined && (date < exact.from || date > exact.to)) return false;
      return true;
    })
    .sort((a, b) => b.dateCreated - a.dateCreated || b.seq - a.seq);

  let start: number;
  if (token !== null) {
    if (!token.startsWith('PA')) throw new HttpProblem(400, 20001, 'Invalid PageToken');
    const index = matches.findIndex((m) => m.sid === token.slice(2));
    // A token for a message that no longer matches (reset) yields an empty page, not an error.
    start = index === -1 ? matches.length : index + 1;
  } else {
    start = page * pageSize;
  }
  const items = matches.slice(start, start + pageSize);

  const filters = new URLSearchParams();
  for (const key of ['To', 'From', 'DateSent', 'DateSent>', 'DateSent>=', 'DateSent<', 'DateSent<=']) {
    const value = q.get(key);
    if (value !== null) filters.set(key, value);
  }
  const pageUri = (extra: Record<string, string>) => {
    const params = new URLSearchParams(filters);
    params.set('PageSize', String(pageSize));
    for (const [k, v] of Object.entries(extra)) params.set(k, v);
    return `${accountPath}/Messages.json?${params.toString()}`;
  };
  const last = items[items.length - 1];
  const hasMore = start + items.length < matches.length && last !== undefined;
  json(res, 200, {
    messages: items.map((m) => toTwilioJson(accountPath, m)),
    end: start + Math.max(0, items.length - 1),
    first_page_uri: pageUri({ Page: '0' }),
    next_page_uri: hasMore ? pageUri({ Page: String(page + 1), PageToken: `PA${last.sid}` }) : null,
    previous_page_uri: page > 0 ? pageUri({ Page: String(page - 1) }) : null,
    page,
    page_size: pageSize,
    start,
    uri: `${url.pathname}${url.search}`,
  });
}
