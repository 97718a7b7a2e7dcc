import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { iamAuthorizer } from '../../local/callers.ts';

export interface ApiEventInput {
  readonly method: string;
  /** The raw path as a client would send it (percent-encoding kept). */
  readonly path: string;
  /** An object is sent as JSON; a string as is. */
  readonly body?: unknown;
  /**
   * Header names as given (API Gateway lower-cases them; so should callers). A body gets
   * `content-type: application/json` unless a content type is given; `undefined` removes it.
   */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** Raw query string (without `?`) or parameters to encode. */
  readonly query?: string | Readonly<Record<string, string>>;
  readonly isBase64Encoded?: boolean;
  /**
   * The signer's ARN (an assumed-role session, a role, a user): `requestContext.authorizer.iam`
   * as API Gateway's IAM authorisation passes it (and the local gateway, local/callers.ts).
   * Absent: no IAM context, the unsigned caller (the harness takes it for the local operator).
   */
  readonly caller?: string;
}

/** An API Gateway HTTP API (payload format 2.0) event, as the `$default` route delivers it. */
export function apiEvent(input: ApiEventInput): APIGatewayProxyEventV2 {
  const body =
    input.body === undefined
      ? undefined
      : typeof input.body === 'string'
        ? input.body
        : JSON.stringify(input.body);
  const headers: Record<string, string> = {
    host: 'api.example.test',
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const rawQueryString =
    typeof input.query === 'string' ? input.query : new URLSearchParams(input.query ?? {}).toString();
  const queryStringParameters = rawQueryString
    ? Object.fromEntries(new URLSearchParams(rawQueryString))
    : undefined;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: input.path,
    rawQueryString,
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      ...(input.caller !== undefined ? { authorizer: signedBy(input.caller) } : {}),
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: {
        method: input.method,
        path: input.path,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'vitest',
      },
      requestId: `req-${Math.random().toString(36).slice(2)}`,
      routeKey: '$default',
      stage: '$default',
      time: '30/Nov/2026:10:00:00 +0000',
      timeEpoch: Date.parse('2026-11-30T10:00:00Z'),
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: input.isBase64Encoded ?? false,
  };
}

function signedBy(arn: string) {
  const authorizer = iamAuthorizer(arn);
  if (!authorizer) throw new Error(`not a principal ARN: ${arn}`);
  return authorizer;
}

/** The response body parsed as JSON (undefined when empty). */
export function responseJson(result: APIGatewayProxyStructuredResultV2): unknown {
  return result.body ? JSON.parse(result.body) : undefined;
}

export function contentType(result: APIGatewayProxyStructuredResultV2): string | undefined {
  const value = result.headers?.['content-type'];
  return value === undefined ? undefined : String(value);
}
