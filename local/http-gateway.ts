/**
 * Plays API Gateway (HTTP API, payload format 2.0, `$default` route) in front of the
 * http-api handler: one Node request in, one `APIGatewayProxyEventV2` to the handler, its
 * result written back the way API Gateway would write it.
 *
 * Limits, as API Gateway documents them for HTTP APIs (quotas page): 30 s integration timeout
 * (503 here; API Gateway answers 503 `Service Unavailable` too), 10 240 bytes of request line
 * and headers (431 here). What API Gateway does with a slow client (headers or body trickling,
 * a body shorter than its Content-Length) is not documented; this gateway gives headers 10 s,
 * a body 10 s between chunks and 30 s in all, then answers 408 and closes the connection
 * without calling the handler, so a slow or lying client costs nothing. All configurable
 * (`HttpGatewayOptions`), for tests; the body limit stays at 1 MiB (the handler's own 256 KiB
 * limit answers first for anything it reads).
 *
 * Never logs paths, query strings or bodies: suppression routes carry a destination in the
 * path, and bodies carry destinations and template variables.
 *
 * The caller: where API Gateway checks a SigV4 signature and passes the signer as
 * `requestContext.authorizer.iam`, this gateway reads the principal ARN from the
 * `x-notice-ledger-caller` header and passes the same shape (./callers.ts); a value that names no
 * IAM principal is refused 403, as a bad signature is. Without the header the request carries no
 * IAM context (the http function takes it for the local operator).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  APIGatewayEventRequestContextIAMAuthorizer,
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { CALLER_HEADER, namedCaller } from './callers.ts';
import { LOCAL_ACCOUNT_ID, lambdaContext } from './lambda-context.ts';

export type HttpApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyResultV2 | undefined | null>;

export interface HttpGatewayOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** Loaded on the first request, so a handler module that fails to load answers 503, not a crash. */
  readonly loadHandler: () => Promise<HttpApiHandler>;
  readonly log: (line: string) => void;
  readonly region: string;
  /** @default 1 MiB */
  readonly maxBodyBytes?: number;
  /** API Gateway gives up on an integration after 30 s and answers 503. @default 30_000 */
  readonly integrationTimeoutMs?: number;
  /** Request line and headers must arrive within this (Node answers 408). @default 10_000 */
  readonly headersTimeoutMs?: number;
  /** The body must keep coming: at most this long between chunks (408). @default 10_000 */
  readonly bodyIdleTimeoutMs?: number;
  /** The whole body must arrive within this, counted from the end of the headers (408). @default 30_000 */
  readonly bodyTimeoutMs?: number;
  /** Request line plus headers, as API Gateway's quota (Node answers 431). @default 10_240 */
  readonly maxHeaderBytes?: number;
  /** @default 'notice-ledger-http-api' */
  readonly functionName?: string;
}

export interface HttpGateway {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Until called, every request is answered 503: the services behind the handler are not up yet. */
  open(): void;
  /** Stops accepting, lets requests in flight finish (at most `graceMs`), then drops the rest. */
  close(graceMs: number): Promise<void>;
}

const MiB = 1024 * 1024;
const PROBLEM_JSON = 'application/problem+json';
/** After a 413 we read (and drop) at most this much more before cutting the connection. */
const DRAIN_LIMIT_BYTES = 8 * MiB;
const DRAIN_TIMEOUT_MS = 2_000;

class BodyTooLargeError extends Error {}
class BodyTimeoutError extends Error {}

/**
 * Media types API Gateway (HTTP API, payload 2.0) passes to Lambda as a string; every other
 * content type, and none, arrives base64-encoded with `isBase64Encoded: true`. AWS's docs say
 * only "binary bodies are base64-encoded"; this split is the one measured against AWS and
 * reported in ministackorg/ministack#766 (form bodies included on the base64 side).
 */
const TEXT_MEDIA_TYPES = new Set(['application/json', 'application/xml', 'application/javascript']);

export function isTextMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type.startsWith('text/') || TEXT_MEDIA_TYPES.has(type);
}

/**
 * Lossy on purpose: a JSON event can only carry a string, so invalid UTF-8 in a text body
 * reaches the function as U+FFFD, as a JVM or Go front end decoding with replacement leaves it.
 * (Whether AWS does exactly this is not documented; the handler refuses both this and the
 * base64 form: lambdas/edge/http-body.ts.)
 */
const lossyUtf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

