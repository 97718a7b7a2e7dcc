import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Caller } from '../../domain/caller.ts';
import {
  CAPACITY_RETRY_AFTER_SECONDS,
  capacityExceeded,
  internalError,
  type Problem,
} from '../../edge/problem.ts';
import { isCapacityExceeded } from '../../wiring/aws-clients.ts';
import type { HttpRuntime as FunctionRuntime } from '../../wiring/http.ts';
import { logger } from '../../wiring/observability.ts';

/*
 * What a route is: its request, its reply, the runtime it runs on. The route files (notices.ts,
 * operators.ts, suppressions.ts, the provider-events webhooks) implement these and router.ts binds
 * them to the contract's routes; keeping them apart from the router means a route file never
 * imports the module that imports it (docs/architecture.md §"Layering": no import circles).
 */

export interface HttpRequest {
  readonly event: APIGatewayProxyEventV2;
  /** Path parameters, percent-decoded (a literal `+` stays a plus). */
  readonly params: Readonly<Record<string, string>>;
  /**
   * Who asks, on an IAM route (edge/caller.ts), its role already checked against the route's by
   * the router; absent on a provider's route, which its module authenticates itself.
   */
  readonly caller?: Caller | undefined;
}

/** The caller of an IAM route; the router identifies one for every such route before it runs. */
export function callerOf(request: HttpRequest): Caller {
  if (!request.caller) throw new Error('no caller: the route is not IAM-authorised in the contract');
  return request.caller;
}

/** What a route returns; `noticeId` and `log` enrich the one request log line. */
export interface RouteReply {
  readonly response: APIGatewayProxyStructuredResultV2;
  readonly noticeId?: string | undefined;
  /** Ids, codes and counts only: never bodies, destinations or variables. */
  readonly log?: Readonly<Record<string, unknown>>;
}

/** The part of the http function's runtime its routes use; tests build just this. */
export type HttpRuntime = Pick<FunctionRuntime, 'deps'>;

export type RouteHandler<R = HttpRuntime> = (request: HttpRequest, runtime: R) => Promise<RouteReply>;

/** A route's method handler; it builds the runtime (config, secrets, clients) only if it needs it. */
export type Endpoint<R> = (request: HttpRequest, runtime: () => Promise<R>) => Promise<RouteReply>;

export const withRuntime =
  <R>(handler: RouteHandler<R>): Endpoint<R> =>
  async (request, runtime) =>
    handler(request, await runtime());

/** How an infrastructure failure is answered, by the router (a whole request) and a batch (an item). */
export interface FailureAnswer {
  readonly problem: Problem;
  /** A throttle: the caller may send the same request again after `retry-after`; not our fault. */
  readonly throttled: boolean;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * A failure the route did not answer itself: DynamoDB refusing for capacity after the SDK's
 * retries is 503 with Retry-After (the step that failed wrote nothing; intake is idempotent, so
 * the same request is safe to send again); anything else is the generic 500.
 */
export function failureAnswer(error: unknown): FailureAnswer {
  if (isCapacityExceeded(error)) {
    return {
      problem: capacityExceeded(),
      throttled: true,
      headers: { 'retry-after': String(CAPACITY_RETRY_AFTER_SECONDS) },
    };
  }
  return { problem: internalError(), throttled: false, headers: {} };
}

/**
 * {@link failureAnswer}, logged: `<what> throttled` as a warning (the caller's to send again), else
 * `<what> failed` as an error, with `context`, the error's name and its message (these errors name
 * resources and codes, not personal data).
 */
export function loggedFailureAnswer(
  error: unknown,
  what: string,
  context: Readonly<Record<string, unknown>>,
): FailureAnswer {
  const failure = failureAnswer(error);
  const fields = {
    ...context,
    errorName: error instanceof Error ? error.name : typeof error,
    errorMessage: error instanceof Error ? error.message : undefined,
  };
  if (failure.throttled) logger.warn(`${what} throttled`, fields);
  else logger.error(`${what} failed`, fields);
  return failure;
}
