/**
 * The HTTP API, written once (plain data): the router of each function takes its routes from
 * here (lambdas/handlers/http/router.ts, lambdas/handlers/provider-events.ts), the CDK builds the
 * API Gateway routes and IAM policies from here (lib/constructs/intake-api.ts), and the local
 * gateway dispatches by it (local/stack.ts). A test checks that every route here is served and
 * deployed, and nothing else (test/infra/routes.test.ts).
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The function behind a route (keys of FUNCTIONS in ./functions.ts). */
export type RouteFunction = 'http' | 'providerEvents';

/**
 * Who calls the API (docs/api.md "Callers"): a `submitter` (a business system) submits notices and
 * reads and cancels the ones its principal submitted; an `operator` acts on every notice; an
 * `auditor` reads everything and acts on nothing. The CDK offers one managed policy per role
 * (lib/constructs/intake-api.ts) and the http function checks the role of each caller against
 * the route's `roles` (lambdas/handlers/http/router.ts), both from the table below.
 */
export const CALLER_ROLES = ['submitter', 'operator', 'auditor'] as const;
export type CallerRole = (typeof CALLER_ROLES)[number];

export interface RouteSpec {
  /** API Gateway path syntax: `{name}` is one path segment. */
  readonly path: string;
  readonly methods: readonly HttpMethod[];
  /**
   * `iam`: SigV4 required (callers are AWS principals with `execute-api:Invoke`);
   * `provider`: open at the gateway because a provider cannot sign with SigV4, so the provider
   * module verifies the request itself (signature, shared secret) and refuses with 401/403.
   */
  readonly auth: 'iam' | 'provider';
  readonly function: RouteFunction;
  /**
   * Who may call it: the managed policy of each role grants it (lib/constructs/intake-api.ts), and
   * the http function refuses any other caller with 403 (lambdas/handlers/http/router.ts).
   */
  readonly roles: readonly CallerRole[];
}

/** The path parameter that names the provider module of an inbound provider route. */
export const PROVIDER_PARAMETER = 'provider';

/**
 * Order matters where a literal and a parameter compete: `batch` before `{noticeId}`. A path may
 * appear twice when its methods are for different roles (`POST /v1/notices` for submitters,
 * `GET /v1/notices`, the list, for operators and auditors); the routers serve both from one entry.
 * Reads are the auditor's, acts are not: an auditor submits, cancels, resolves and suppresses
 * nothing.
 */
export const ROUTES: readonly RouteSpec[] = [
  { path: '/v1/health', methods: ['GET'], auth: 'iam', function: 'http', roles: ['operator', 'auditor'] },
  {
    path: '/v1/openapi.json',
    methods: ['GET'],
    auth: 'iam',
    function: 'http',
    roles: ['submitter', 'operator', 'auditor'],
  },
  { path: '/v1/notices', methods: ['POST'], auth: 'iam', function: 'http', roles: ['submitter', 'operator'] },
  { path: '/v1/notices', methods: ['GET'], auth: 'iam', function: 'http', roles: ['operator', 'auditor'] },
  {
    path: '/v1/notices/batch',
    methods: ['POST'],
    auth: 'iam',
    function: 'http',
    roles: ['submitter', 'operator'],
  },
  {
    path: '/v1/notices/{noticeId}',
    methods: ['GET'],
    auth: 'iam',
    function: 'http',
    roles: ['submitter', 'operator', 'auditor'],
  },
  {
    path: '/v1/notices/{noticeId}/cancel',
    methods: ['POST'],
    auth: 'iam',
    function: 'http',
    roles: ['submitter', 'operator'],
  },
  {
    path: '/v1/notices/{noticeId}/channels/{channel}/resolution',
    methods: ['POST'],
    auth: 'iam',
    function: 'http',
    roles: ['operator'],
  },
  {
    path: '/v1/suppressions/{channel}/{destination}',
    methods: ['GET'],
    auth: 'iam',
    function: 'http',
    roles: ['operator', 'auditor'],
  },
  {
    path: '/v1/suppressions/{channel}/{destination}',
    methods: ['PUT', 'DELETE'],
    auth: 'iam',
    function: 'http',
    roles: ['operator'],
  },
  {
    path: `/v1/provider-events/{${PROVIDER_PARAMETER}}`,
    methods: ['POST'],
    auth: 'provider',
    function: 'providerEvents',
    roles: [],
  },
];

/** `POST /v1/notices`: the key API Gateway and the request log use. */
export function routeKey(method: HttpMethod, path: string): string {
  return `${method} ${path}`;
}

/**
 * The concrete paths a deployment serves for a route: a provider route once per provider with
 * an inbound webhook (`/v1/provider-events/<id>`), any other route as written.
 */
export function deployedPaths(route: RouteSpec, webhookProviders: readonly string[]): string[] {
  const placeholder = `{${PROVIDER_PARAMETER}}`;
  if (!route.path.includes(placeholder)) return [route.path];
  return webhookProviders.map((id) => route.path.replace(placeholder, id));
}

/** Splits a path into segments and matches it against a route template (`{x}` = one segment). */
export function matchRoute(template: string, path: string): Readonly<Record<string, string>> | undefined {
  const want = template.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const part = want[i] as string;
    const actual = have[i] as string;
    if (part.startsWith('{') && part.endsWith('}')) {
      if (actual === '') return undefined;
      params[part.slice(1, -1)] = actual;
    } else if (part !== actual) {
      return undefined;
    }
  }
  return params;
}

/** The first route whose template matches `path` (the order of ROUTES decides), with its raw params. */
export function findRoute<T extends { readonly path: string } = RouteSpec>(
  path: string,
  routes: readonly T[] = ROUTES as unknown as readonly T[],
): { readonly route: T; readonly params: Readonly<Record<string, string>> } | undefined {
  for (const route of routes) {
    const params = matchRoute(route.path, path);
    if (params) return { route, params };
  }
  return undefined;
}

/** Where a provider's webhook lands: `/v1/provider-events/<id>`. */
export function providerEventsPath(providerId: string): string {
  const route = ROUTES.find((r) => r.function === 'providerEvents');
  if (!route) throw new Error('no provider events route');
  return route.path.replace(`{${PROVIDER_PARAMETER}}`, providerId);
}
