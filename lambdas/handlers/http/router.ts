import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Metric } from '../../contract/metrics.ts';
import {
  findRoute,
  type HttpMethod,
  ROUTES,
  type RouteFunction,
  type RouteSpec,
  routeKey,
} from '../../contract/routes.ts';
import type { Caller } from '../../domain/caller.ts';
import { type CallerDirectory, identifyCaller } from '../../edge/caller.ts';
import { jsonResponse, notFound, ProblemType, problem, problemResponse } from '../../edge/problem.ts';
import { logger, metrics } from '../../wiring/observability.ts';
import { getNoticeRoute, submitBatchRoute, submitNoticeRoute } from './notices.ts';
import { cancelNoticeRoute, listNoticesRoute, openApiRoute, resolveChannelRoute } from './operators.ts';
import {
  type Endpoint,
  type HttpRuntime,
  loggedFailureAnswer,
  type RouteReply,
  withRuntime,
} from './route.ts';
import { deleteSuppressionRoute, getSuppressionRoute, putSuppressionRoute } from './suppressions.ts';

/** Liveness only: answers without the runtime, so it says nothing about DynamoDB or secrets. */
const health: Endpoint<HttpRuntime> = async () => ({ response: jsonResponse(200, { status: 'ok' }) });

/** The API's OpenAPI document needs no runtime either (no ledger, no secrets). */
const openApi: Endpoint<HttpRuntime> = async () => openApiRoute();

/** The http function's endpoints, by route key (lambdas/contract/routes.ts names the routes). */
export const HTTP_ENDPOINTS: Readonly<Record<string, Endpoint<HttpRuntime>>> = {
  'GET /v1/health': health,
  'GET /v1/openapi.json': openApi,
  'POST /v1/notices': withRuntime(submitNoticeRoute),
  'GET /v1/notices': withRuntime(listNoticesRoute),
  'POST /v1/notices/batch': withRuntime(submitBatchRoute),
  'GET /v1/notices/{noticeId}': withRuntime(getNoticeRoute),
  'POST /v1/notices/{noticeId}/cancel': withRuntime(cancelNoticeRoute),
  'POST /v1/notices/{noticeId}/channels/{channel}/resolution': withRuntime(resolveChannelRoute),
  'GET /v1/suppressions/{channel}/{destination}': withRuntime(getSuppressionRoute),
  'PUT /v1/suppressions/{channel}/{destination}': withRuntime(putSuppressionRoute),
  'DELETE /v1/suppressions/{channel}/{destination}': withRuntime(deleteSuppressionRoute),
};

/** A method of a route: its endpoint, and the contract's entry (auth, roles) it serves. */
interface Bound<R> {
  readonly endpoint: Endpoint<R>;
  readonly spec: RouteSpec;
}

interface Route<R> {
  /** Logged instead of the raw path, which can contain a destination. */
  readonly template: string;
  readonly methods: Readonly<Record<string, Bound<R>>>;
}

/**
 * The function's routes from the contract, each method bound to its endpoint. A contract route
 * without an endpoint, or an endpoint for no contract route, is a programming error caught when
 * the module loads (and by test/infra/routes.test.ts).
 */
export function bindRoutes<R>(
  fn: RouteFunction,
  endpoints: Readonly<Record<string, Endpoint<R>>>,
): readonly Route<R>[] {
  const routes = ROUTES.filter((r) => r.function === fn);
  const keys = new Set(routes.flatMap((r) => r.methods.map((m) => routeKey(m, r.path))));
  const stray = Object.keys(endpoints).filter((k) => !keys.has(k));
  const missing = [...keys].filter((k) => !(k in endpoints));
  if (stray.length > 0 || missing.length > 0) {
    throw new Error(
      `routes of ${fn} do not match the contract: missing ${missing.join(', ')}; stray ${stray.join(', ')}`,
    );
  }
  // One route per path, in the contract's order: a path listed twice (methods for different
  // roles) is one resource with all of its methods.
  const byPath = new Map<string, Record<string, Bound<R>>>();
  for (const r of routes) {
    const methods = byPath.get(r.path) ?? {};
    for (const m of r.methods as readonly HttpMethod[])
      methods[m] = { endpoint: endpoints[routeKey(m, r.path)] as Endpoint<R>, spec: r };
    byPath.set(r.path, methods);
  }
  return [...byPath].map(([template, methods]) => ({ template, methods }));
}

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

function match<R>(
  routes: readonly Route<R>[],
  path: string,
): { route: Route<R>; params: Record<string, string> } | undefined {
  const found = findRoute(
    path,
    routes.map((route) => ({ path: route.template, route })),
  );
  if (!found) return undefined;
  const params = Object.fromEntries(Object.entries(found.params).map(([k, v]) => [k, decodeSegment(v)]));
  return { route: found.route.route, params };
}

