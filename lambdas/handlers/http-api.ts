import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { CallerDirectory } from '../edge/caller.ts';
import { getCallerDirectory, getHttpRuntime } from '../wiring/http.ts';
import { metrics } from '../wiring/observability.ts';
import type { HttpRuntime } from './http/route.ts';
import { createHttpApi } from './http/router.ts';

/**
 * The HTTP API Lambda (API Gateway HTTP API, payload format 2.0), and the same function the
 * local stack serves. Routing, problem responses and request logging live in `./http/`; the
 * metrics a request stored (intake's deadline-risk warnings) are published as it ends.
 */
export function createHttpHandler(
  runtime: () => Promise<HttpRuntime>,
  callers: () => CallerDirectory = getCallerDirectory,
) {
  const api = createHttpApi(runtime, callers);
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    try {
      return await api(event);
    } finally {
      // Most requests add no metric; publishing an empty set only makes Powertools complain.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

export const handler = createHttpHandler(getHttpRuntime);
