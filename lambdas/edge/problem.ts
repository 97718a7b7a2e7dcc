import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/**
 * RFC 9457 problem details. Every error the HTTP API returns is one of these, served as
 * `application/problem+json`.
 *
 * `type` URIs are stable identifiers under `https://notice-ledger.dev/problems/` (clients key on
 * them, not on `title` or `detail`); they are names, not promised to resolve. `about:blank` is
 * not used, so that every problem says which rule it is about.
 *
 * Privacy: `detail` and `errors[].message` name field paths and rules, never submitted values
 * (addresses, phone numbers, template variables are personal data). Builders here take no
 * request input for that reason; callers pass fixed text.
 */
export const ProblemType = {
  /** 400: the body is not JSON, not UTF-8, or nested too deeply. */
  malformedBody: 'https://notice-ledger.dev/problems/malformed-body',
  /** 400: JSON whose shape, types or required fields are wrong; see `errors`. */
  invalidRequest: 'https://notice-ledger.dev/problems/invalid-request',
  /** 422: well-formed, but semantically unacceptable (template, variables, deadline); see `errors`. */
  unprocessable: 'https://notice-ledger.dev/problems/unprocessable-notice',
  /** 409: the notice exists with different content for at least one channel. */
  conflict: 'https://notice-ledger.dev/problems/notice-conflict',
  /** 409: an operator's act the channel's state does not allow (a resolution of a channel not unknown). */
  stateConflict: 'https://notice-ledger.dev/problems/state-conflict',
  /**
   * 409: the notice id is another submitter's (the same eventType, eventId and recipient.id);
   * nothing was recorded, and nothing of the recorded notice is told.
   */
  noticeTaken: 'https://notice-ledger.dev/problems/notice-taken',
  /** 403: a provider callback whose signature does not verify. */
  invalidSignature: 'https://notice-ledger.dev/problems/invalid-signature',
  /** 403: the caller's role may not call this route (an auditor's act, a submitter's list). */
  forbidden: 'https://notice-ledger.dev/problems/forbidden',
  notFound: 'https://notice-ledger.dev/problems/not-found',
  methodNotAllowed: 'https://notice-ledger.dev/problems/method-not-allowed',
  payloadTooLarge: 'https://notice-ledger.dev/problems/payload-too-large',
  unsupportedMediaType: 'https://notice-ledger.dev/problems/unsupported-media-type',
  /**
   * 503 with Retry-After: the ledger refused the request for capacity (a burst above what its
   * tables are scaled to, docs/cost.md "Provisioned capacity with auto scaling"); nothing was recorded by the failed step, and the
   * same request may be sent again as it is (intake is idempotent).
   */
  capacityExceeded: 'https://notice-ledger.dev/problems/capacity-exceeded',
  /** 500: our fault; the detail is generic and the cause is in the server log. */
  internal: 'https://notice-ledger.dev/problems/internal-error',
} as const;

export type ProblemType = (typeof ProblemType)[keyof typeof ProblemType];

/** One offending field: a dotted path into the request body (`recipient.phone`, `channels.1`). */
export interface FieldError {
  readonly path: string;
  /** Stable snake_case rule code (`required`, `wrong_type`, `too_long`, `unknown_template` …). */
  readonly code: string;
  /** Human-readable rule; never contains the submitted value. */
  readonly message: string;
}

export interface Problem {
  readonly type: ProblemType;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance?: string;
  readonly errors?: readonly FieldError[];
  /** Extension members (RFC 9457 §3.2), e.g. `noticeId` and `channels` on a conflict. */
  readonly [extension: string]: unknown;
}

/** More than this many field errors is noise; the first ones are enough to fix the request. */
export const MAX_FIELD_ERRORS = 25;

const TITLES: Readonly<Record<ProblemType, string>> = {
  [ProblemType.malformedBody]: 'Malformed request body',
  [ProblemType.invalidRequest]: 'Invalid request',
  [ProblemType.unprocessable]: 'Notice cannot be accepted',
  [ProblemType.conflict]: 'Notice already recorded with different content',
  [ProblemType.stateConflict]: 'Not allowed in the channel’s state',
  [ProblemType.noticeTaken]: 'Notice id is another submitter’s',
  [ProblemType.invalidSignature]: 'Callback signature not valid',
  [ProblemType.forbidden]: 'Forbidden',
  [ProblemType.notFound]: 'Not found',
  [ProblemType.methodNotAllowed]: 'Method not allowed',
  [ProblemType.payloadTooLarge]: 'Payload too large',
  [ProblemType.unsupportedMediaType]: 'Unsupported media type',
  [ProblemType.capacityExceeded]: 'Temporarily over capacity',
  [ProblemType.internal]: 'Internal error',
};

export function problem(
  status: number,
  type: ProblemType,
  options: {
    detail?: string;
    errors?: readonly FieldError[];
    extensions?: Readonly<Record<string, unknown>>;
  } = {},
): Problem {
  const errors = options.errors?.slice(0, MAX_FIELD_ERRORS);
  return {
    ...options.extensions,
    type,
    title: TITLES[type],
    status,
    ...(options.detail !== undefined ? { detail: options.detail } : {}),
    ...(errors && errors.length > 0 ? { errors } : {}),
  };
}

/** 400 with field errors: wrong shape, types, lengths, missing fields. */
export function invalidRequest(errors: readonly FieldError[], detail?: string): Problem {
  return problem(400, ProblemType.invalidRequest, {
    detail: detail ?? summary(errors, 'the request does not have the required shape'),
    errors,
  });
}

/** 422 with field errors: unknown template, variables contract, deadline. */
export function unprocessable(errors: readonly FieldError[]): Problem {
  return problem(422, ProblemType.unprocessable, {
    detail: summary(errors, 'the notice is well-formed but cannot be accepted'),
    errors,
  });
}

export function notFound(detail: string): Problem {
  return problem(404, ProblemType.notFound, { detail });
}

export function internalError(): Problem {
  return problem(500, ProblemType.internal, {
    detail: 'the request could not be completed; it is safe to retry',
  });
}

/**
 * Seconds a throttled caller is told to wait (Retry-After). DynamoDB's burst allowance and its
 * partition splits clear a short burst in seconds; auto scaling raises capacity within minutes,
 * and a caller refused again backs off further on its own.
 */
export const CAPACITY_RETRY_AFTER_SECONDS = 10;

export function capacityExceeded(): Problem {
  return problem(503, ProblemType.capacityExceeded, {
    detail: `the ledger is over its capacity for a moment; send the same request again after ${CAPACITY_RETRY_AFTER_SECONDS} s`,
  });
}

function summary(errors: readonly FieldError[], fallback: string): string {
  if (errors.length === 0) return fallback;
  const paths = [...new Set(errors.map((e) => e.path || '(body)'))].slice(0, 5);
  return `${errors.length} problem${errors.length === 1 ? '' : 's'} with: ${paths.join(', ')}`;
}

export const JSON_CONTENT_TYPE = 'application/json';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Responses are never cached: they describe ledger state that changes. */
const BASE_HEADERS = { 'cache-control': 'no-store' } as const;

export function problemResponse(
  body: Problem,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: body.status,
    headers: { ...BASE_HEADERS, 'content-type': PROBLEM_CONTENT_TYPE, ...headers },
    body: JSON.stringify(body),
  };
}

export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode,
    headers: { ...BASE_HEADERS, 'content-type': JSON_CONTENT_TYPE, ...headers },
    body: JSON.stringify(body),
  };
}

export function emptyResponse(
  statusCode: number,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { ...BASE_HEADERS, ...headers } };
}
