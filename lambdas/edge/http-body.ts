import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type Problem, ProblemType, problem } from './problem.ts';

/**
 * Guards every request body passes before any schema sees it. Each returns a problem instead
 * of throwing, so that no input can turn into a 5xx.
 *
 * Limits (docs/api.md "Errors and limits" states them):
 *  - JSON bodies up to 256 KiB (docs/architecture.md §6) → 413 beyond; form bodies (provider callbacks) 64 KiB;
 *  - JSON nesting up to 32 levels → 400 beyond (checked on the text before parsing, so deep
 *    input cannot exhaust the stack in a later recursive walk);
 *  - UTF-8 only → 400 `invalid_utf8` (415 for a declared charset other than utf-8), checked on
 *    the bytes wherever the body came from: API Gateway hands a text content type's body over as
 *    a string and anything else base64-encoded (`isBase64Encoded`), and the local gateway does
 *    the same (local/http-gateway.ts). Bytes are decoded with a fatal decoder. A string body
 *    cannot carry invalid bytes, only their traces: a decoder on the way replaces them with
 *    U+FFFD, and a lone surrogate cannot have come from UTF-8 at all. So U+FFFD and lone
 *    surrogates are refused too, raw or as JSON escapes (`\ufffd`, `\ud800`): the handler
 *    cannot tell a replaced byte from a sent U+FFFD, and neither belongs in a notice. A byte
 *    order mark is not stripped (RFC 8259: senders must not add one), so it fails as JSON;
 *  - base64 bodies must be canonical base64 → 400 `invalid_base64`.
 * Every 400 names what is wrong in `errors` (`path` `''` for the body as a whole).
 */
export const BodyLimits = {
  jsonMaxBytes: 256 * 1024,
  formMaxBytes: 64 * 1024,
  jsonMaxDepth: 32,
} as const;

export type BodyResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: Problem };

/** API Gateway v2 lower-cases header names, but a test or local adapter might not. */
export function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const headers = event.headers ?? {};
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/**
 * `application/json`, optionally with `charset=utf-8` (any case, optionally quoted). Other
 * parameters are tolerated; another charset is refused, since we decode UTF-8 only.
 */
function mediaTypeMatches(contentType: string | undefined, expected: string): boolean {
  if (contentType === undefined) return false;
  const [type = '', ...params] = contentType.split(';').map((part) => part.trim().toLowerCase());
  if (type !== expected) return false;
  for (const param of params) {
    const [name, value = ''] = param.split('=').map((part) => part.trim());
    if (name === 'charset' && value.replace(/^"|"$/g, '') !== 'utf-8') return false;
  }
  return true;
}

function unsupportedMediaType(expected: string): Problem {
  return problem(415, ProblemType.unsupportedMediaType, {
    detail: `the body must be sent as ${expected} (UTF-8)`,
  });
}

function tooLarge(maxBytes: number): Problem {
  return problem(413, ProblemType.payloadTooLarge, {
    detail: `the body must be at most ${maxBytes} bytes`,
  });
}

