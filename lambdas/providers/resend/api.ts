/**
 * The parts of Resend's REST API the transport and the lookup share: the request bodies (built
 * in one place, so a replay is byte for byte the first attempt), the call itself, and how each
 * answer is classified. Facts and sources: docs/architecture.md §10 and the provider's OpenAPI
 * document (`POST /emails`, `POST /emails/batch`, `GET /emails`).
 */
import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { EmailMessage } from '../../ports/transport.port.ts';
import { outcomeForNetworkError, parseRetryAfter } from '../fetch-send.ts';

export interface ResendApiConfig {
  /** API origin, e.g. `https://api.resend.com`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The sender (`From`), part of every body: a changed sender is a changed body. */
  readonly from: string;
  /** Per call: past it the outcome is ambiguous. */
  readonly timeoutMs: number;
  /** Injected for tests; defaults to the global `fetch`. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** Resend answers a replay under the same key for 24 h (docs: idempotency keys). */
export const REPLAY_WINDOW_MS = 24 * 60 * 60_000;
/**
 * We replay only this long after the key's first use: the margin covers clock skew and the
 * chance that Resend counts its window from its own receipt. Past it a replay could be a send.
 */
export const SAFE_REPLAY_MS = REPLAY_WINDOW_MS - 60 * 60_000;
/** `POST /emails/batch` takes at most this many emails. */
export const MAX_BATCH = 100;

/** The tag every email carries (events: `data.tags.notice_intent`) and the same id as a header. */
export const INTENT_TAG = 'notice_intent';
export const INTENT_HEADER = 'X-Notice-Intent';

/** Tag values allow ASCII letters, digits, `_` and `-` (≤ 256). Correlation ids already do. */
function tagValue(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 256);
}

/**
 * One email as Resend's send request, members in a fixed order. `JSON.stringify` of this object
 * is a pure function of the message and the sender, which is what makes a replay identical.
 */
export function emailRequest(message: EmailMessage, from: string): Record<string, unknown> {
  return {
    from,
    to: [message.to],
    subject: message.subject,
    ...(message.html === undefined ? {} : { html: message.html }),
    text: message.text,
    headers: { [INTENT_HEADER]: message.correlationId },
    tags: [{ name: INTENT_TAG, value: tagValue(message.correlationId) }],
  };
}

/** The exact body of `POST /emails` for a message. */
export function sendBody(message: EmailMessage, from: string): string {
  return JSON.stringify(emailRequest(message, from));
}

/** The exact body of `POST /emails/batch` for messages in the call's order. */
export function batchBody(messages: readonly EmailMessage[], from: string): string {
  return JSON.stringify(messages.map((m) => emailRequest(m, from)));
}

export type ResendAnswer =
  | { readonly kind: 'answered'; readonly status: number; readonly body: unknown; readonly headers: Headers }
  | { readonly kind: 'failed'; readonly outcome: ProviderOutcome };

/**
 * One HTTP call, no retries, with the timeout covering the body read too (a 200 whose body never
 * arrives is as ambiguous as no answer). Never throws for what happened on the wire.
 */
export async function call(
  config: ResendApiConfig,
  request: { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> },
): Promise<ResendAnswer> {
  const doFetch = config.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(`${config.baseUrl.replace(/\/+$/, '')}${request.path}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${config.apiKey}`,
        accept: 'application/json',
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...request.headers,
      },
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(config.timeoutMs),
      // A redirect would turn the POST into a GET elsewhere; surface it instead.
      redirect: 'manual',
    });
  } catch (error) {
    return { kind: 'failed', outcome: outcomeForNetworkError(error) };
  }
  let text: string;
  try {
    text = await response.text();
  } catch {
    // The status line arrived, the body did not: a 2xx may be an email Resend holds, unnamed.
    if (response.status >= 200 && response.status < 300) {
      return { kind: 'failed', outcome: { kind: 'ambiguous', code: 'resend_unreadable_2xx' } };
    }
    text = '';
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { kind: 'answered', status: response.status, body, headers: response.headers };
}

/** Resend's error `name` (`rate_limit_exceeded` …), lower snake case only, so no free text reaches a code. */
export function errorName(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const name = (body as { name?: unknown }).name;
  return typeof name === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(name) ? name : undefined;
}

function code(status: number, body: unknown): string {
  const name = errorName(body);
  return `resend_${status}${name ? `_${name}` : ''}`;
}

/** The wait a 429 advises: `retry-after` (seconds or a date), else `ratelimit-reset` (seconds). */
function advisedDelayMs(headers: Pick<Headers, 'get'>, now: number): number | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  const reset = headers.get('ratelimit-reset')?.trim();
  return reset && /^\d+$/.test(reset) ? Number(reset) * 1000 : undefined;
}

/** A short wait for "the first request with this key is still running". */
const CONCURRENT_RETRY_MS = 1000;

