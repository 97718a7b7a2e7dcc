import type {
  BatchResponse,
  CancelResponse,
  NoticeList,
  NoticeRecorded,
  NoticeRequestBody,
  ProblemBody,
  Suppression,
} from '../lambdas/edge/api-responses.ts';
import type {
  CancelRequestBody,
  ListNoticesQuery,
  ResolutionRequestBody,
  SuppressionRequestBody,
} from '../lambdas/edge/operator-requests.ts';
import type { Timeline, TimelineChannel } from '../lambdas/edge/timeline.ts';
import { executeApiRegion, type RequestSigner, sigV4Signer } from './sigv4.ts';

/**
 * A typed client of the notice-ledger HTTP API (docs/openapi.json), for the CLI and for business
 * systems. It imports only types from the service, so it carries no server code; at run time it
 * needs `fetch` (Node ≥ 18) and, for an IAM-authorised endpoint, the AWS SDK's signer.
 *
 * Every call answers the HTTP outcome as a value: `{ ok: true, status, body }` for a 2xx,
 * `{ ok: false, status, problem }` for an RFC 9457 answer (or any non-2xx, made into one). Only a
 * transport failure (no connection, timeout) throws, as `TransportError`, and a request that could
 * not be signed (no credentials, an STS or SSO endpoint out of reach), as `SigningError`.
 */

export type ApiResult<T> =
  | { readonly ok: true; readonly status: number; readonly body: T }
  | { readonly ok: false; readonly status: number; readonly problem: ProblemBody };

export class TransportError extends Error {
  constructor(
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** The signer failed before anything was sent: credentials the chain could not find or fetch. */
export class SigningError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SigningError';
  }
}

export type Channel = 'email' | 'sms';

export interface ClientOptions {
  /** API origin, e.g. `http://127.0.0.1:3000` or `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  readonly endpoint: string;
  /**
   * How to sign requests. Default: SigV4 with the SDK's credential chain when the endpoint is an
   * `execute-api` host (region from the host), none otherwise. `false`: never sign.
   */
  readonly signer?: RequestSigner | false | undefined;
  /** Per request. @default 30000 */
  readonly timeoutMs?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
  /**
   * The local stack only: the IAM principal ARN to call as (an assumed-role session, a role, a
   * user), sent as the `x-notice-ledger-caller` header its gateway reads instead of a signature
   * (README "Callers"). Refused beside a signer: behind IAM the signature is the caller.
   */
  readonly caller?: string | undefined;
}

/**
 * The local gateway's caller header (local/callers.ts `CALLER_HEADER`; the client imports no
 * server code, so it is written here too, and test/e2e/callers.test.ts calls the stack with it).
 */
export const CALLER_HEADER = 'x-notice-ledger-caller';

/** Where a path parameter goes: percent-encoded as one segment (`+` → `%2B`). */
const segment = (value: string) => encodeURIComponent(value);

export class NoticeLedgerClient {
  readonly endpoint: URL;
  private readonly signer: RequestSigner | undefined;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly caller: string | undefined;

  constructor(options: ClientOptions) {
    this.endpoint = new URL(options.endpoint);
    if (this.endpoint.protocol !== 'http:' && this.endpoint.protocol !== 'https:') {
      throw new TypeError('endpoint must be an http(s) URL');
    }
    const region = executeApiRegion(this.endpoint.hostname);
    this.signer =
      options.signer === false
        ? undefined
        : (options.signer ?? (region !== undefined ? sigV4Signer({ region }) : undefined));
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? fetch;
    if (options.caller !== undefined && this.signer) {
      throw new TypeError('caller names who calls the local stack; a signed request is its signer');
    }
    this.caller = options.caller;
  }

  /** Whether requests are signed (for `--verbose` style diagnostics). */
  get signs(): boolean {
    return this.signer !== undefined;
  }

  health(): Promise<ApiResult<{ status: 'ok' }>> {
    return this.request('GET', '/v1/health');
  }

  openApi(): Promise<ApiResult<Record<string, unknown>>> {
    return this.request('GET', '/v1/openapi.json');
  }

  /** 202 when this request recorded the notice, 200 for a replay; 409 conflict; 400/413/415/422. */
  submitNotice(notice: NoticeRequestBody | unknown): Promise<ApiResult<NoticeRecorded>> {
    return this.request('POST', '/v1/notices', { body: notice });
  }

