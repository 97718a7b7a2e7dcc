import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { type Problem, ProblemType, problem } from './problem.ts';

/**
 * Guards every request body passes before any schema sees it. Each returns a problem instead
 * of throwing, so that no input can turn into a 5xx.
 *
 * Limits (the README's API section should repeat them):
 *  - JSON bodies up to 256 KiB (DESIGN §6) → 413 beyond; form bodies (provider callbacks) 64 KiB;
 *  - JSON nesting up to 32 levels → 400 beyond (checked on the text before parsing, so deep
 *    input cannot exhaust the stack in a later recursive walk);
 *  - UTF-8 only → 400 for invalid byte sequences (415 for a declared charset other than utf-8).
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

function malformed(detail: string): Problem {
  return problem(400, ProblemType.malformedBody, { detail });
}

/** Raw body bytes, undoing API Gateway's base64 wrapping of non-text payloads. */
function bodyBytes(event: APIGatewayProxyEventV2): Buffer | undefined {
  if (event.body === undefined || event.body === null) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
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
 * Reads a JSON body: content type → size → UTF-8 → depth → parse. With `optional`, an absent
 * or empty body is `undefined` (and needs no content type).
 *
 * A parse error's own message is never used: V8 quotes the input around the error position.
 */
export function readJsonBody(
  event: APIGatewayProxyEventV2,
  options: { optional?: boolean; maxBytes?: number } = {},
): BodyResult<unknown> {
  const maxBytes = options.maxBytes ?? BodyLimits.jsonMaxBytes;
  const bytes = bodyBytes(event);
  if (!bytes || bytes.length === 0) {
    if (options.optional) return { ok: true, value: undefined };
    if (!mediaTypeMatches(header(event, 'content-type'), 'application/json')) {
      return { ok: false, problem: unsupportedMediaType('application/json') };
    }
    return { ok: false, problem: malformed('a JSON body is required') };
  }
  if (!mediaTypeMatches(header(event, 'content-type'), 'application/json')) {
    return { ok: false, problem: unsupportedMediaType('application/json') };
  }
  if (bytes.length > maxBytes) return { ok: false, problem: tooLarge(maxBytes) };
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, problem: malformed('the body is not valid UTF-8') };
  if (jsonDepthExceeds(text, BodyLimits.jsonMaxDepth)) {
    return {
      ok: false,
      problem: malformed(`JSON nesting must not exceed ${BodyLimits.jsonMaxDepth} levels`),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    return {
      ok: false,
      problem: malformed(`the body is not valid JSON${position ? ` (error at character ${position})` : ''}`),
    };
  }
}

/** Reads an `application/x-www-form-urlencoded` body (provider callbacks) into a flat record. */
export function readFormBody(
  event: APIGatewayProxyEventV2,
  maxBytes: number = BodyLimits.formMaxBytes,
): BodyResult<Record<string, string>> {
  if (!mediaTypeMatches(header(event, 'content-type'), 'application/x-www-form-urlencoded')) {
    return { ok: false, problem: unsupportedMediaType('application/x-www-form-urlencoded') };
  }
  const bytes = bodyBytes(event) ?? Buffer.alloc(0);
  if (bytes.length > maxBytes) return { ok: false, problem: tooLarge(maxBytes) };
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, problem: malformed('the body is not valid UTF-8') };
  // URLSearchParams decodes `+` as a space, which is right for form encoding (not for paths).
  return { ok: true, value: Object.fromEntries(new URLSearchParams(text)) };
}

/**
 * Reads a text body of the given media type (provider webhooks), checked like the others:
 * content type → size → UTF-8. The raw text is returned because signatures cover it as sent.
 */
export function readTextBody(
  event: APIGatewayProxyEventV2,
  mediaType: string,
  maxBytes: number = BodyLimits.formMaxBytes,
): BodyResult<string> {
  if (!mediaTypeMatches(header(event, 'content-type'), mediaType)) {
    return { ok: false, problem: unsupportedMediaType(mediaType) };
  }
  const bytes = bodyBytes(event) ?? Buffer.alloc(0);
  if (bytes.length > maxBytes) return { ok: false, problem: tooLarge(maxBytes) };
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, problem: malformed('the body is not valid UTF-8') };
  return { ok: true, value: text };
}