export async function startHttpGateway(options: HttpGatewayOptions): Promise<HttpGateway> {
  const maxBodyBytes = options.maxBodyBytes ?? MiB;
  const integrationTimeoutMs = options.integrationTimeoutMs ?? 30_000;
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  const bodyTimeouts = {
    idleMs: options.bodyIdleTimeoutMs ?? 10_000,
    totalMs: options.bodyTimeoutMs ?? 30_000,
  };
  const functionName = options.functionName ?? 'notice-ledger-http-api';
  let isOpen = false;
  let handlerPromise: Promise<HttpApiHandler> | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;

  function loadHandler(): Promise<HttpApiHandler> {
    handlerPromise ??= options.loadHandler().catch((error: unknown) => {
      // Retry on the next request: the module may be mid-edit on a developer's machine.
      handlerPromise = undefined;
      throw error;
    });
    return handlerPromise;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isOpen) {
      req.resume();
      return writeProblem(res, 503, 'Service Unavailable', 'the local stack is still starting');
    }
    const receivedAt = Date.now();
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes, bodyTimeouts);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return rejectTooLarge(req, res, maxBodyBytes);
      if (error instanceof BodyTimeoutError) return rejectSlowBody(req, res);
      // The client went away mid-body; nobody is left to answer.
      res.destroy();
      return;
    }

    let handler: HttpApiHandler;
    try {
      handler = await loadHandler();
    } catch (error) {
      options.log(`http-api handler could not be loaded: ${describeError(error)}`);
      return writeProblem(res, 503, 'Service Unavailable', 'the http-api handler could not be loaded');
    }

    const caller = namedCaller(req.headersDistinct[CALLER_HEADER]);
    if ('refused' in caller) return writeProblem(res, 403, 'Forbidden', caller.refused);
    const event = toApiGatewayEvent(req, body, receivedAt, caller.authorizer);
    const context = lambdaContext(functionName, integrationTimeoutMs, options.region);
    const timeout = new AbortController();
    let result: APIGatewayProxyResultV2 | undefined | null;
    try {
      const outcome = await Promise.race([
        handler(event, context).then((value) => ({ value })),
        sleep(integrationTimeoutMs, undefined, { signal: timeout.signal }).then(() => undefined),
      ]);
      if (outcome === undefined) {
        options.log(`http-api handler did not answer within ${integrationTimeoutMs} ms`);
        return writeProblem(res, 503, 'Service Unavailable', 'the integration timed out');
      }
      result = outcome.value;
    } catch (error) {
      // API Gateway answers a bare 500 when the function fails; problem+json keeps the
      // project's error contract for clients of the local stack.
      options.log(`http-api handler threw: ${describeError(error)}`);
      return writeProblem(res, 500, 'Internal Server Error', 'the request could not be processed');
    } finally {
      timeout.abort();
    }
    writeResult(res, result);
  }

  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      // Node's own whole-request limit, a backstop behind the body timers of `readBody`.
      requestTimeout: headersTimeoutMs + bodyTimeouts.totalMs + 1_000,
      // How often Node checks those two; its default (30 s) would let a stalled header sit that long.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
      maxHeaderSize: options.maxHeaderBytes ?? 10_240,
    },
    (req, res) => {
      inFlight++;
      res.once('close', () => {
        inFlight--;
        if (inFlight === 0) drained?.();
      });
      // A client that hangs up must not crash the process through an unhandled stream error.
      req.on('error', () => {});
      res.on('error', () => {});
      handle(req, res).catch((error: unknown) => {
        options.log(`local gateway failed to answer: ${describeError(error)}`);
        if (!res.headersSent) writeProblem(res, 500, 'Internal Server Error', 'the gateway failed');
        else res.destroy();
      });
    },
  );
  // Requests Node cannot parse (an unknown method, bad header bytes), headers too slow or too
  // large: answered here, before any handler, as problem+json like every other error.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, title, detail] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request headers did not arrive in time']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'the request line and headers exceed the limit']
          : [400, 'Bad Request', 'the request is not valid HTTP/1.1'];
    const body = JSON.stringify({
      type: 'about:blank',
      title,
      status,
      detail,
      ...(status === 400 ? { errors: [{ path: '', code: 'malformed_request', message: detail }] } : {}),
    });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\ncontent-type: ${PROBLEM_JSON}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  // Matches API Gateway's idle timeout closely enough, and keeps shutdown from waiting on
  // sockets a client forgot.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    open() {
      isOpen = true;
    },
    close(graceMs) {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (inFlight > 0) {
          const allDone = new Promise<void>((resolve) => {
            drained = resolve;
          });
          await Promise.race([allDone, sleep(graceMs)]);
        }
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

/**
 * Reads the whole body, refusing (without buffering further) once it passes `limit`, or once it
 * stalls for `idleMs` or takes longer than `totalMs` in all.
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  timeouts: { readonly idleMs: number; readonly totalMs: number },
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timedOut = () => {
      cleanup();
      chunks.length = 0;
      reject(new BodyTimeoutError());
    };
    const total = setTimeout(timedOut, timeouts.totalMs);
    let idle = setTimeout(timedOut, timeouts.idleMs);
    const onData = (chunk: Buffer) => {
      clearTimeout(idle);
      idle = setTimeout(timedOut, timeouts.idleMs);
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onAbort = () => {
      cleanup();
      reject(new Error('request aborted'));
    };
    const cleanup = () => {
      clearTimeout(total);
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAbort);
      req.off('close', onClose);
    };
    const onClose = () => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAbort);
    req.on('close', onClose);
  });
}

/**
 * Answers 413 and closes the connection. The rest of the upload is read and dropped (up to a
 * cap, for a short while) because a client still writing when the socket closes usually sees
 * a reset instead of our answer.
 */
function rejectTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  let drainedBytes = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DRAIN_TIMEOUT_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drainedBytes += chunk.length;
    if (drainedBytes > DRAIN_LIMIT_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.resume();
  writeProblem(res, 413, 'Content Too Large', `the request body exceeds ${limit} bytes`, {
    connection: 'close',
  });
}

/**
 * Answers 408 and closes: the client stopped sending before the body was complete (a body
 * shorter than its Content-Length, a trickle). Nothing was passed to the handler.
 */
function rejectSlowBody(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => req.socket.destroy());
  writeProblem(res, 408, 'Request Timeout', 'the request body did not arrive in time', {
    connection: 'close',
  });
}

