import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  internalError,
  jsonResponse,
  notFound,
  ProblemType,
  problem,
  problemResponse,
} from '../../edge/problem.ts';
import type { Runtime } from '../../wiring.ts';
import { logger } from '../observability.ts';
import { getNoticeRoute, submitBatchRoute, submitNoticeRoute } from './notices.ts';
import { twilioStatusRoute } from './provider-events.ts';
import { deleteSuppressionRoute, getSuppressionRoute, putSuppressionRoute } from './suppressions.ts';

export interface HttpRequest {
  readonly event: APIGatewayProxyEventV2;
  /** Path parameters, percent-decoded (a literal `+` stays a plus). */
  readonly params: Readonly<Record<string, string>>;
}

/** What a route returns; `noticeId` and `log` enrich the one request log line. */
export interface RouteReply {
  readonly response: APIGatewayProxyStructuredResultV2;
  readonly noticeId?: string | undefined;
  /** Ids, codes and counts only: never bodies, destinations or variables. */
  readonly log?: Readonly<Record<string, unknown>>;
}

/** The part of the process runtime the HTTP routes use; tests build just this. */
export type HttpRuntime = Pick<Runtime, 'deps' | 'twilio' | 'publicBaseUrl'>;

export type RouteHandler = (request: HttpRequest, runtime: HttpRuntime) => Promise<RouteReply>;

type Endpoint = (request: HttpRequest, runtime: () => Promise<HttpRuntime>) => Promise<RouteReply>;

interface Route {
  /** Logged instead of the raw path, which can contain a destination. */
  readonly template: string;
  readonly segments: readonly string[];
  readonly methods: Readonly<Record<string, Endpoint>>;
}

/** Builds the runtime (config, secrets, clients) only for routes that need it. */
const withRuntime =
  (handler: RouteHandler): Endpoint =>
  async (request, runtime) =>
    handler(request, await runtime());

/** Liveness only: answers without the runtime, so it says nothing about DynamoDB or secrets. */
const health: Endpoint = async () => ({ response: jsonResponse(200, { status: 'ok' }) });

function route(template: string, methods: Record<string, Endpoint>): Route {
  return { template, segments: template.split('/'), methods };
}

/** Order matters where a literal and a parameter compete: `batch` before `{noticeId}`. */
const ROUTES: readonly Route[] = [
  route('/v1/health', { GET: health }),
  route('/v1/notices', { POST: withRuntime(submitNoticeRoute) }),
  route('/v1/notices/batch', { POST: withRuntime(submitBatchRoute) }),
  route('/v1/notices/{noticeId}', { GET: withRuntime(getNoticeRoute) }),
  route('/v1/suppressions/{channel}/{destination}', {
    GET: withRuntime(getSuppressionRoute),
    PUT: withRuntime(putSuppressionRoute),
    DELETE: withRuntime(deleteSuppressionRoute),
  }),
  route('/v1/provider-events/twilio', { POST: withRuntime(twilioStatusRoute) }),
];

/**
 * `decodeURIComponent`, not form decoding: `%2B` and a literal `+` both mean a plus. API Gateway
 * HTTP APIs hand over `rawPath` already decoded, local adapters may not; decoding a decoded
 * phone number or address is harmless. A malformed escape is left as sent and fails validation.
 */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function match(path: string): { route: Route; params: Record<string, string> } | undefined {
  const segments = path.split('/');
  for (const candidate of ROUTES) {
    if (candidate.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matched = candidate.segments.every((part, i) => {
      const actual = segments[i] as string;
      if (part.startsWith('{') && part.endsWith('}')) {
        if (actual === '') return false;
        params[part.slice(1, -1)] = decodeSegment(actual);
        return true;
      }
      return part === actual;
    });
    if (matched) return { route: candidate, params };
  }
  return undefined;
}

/** Behind a named stage the path starts with `/{stage}`; behind `$default` (and locally) it does not. */
function routedPath(event: APIGatewayProxyEventV2): string {
  const path = event.rawPath || '/';
  const stage = event.requestContext?.stage;
  if (stage && stage !== '$default' && path.startsWith(`/${stage}/`)) return path.slice(stage.length + 1);
  return path;
}

function methodNotAllowed(route: Route): RouteReply {
  const allow = Object.keys(route.methods).join(', ');
  return {
    response: problemResponse(
      problem(405, ProblemType.methodNotAllowed, { detail: `this resource supports ${allow}` }),
      { allow },
    ),
  };
}

/**
 * The HTTP API as one function: route on method + raw path (so it works behind a `$default`
 * route and behind per-route integrations alike), run the route, map any unexpected failure to
 * a generic 500, and log exactly one line per request (route template, never the raw path).
 */
export function createHttpApi(runtime: () => Promise<HttpRuntime>) {
  return async function httpApi(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
    const started = performance.now();
    const method = (event.requestContext?.http?.method ?? '').toUpperCase();
    const found = match(routedPath(event));
    const route = found ? `${method} ${found.route.template}` : 'unmatched';
    let reply: RouteReply;
    try {
      const endpoint = found?.route.methods[method];
      if (!found) reply = { response: problemResponse(notFound('no such resource')) };
      else if (!endpoint) reply = methodNotAllowed(found.route);
      else reply = await endpoint({ event, params: found.params }, runtime);
    } catch (error) {
      // Infrastructure failures (ledger, KMS, secrets) land here; input never should. The client
      // gets a generic problem; the log gets the error's name and message, which for these
      // errors name resources and codes, not personal data.
      logger.error('http request failed', {
        method,
        route,
        errorName: error instanceof Error ? error.name : typeof error,
        errorMessage: error instanceof Error ? error.message : undefined,
      });
      reply = { response: problemResponse(internalError()) };
    }
    logger.info('http request', {
      method,
      route,
      status: reply.response.statusCode ?? 200,
      durationMs: Math.round(performance.now() - started),
      requestId: event.requestContext?.requestId,
      ...(reply.noticeId ? { noticeId: reply.noticeId } : {}),
      ...reply.log,
    });
    return reply.response;
  };
}