/** Behind a named stage the path starts with `/{stage}`; behind `$default` (and locally) it does not. */
function routedPath(event: APIGatewayProxyEventV2): string {
  const path = event.rawPath || '/';
  const stage = event.requestContext?.stage;
  if (stage && stage !== '$default' && path.startsWith(`/${stage}/`)) return path.slice(stage.length + 1);
  return path;
}

function methodNotAllowed<R>(route: Route<R>): RouteReply {
  const allow = Object.keys(route.methods).join(', ');
  return {
    response: problemResponse(
      problem(405, ProblemType.methodNotAllowed, { detail: `this resource supports ${allow}` }),
      { allow },
    ),
  };
}

const forbidden = (detail: string, extensions?: Readonly<Record<string, unknown>>): RouteReply => ({
  response: problemResponse(
    problem(403, ProblemType.forbidden, { detail, ...(extensions ? { extensions } : {}) }),
  ),
});

/**
 * Who may call an IAM route (docs/api.md "Callers"): a caller edge/caller.ts identifies, whose
 * role the route names. API Gateway's policies refuse most others first in AWS (each role's
 * managed policy grants only its routes); this check holds wherever a policy grants more, and on
 * the local stack, which has no policies. A provider's route is its module's to authenticate.
 */
function authorize(
  event: APIGatewayProxyEventV2,
  spec: RouteSpec,
  callers: (() => CallerDirectory) | undefined,
): { readonly caller: Caller | undefined } | RouteReply {
  if (spec.auth !== 'iam') return { caller: undefined };
  if (!callers) throw new Error(`an IAM route of ${spec.function} without a caller directory`);
  const identified = identifyCaller(event, callers());
  if (!identified.ok) return forbidden('the request carries no IAM principal this API knows');
  const { caller } = identified;
  if (!spec.roles.includes(caller.role)) {
    return forbidden(`this route is not for the caller's role (${caller.role})`, { role: caller.role });
  }
  return { caller };
}

/**
 * The HTTP API as one function: route on method + raw path (so it works behind a `$default`
 * route and behind per-route integrations alike), check the caller on IAM routes, run the route,
 * map any unexpected failure to a generic 500, and log exactly one line per request (route
 * template and caller role, never the raw path).
 */
export function createRouter<R>(
  fn: RouteFunction,
  endpoints: Readonly<Record<string, Endpoint<R>>>,
  runtime: () => Promise<R>,
  callers?: () => CallerDirectory,
) {
  const routes = bindRoutes(fn, endpoints);
  return async function httpApi(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
    const started = performance.now();
    const method = (event.requestContext?.http?.method ?? '').toUpperCase();
    const found = match(routes, routedPath(event));
    const route = found ? `${method} ${found.route.template}` : 'unmatched';
    let reply: RouteReply;
    let role: string | undefined;
    try {
      const bound = found?.route.methods[method];
      if (!found) reply = { response: problemResponse(notFound('no such resource')) };
      else if (!bound) reply = methodNotAllowed(found.route);
      else {
        const access = authorize(event, bound.spec, callers);
        if ('response' in access) reply = access;
        else {
          role = access.caller?.role;
          reply = await bound.endpoint({ event, params: found.params, caller: access.caller }, runtime);
        }
      }
    } catch (error) {
      // Infrastructure failures (ledger, KMS, secrets) land here; input never should. The client
      // gets a generic problem (or, throttled by DynamoDB, a 503 with Retry-After); the log gets
      // the error's name and message, which for these errors name resources and codes, not
      // personal data.
      const failure = loggedFailureAnswer(error, 'http request', { method, route });
      // Counted: the function succeeds, so no Errors alarm sees this 500 (the handler publishes
      // it). A throttle is not a fault: the table's throttle alarms and the API's 5xx count it.
      if (!failure.throttled) metrics.addMetric(Metric.httpInternalErrors, MetricUnit.Count, 1);
      reply = { response: problemResponse(failure.problem, failure.headers) };
    }
    // The route names the method (`POST /v1/notices`); only an unmatched request lacks one.
    logger.info('http request', {
      ...(found ? {} : { method }),
      route,
      status: reply.response.statusCode ?? 200,
      durationMs: Math.round(performance.now() - started),
      requestId: event.requestContext?.requestId,
      ...(role ? { role } : {}),
      ...(reply.noticeId ? { noticeId: reply.noticeId } : {}),
      ...reply.log,
    });
    return reply.response;
  };
}

/**
 * The http function's API (intake, timelines, operator routes, suppressions, health, OpenAPI);
 * `callers`: the role map (lambdas/wiring/http.ts reads it from the function's settings).
 */
export function createHttpApi(runtime: () => Promise<HttpRuntime>, callers: () => CallerDirectory) {
  return createRouter('http', HTTP_ENDPOINTS, runtime, callers);
}