function writeProblem(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  res.writeHead(status, {
    'content-type': PROBLEM_JSON,
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** API Gateway's `requestContext.time`: `12/Mar/2020:19:03:58 +0000`. */
export function apiGatewayTime(epochMs: number): string {
  const d = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
  );
}

/**
 * The payload format 2.0 event: header names lower-cased and repeats joined with commas,
 * cookies moved out of the headers into `cookies`, repeated query keys joined with commas,
 * `rawPath` as received (still percent-encoded), body as a string for text media types and
 * base64 for the rest (see `isTextMediaType`); with `authorizer`, the caller API Gateway's IAM
 * authorisation would name (the caller header itself is not passed on).
 */
export function toApiGatewayEvent(
  req: IncomingMessage,
  body: Buffer,
  receivedAt: number,
  authorizer?: APIGatewayEventRequestContextIAMAuthorizer,
): APIGatewayProxyEventV2 {
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : target.slice(queryAt + 1);

  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values === undefined || name === CALLER_HEADER) continue;
    if (name === 'cookie') {
      cookies = values.flatMap((value) =>
        value
          .split(';')
          .map((part) => part.trim())
          .filter((part) => part.length > 0),
      );
      continue;
    }
    headers[name] = values.join(',');
  }

  let queryStringParameters: Record<string, string> | undefined;
  if (rawQueryString !== '') {
    queryStringParameters = {};
    for (const [key, value] of new URLSearchParams(rawQueryString)) {
      const previous = queryStringParameters[key];
      queryStringParameters[key] = previous === undefined ? value : `${previous},${value}`;
    }
  }

  const text = isTextMediaType(headers['content-type']);
  const requestId = randomUUID();
  const domainName = headers.host ?? '127.0.0.1';
  const remote = req.socket.remoteAddress ?? '127.0.0.1';
  const method = (req.method ?? 'GET').toUpperCase();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    ...(cookies ? { cookies } : {}),
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: 'local',
      ...(authorizer ? { authorizer } : {}),
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method,
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: remote.startsWith('::ffff:') ? remote.slice('::ffff:'.length) : remote,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: apiGatewayTime(receivedAt),
      timeEpoch: receivedAt,
    },
    // API Gateway leaves `body` out when the request has none.
    ...(body.length > 0 ? { body: text ? lossyUtf8.decode(body) : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

function isStructured(result: unknown): result is APIGatewayProxyStructuredResultV2 {
  return (
    typeof result === 'object' &&
    result !== null &&
    typeof (result as { statusCode?: unknown }).statusCode === 'number'
  );
}

/**
 * Writes the handler's answer as API Gateway does: a structured result as given (cookies
 * become `set-cookie` headers), anything else as a 200 JSON body.
 */
export function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2 | undefined | null): void {
  if (!isStructured(result)) {
    const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {}))
    headers[name.toLowerCase()] = String(value);
  if (result.cookies && result.cookies.length > 0) headers['set-cookie'] = [...result.cookies];
  const payload =
    result.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  headers['content-length'] = String(payload.length);
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(payload);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}