/**
 * Any non-2xx answer of `POST /emails` or `POST /emails/batch` as an outcome. Pure; exported for
 * tests. Classified on (status, name), since `validation_error` also comes with 401/403:
 *  - 429 `rate_limit_exceeded` (or no name): retryable, throttled, after the advised delay;
 *    `daily_quota_exceeded` / `monthly_quota_exceeded`: operational (nothing will pass until the
 *    quota resets or a person raises it), held for the advised time when there is one;
 *  - 409 `concurrent_idempotent_requests` / `resource_locked`: retryable, short (this request was
 *    not processed; the first one under the key answers the next replay);
 *    `invalid_idempotent_request` (a request with this key and another body exists) or any other
 *    409: ambiguous, never resent under a new key;
 *  - 401 / 403 (key missing, invalid, restricted or suspended; an unverified domain), 404 / 405
 *    (wrong origin or path), 400 `invalid_idempotency_key`, 422 `invalid_from_address`:
 *    operational, every email would meet the same answer;
 *  - other 400 / 413 / 422: rejected, permanently (this email's fields);
 *  - 408: retryable (the server never had the whole request);
 *  - 5xx and anything undocumented: ambiguous (the request may have been processed; with the
 *    key, the reconciler's replay settles it at once).
 */
export function outcomeForResendError(
  status: number,
  body: unknown,
  headers: Pick<Headers, 'get'>,
  now: number,
): ProviderOutcome {
  const name = errorName(body);
  const c = code(status, body);
  const advised = advisedDelayMs(headers, now);
  if (status === 429) {
    if (name === 'daily_quota_exceeded' || name === 'monthly_quota_exceeded') {
      return {
        kind: 'operator_action_required',
        code: c,
        ...(advised !== undefined ? { retryAfterMs: advised } : {}),
      };
    }
    return {
      kind: 'retryable',
      code: c,
      throttled: true,
      ...(advised !== undefined ? { retryAfterMs: advised } : {}),
    };
  }
  if (status === 409) {
    if (name === 'concurrent_idempotent_requests' || name === 'resource_locked') {
      return { kind: 'retryable', code: c, throttled: false, retryAfterMs: advised ?? CONCURRENT_RETRY_MS };
    }
    return { kind: 'ambiguous', code: c };
  }
  if (status === 401 || status === 403 || status === 404 || status === 405) {
    return { kind: 'operator_action_required', code: c };
  }
  if (
    (status === 400 && name === 'invalid_idempotency_key') ||
    (status === 422 && name === 'invalid_from_address')
  ) {
    return { kind: 'operator_action_required', code: c };
  }
  if (status === 400 || status === 413 || status === 422)
    return { kind: 'rejected', code: c, permanent: true };
  if (status === 408) return { kind: 'retryable', code: c, throttled: false };
  if (status >= 400 && status < 500) return { kind: 'rejected', code: c, permanent: false };
  return { kind: 'ambiguous', code: c };
}

const EMAIL_ID = /^[A-Za-z0-9-]{1,64}$/;

/** The `id` of a 200 `{ id }`, when it looks like one. */
export function emailIdOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' && EMAIL_ID.test(id) ? id : undefined;
}

/** `POST /emails`: the answer as an outcome. */
export function outcomeOfSend(answer: ResendAnswer, now: number): ProviderOutcome {
  if (answer.kind === 'failed') return answer.outcome;
  if (answer.status === 200 || answer.status === 201) {
    const id = emailIdOf(answer.body);
    return id ? { kind: 'accepted', receiptId: id } : { kind: 'ambiguous', code: 'resend_unreadable_2xx' };
  }
  if (answer.status >= 200 && answer.status < 300)
    return { kind: 'ambiguous', code: `resend_${answer.status}` };
  return outcomeForResendError(answer.status, answer.body, answer.headers, now);
}

/**
 * `POST /emails/batch` (permissive validation): one outcome per email, in order. A 200 lists the
 * created emails in `data` (request order, invalid ones left out) and the invalid ones in
 * `errors: [{ index }]`; any other answer is the same outcome for every email. An answer whose
 * counts do not add up cannot be mapped back to the emails: ambiguous for all, never guessed.
 * A whole-call 400/422 (the call's shape, not one email) is retried, bounded by MAX_ATTEMPTS.
 */
export function outcomesOfBatch(answer: ResendAnswer, size: number, now: number): ProviderOutcome[] {
  const all = (outcome: ProviderOutcome) => Array.from({ length: size }, () => outcome);
  if (answer.kind === 'failed') return all(answer.outcome);
  if (answer.status !== 200) {
    if (answer.status >= 200 && answer.status < 300)
      return all({ kind: 'ambiguous', code: `resend_${answer.status}` });
    const outcome = outcomeForResendError(answer.status, answer.body, answer.headers, now);
    return all(outcome.kind === 'rejected' ? { ...outcome, permanent: false } : outcome);
  }
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as {
    data?: unknown;
    errors?: unknown;
  };
  const data = Array.isArray(body.data) ? body.data : undefined;
  const errors = Array.isArray(body.errors) ? body.errors : [];
  const invalid = new Set<number>();
  for (const e of errors) {
    const index = (e as { index?: unknown } | null)?.index;
    if (typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < size)
      invalid.add(index);
  }
  const ids = data?.map(emailIdOf);
  if (!ids || ids.some((id) => id === undefined) || ids.length + invalid.size !== size) {
    return all({ kind: 'ambiguous', code: 'resend_batch_unmapped' });
  }
  let next = 0;
  return Array.from({ length: size }, (_, index): ProviderOutcome => {
    if (invalid.has(index)) return { kind: 'rejected', code: 'resend_batch_item_invalid', permanent: true };
    return { kind: 'accepted', receiptId: ids[next++] as string };
  });
}
