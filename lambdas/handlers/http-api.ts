import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { getHttpRuntime } from '../wiring/http.ts';
import { createHttpApi } from './http/router.ts';

/**
 * The HTTP API Lambda (API Gateway HTTP API, payload format 2.0), and the same function the
 * local stack serves. Routing, problem responses and request logging live in `./http/`.
 */
const api = createHttpApi(getHttpRuntime);

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> =>
  api(event);