  submitBatch(notices: readonly (NoticeRequestBody | unknown)[]): Promise<ApiResult<BatchResponse>> {
    return this.request('POST', '/v1/notices/batch', { body: { notices } });
  }

  getNotice(noticeId: string): Promise<ApiResult<Timeline>> {
    return this.request('GET', `/v1/notices/${segment(noticeId)}`);
  }

  listNotices(query: ListNoticesQuery = {}): Promise<ApiResult<NoticeList>> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) params.set(name, String(value));
    return this.request('GET', '/v1/notices', { query: params });
  }

  /** Every page of `listNotices`, oldest first, up to `max` items. */
  async listAllNotices(
    query: Omit<ListNoticesQuery, 'cursor'> = {},
    max = 10_000,
  ): Promise<ApiResult<NoticeList>> {
    const items: NoticeList['items'] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listNotices({ ...query, ...(cursor ? { cursor } : {}) });
      if (!page.ok) return page;
      items.push(...page.body.items);
      cursor = page.body.nextCursor ?? undefined;
      if (!cursor || items.length >= max) {
        return {
          ok: true,
          status: page.status,
          body: { items: items.slice(0, max), nextCursor: cursor ?? null },
        };
      }
    }
  }

  resolveChannel(
    noticeId: string,
    channel: Channel,
    resolution: ResolutionRequestBody,
  ): Promise<ApiResult<TimelineChannel>> {
    return this.request('POST', `/v1/notices/${segment(noticeId)}/channels/${segment(channel)}/resolution`, {
      body: resolution,
    });
  }

  cancelNotice(noticeId: string, cancel: CancelRequestBody): Promise<ApiResult<CancelResponse>> {
    return this.request('POST', `/v1/notices/${segment(noticeId)}/cancel`, { body: cancel });
  }

  getSuppression(channel: Channel, destination: string): Promise<ApiResult<Suppression>> {
    return this.request('GET', suppressionPath(channel, destination));
  }

  /** 201 turned suppression on, 200 it was on already (a record is appended either way). */
  putSuppression(
    channel: Channel,
    destination: string,
    body?: SuppressionRequestBody,
  ): Promise<ApiResult<Suppression>> {
    return this.request('PUT', suppressionPath(channel, destination), body ? { body } : {});
  }

  /** 204 lifted (a lift record appended), 404 when it was not suppressed. */
  deleteSuppression(
    channel: Channel,
    destination: string,
    body?: SuppressionRequestBody,
  ): Promise<ApiResult<null>> {
    return this.request('DELETE', suppressionPath(channel, destination), body ? { body } : {});
  }

  private async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; query?: URLSearchParams } = {},
  ): Promise<ApiResult<T>> {
    const url = new URL(path, this.endpoint);
    // An endpoint with a base path (a named stage: https://host/prod) keeps it.
    url.pathname = `${this.endpoint.pathname.replace(/\/$/, '')}${path}`;
    if (options.query) url.search = options.query.toString();
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    let headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(this.caller !== undefined ? { [CALLER_HEADER]: this.caller } : {}),
    };
    if (this.signer) {
      try {
        headers = await this.signer({ method, url, headers, body });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new SigningError(`cannot sign ${method} ${url.origin}${url.pathname}: ${reason}`, {
          cause: error,
        });
      }
    }
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      throw new TransportError(`${method} ${url.origin}${url.pathname} failed: ${reason}`, url.href, {
        cause: error,
      });
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok) return { ok: true, status: response.status, body: (parsed ?? null) as T };
    return { ok: false, status: response.status, problem: asProblem(response, parsed, text) };
  }
}

function suppressionPath(channel: Channel, destination: string): string {
  return `/v1/suppressions/${segment(channel)}/${segment(destination)}`;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-2xx as a problem: the API's own body, or one made from what a gateway answered. */
function asProblem(response: Response, parsed: unknown, text: string): ProblemBody {
  if (typeof parsed === 'object' && parsed !== null && 'title' in parsed && 'status' in parsed) {
    return parsed as ProblemBody;
  }
  // API Gateway's own refusals (403 for a bad signature, 429 throttling) are `{ "message": … }`.
  const message =
    typeof parsed === 'object' && parsed !== null && 'message' in parsed
      ? String(parsed.message)
      : text.slice(0, 200);
  return {
    type: 'about:blank',
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    ...(message ? { detail: message } : {}),
  };
}