function malformed(detail: string, code: string, path = ''): Problem {
  return problem(400, ProblemType.malformedBody, { detail, errors: [{ path, code, message: detail }] });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** U+FFFD, or (with the `u` flag, which pairs surrogates) a surrogate standing alone. */
const LOST_TEXT = /[\uFFFD\p{Cs}]/u;
const NOT_UTF8 = 'the body is not valid UTF-8 (U+FFFD and lone surrogates count as invalid)';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body as text, from whichever form it arrived in; `undefined` when there is none.
 * Size is checked on the bytes before any decoding.
 */
function bodyText(event: APIGatewayProxyEventV2, maxBytes: number): BodyResult<string | undefined> {
  const body = event.body;
  if (body === undefined || body === null || body === '') return { ok: true, value: undefined };
  let text: string;
  if (event.isBase64Encoded) {
    if (body.length % 4 !== 0 || !BASE64.test(body)) {
      return { ok: false, problem: malformed('the body is not valid base64', 'invalid_base64') };
    }
    const bytes = Buffer.from(body, 'base64');
    if (bytes.length > maxBytes) return { ok: false, problem: tooLarge(maxBytes) };
    try {
      text = utf8.decode(bytes);
    } catch {
      return { ok: false, problem: malformed(NOT_UTF8, 'invalid_utf8') };
    }
  } else {
    if (Buffer.byteLength(body, 'utf8') > maxBytes) return { ok: false, problem: tooLarge(maxBytes) };
    text = body;
  }
  if (LOST_TEXT.test(text)) return { ok: false, problem: malformed(NOT_UTF8, 'invalid_utf8') };
  return { ok: true, value: text };
}

/** A field name safe to echo as a path segment (it is the client's own key). */
const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * The first string (value or key) in parsed JSON that a `\u` escape made not-text (U+FFFD, a
 * lone surrogate): its dotted path, cut before the first key that is not safe to echo.
 */
function escapedLostText(value: unknown, path: readonly string[] = []): string | undefined {
  if (typeof value === 'string') return LOST_TEXT.test(value) ? path.join('.') : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    if (LOST_TEXT.test(key)) return path.join('.');
    const childPath = Array.isArray(value) || SAFE_KEY.test(key) ? [...path, key] : path;
    const found = escapedLostText(child, childPath);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Depth of the deepest array/object in JSON text; stops counting once past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Reads a JSON body: content type → size → UTF-8 → depth → parse → escapes. With `optional`,
 * an absent or empty body is `undefined` (and needs no content type).
 *
 * A parse error's own message is never used: V8 quotes the input around the error position.
 */
export function readJsonBody(
  event: APIGatewayProxyEventV2,
  options: { optional?: boolean; maxBytes?: number } = {},
): BodyResult<unknown> {
  const maxBytes = options.maxBytes ?? BodyLimits.jsonMaxBytes;
  const present = event.body !== undefined && event.body !== null && event.body !== '';
  if (!present && options.optional) return { ok: true, value: undefined };
  if (!mediaTypeMatches(header(event, 'content-type'), 'application/json')) {
    return { ok: false, problem: unsupportedMediaType('application/json') };
  }
  const decoded = bodyText(event, maxBytes);
  if (!decoded.ok) return decoded;
  const text = decoded.value;
  if (text === undefined || text === '') {
    if (options.optional) return { ok: true, value: undefined };
    return { ok: false, problem: malformed('a JSON body is required', 'required') };
  }
  if (jsonDepthExceeds(text, BodyLimits.jsonMaxDepth)) {
    return {
      ok: false,
      problem: malformed(`JSON nesting must not exceed ${BodyLimits.jsonMaxDepth} levels`, 'too_deep'),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    return {
      ok: false,
      problem: malformed(
        `the body is not valid JSON${position ? ` (error at character ${position})` : ''}`,
        'not_json',
      ),
    };
  }
  const lost = escapedLostText(value);
  if (lost !== undefined) return { ok: false, problem: malformed(NOT_UTF8, 'invalid_utf8', lost) };
  return { ok: true, value };
}

/** Reads an `application/x-www-form-urlencoded` body (provider callbacks) into a flat record. */
export function readFormBody(
  event: APIGatewayProxyEventV2,
  maxBytes: number = BodyLimits.formMaxBytes,
): BodyResult<Record<string, string>> {
  if (!mediaTypeMatches(header(event, 'content-type'), 'application/x-www-form-urlencoded')) {
    return { ok: false, problem: unsupportedMediaType('application/x-www-form-urlencoded') };
  }
  const decoded = bodyText(event, maxBytes);
  if (!decoded.ok) return decoded;
  // URLSearchParams decodes `+` as a space, which is right for form encoding (not for paths).
  return { ok: true, value: Object.fromEntries(new URLSearchParams(decoded.value ?? '')) };
}

/**
 * Reads a text body of the given media type (provider webhooks), checked like the others:
 * content type → size → UTF-8 (on whichever form API Gateway delivered). The raw text is
 * returned because signatures cover it as sent.
 */
export function readTextBody(
  event: APIGatewayProxyEventV2,
  mediaType: string,
  maxBytes: number = BodyLimits.formMaxBytes,
): BodyResult<string> {
  if (!mediaTypeMatches(header(event, 'content-type'), mediaType)) {
    return { ok: false, problem: unsupportedMediaType(mediaType) };
  }
  const decoded = bodyText(event, maxBytes);
  if (!decoded.ok) return decoded;
  return { ok: true, value: decoded.value ?? '' };
}
