/**
 * The local API Gateway (local/http-gateway.ts) in-process, with a recording handler in place
 * of the http-api function: the event it builds and how it writes results back.
 */
import { request } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import {
  apiGatewayTime,
  type HttpGateway,
  type HttpGatewayOptions,
  isTextMediaType,
  startHttpGateway,
} from '../../local/http-gateway.ts';
import { rawExchange } from '../helpers/raw-socket.ts';

let gateway: HttpGateway | undefined;
const logged: string[] = [];

afterEach(async () => {
  await gateway?.close(0);
  gateway = undefined;
  logged.length = 0;
});

async function serve(
  answer: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2 | undefined>,
  maxBodyBytes = 1024,
  limits: Partial<Pick<HttpGatewayOptions, 'headersTimeoutMs' | 'bodyIdleTimeoutMs' | 'bodyTimeoutMs'>> = {},
): Promise<{ url: string; events: APIGatewayProxyEventV2[] }> {
  const events: APIGatewayProxyEventV2[] = [];
  gateway = await startHttpGateway({
    port: 0,
    region: 'us-east-1',
    maxBodyBytes,
    ...limits,
    log: (line) => logged.push(line),
    loadHandler: async () => async (event) => {
      events.push(event);
      return answer(event);
    },
  });
  gateway.open();
  return { url: gateway.url, events };
}

/** Raw request: fetch cannot send repeated headers or several Cookie headers. */
function rawRequest(
  url: string,
  path: string,
  headers: [string, string][],
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    // As a raw array Node adds no Host header of its own, and HTTP/1.1 requires one.
    const flat = [['Host', new URL(url).host], ...headers].flat();
    const req = request(
      `${url}${path}`,
      { method: body === undefined ? 'GET' : 'POST', headers: flat },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('local API Gateway (payload format 2.0)', () => {
  it('builds the event API Gateway would send', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 204 }));

    // Act
    const response = await rawRequest(
      url,
      '/v1/suppressions/email/a%40example.com?x=1&y=2&x=3',
      [
        ['X-Custom', 'one'],
        ['X-Custom', 'two'],
        ['Cookie', 'a=1; b=2'],
        ['Content-Type', 'application/json'],
        ['User-Agent', 'e2e-test'],
      ],
      '{"ok":true}',
    );

    // Assess
    expect(response.status).toBe(204);
    const event = events[0];
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/v1/suppressions/email/a%40example.com',
      rawQueryString: 'x=1&y=2&x=3',
      cookies: ['a=1', 'b=2'],
      queryStringParameters: { x: '1,3', y: '2' },
      body: '{"ok":true}',
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        http: {
          method: 'POST',
          path: '/v1/suppressions/email/a%40example.com',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.1',
          userAgent: 'e2e-test',
        },
        routeKey: '$default',
        stage: '$default',
      },
    });
    expect(event?.headers['x-custom']).toBe('one,two');
    expect(event?.headers['content-type']).toBe('application/json');
    expect(event?.headers.cookie).toBeUndefined();
    expect(event?.requestContext.time).toBe(apiGatewayTime(event?.requestContext.timeEpoch ?? 0));
    expect(event?.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('omits body and query fields when the request has none', async () => {
    const { url, events } = await serve(async () => ({ statusCode: 200, body: '{}' }));
    await fetch(`${url}/v1/health`);
    expect(events[0]?.body).toBeUndefined();
    expect(events[0]?.queryStringParameters).toBeUndefined();
    expect(events[0]?.rawQueryString).toBe('');
    expect(events[0]?.cookies).toBeUndefined();
  });

  it('turns the caller header into the IAM context API Gateway would pass, and passes the header on to nobody', async () => {
    const { url, events } = await serve(async () => ({ statusCode: 200, body: '{}' }));
    const session = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-0a1b';
    await fetch(`${url}/v1/health`, { headers: { 'x-notice-ledger-caller': session } });
    await fetch(`${url}/v1/health`);
    const twice = await rawRequest(url, '/v1/health', [
      ['x-notice-ledger-caller', session],
      ['x-notice-ledger-caller', 'arn:aws:iam::111111111111:role/other'],
    ]);
    const notAPrincipal = await fetch(`${url}/v1/health`, {
      headers: { 'x-notice-ledger-caller': 'ops-team' },
    });

    const [signed, unsigned] = events;
    expect(signed?.headers['x-notice-ledger-caller']).toBeUndefined();
    expect((signed?.requestContext as { authorizer?: unknown } | undefined)?.authorizer).toEqual({
      iam: {
        accessKey: expect.stringMatching(/^ASIA[A-Z2-7]{17}$/),
        accountId: '111111111111',
        callerId: expect.stringMatching(/^AROA[A-Z2-7]{17}:i-0a1b$/),
        cognitoIdentity: null,
        principalOrgId: null,
        userArn: session,
        userId: expect.stringMatching(/^AROA[A-Z2-7]{17}:i-0a1b$/),
      },
    });
    expect((unsigned?.requestContext as { authorizer?: unknown } | undefined)?.authorizer).toBeUndefined();
    // Refused before the handler, as API Gateway refuses a bad signature.
    expect(twice.status).toBe(403);
    expect(notAPrincipal.status).toBe(403);
    expect(events).toHaveLength(2);
  });

  it('writes structured results: headers, cookies, base64 bodies', async () => {
    // Prepare
    const { url } = await serve(async () => ({
      statusCode: 201,
      headers: { 'Content-Type': 'text/plain', 'X-Count': 3 },
      cookies: ['s=1; HttpOnly', 't=2'],
      body: Buffer.from('héllo').toString('base64'),
      isBase64Encoded: true,
    }));

    // Act
    const response = await rawRequest(url, '/x', []);

    // Assess
    expect(response.status).toBe(201);
    expect(response.body).toBe('héllo');
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.headers['x-count']).toBe('3');
    expect(response.headers['set-cookie']).toEqual(['s=1; HttpOnly', 't=2']);
  });

  it('answers 200 JSON for a result without statusCode, as API Gateway does', async () => {
    const { url } = await serve(async () => ({ hello: 'world' }) as unknown as APIGatewayProxyResultV2);
    const response = await fetch(`${url}/x`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ hello: 'world' });
  });

  it('answers 500 problem+json when the handler throws, without echoing the request', async () => {
    const { url } = await serve(async () => {
      throw new Error('boom');
    });
    const response = await fetch(`${url}/v1/notices`, { method: 'POST', body: '{"email":"p@example.com"}' });
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect(logged.join('\n')).toContain('boom');
    expect(logged.join('\n')).not.toContain('p@example.com');
  });

  it('answers 413 past the limit without calling the handler, declared or streamed', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 200 }), 1024);

    // Act
    const declared = await fetch(`${url}/v1/notices`, { method: 'POST', body: 'x'.repeat(5000) });
    const streamed = await fetch(`${url}/v1/notices`, {
      method: 'POST',
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('y'.repeat(500)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    const atLimit = await fetch(`${url}/v1/notices`, { method: 'POST', body: 'z'.repeat(1024) });

    // Assess
    expect(declared.status).toBe(413);
    expect(declared.headers.get('content-type')).toBe('application/problem+json');
    expect(streamed.status).toBe(413);
    expect(atLimit.status).toBe(200);
    expect(events).toHaveLength(1);
  });

  it('answers 503 until opened', async () => {
    gateway = await startHttpGateway({
      port: 0,
      region: 'us-east-1',
      log: () => {},
      loadHandler: async () => async () => ({ statusCode: 200 }),
    });
    expect((await fetch(`${gateway.url}/v1/health`)).status).toBe(503);
    gateway.open();
    expect((await fetch(`${gateway.url}/v1/health`)).status).toBe(200);
  });

  it('passes text bodies as strings and every other content type base64-encoded, as API Gateway does', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 204 }));
    const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc0, 0xaf, 0x22, 0x7d]);
    const send = (contentType: string | undefined, body: Buffer) =>
      fetch(`${url}/v1/notices`, {
        method: 'POST',
        headers: contentType ? { 'content-type': contentType } : {},
        body,
      });

    // Act
    await send('application/json; charset=utf-8', Buffer.from('{"name":"Zoë"}'));
    await send('application/json', invalidUtf8);
    await send('application/x-www-form-urlencoded', Buffer.from('a=1&b=%C3%A9'));
    await send('application/octet-stream', invalidUtf8);
    await send('TEXT/PLAIN', Buffer.from('hi'));

    // Assess
    expect(events.map((e) => [e.headers['content-type'], e.isBase64Encoded, e.body])).toEqual([
      ['application/json; charset=utf-8', false, '{"name":"Zoë"}'],
      // Invalid bytes can only reach the function as U+FFFD in a string (the handler refuses it).
      ['application/json', false, '{"a":"\uFFFD\uFFFD\uFFFD"}'],
      ['application/x-www-form-urlencoded', true, Buffer.from('a=1&b=%C3%A9').toString('base64')],
      ['application/octet-stream', true, invalidUtf8.toString('base64')],
      ['TEXT/PLAIN', false, 'hi'],
    ]);
    expect(isTextMediaType(undefined)).toBe(false);
    expect(isTextMediaType('application/problem+json')).toBe(false);
    expect(isTextMediaType('application/javascript')).toBe(true);
  });

  it('answers 408 and closes when a body is shorter than its Content-Length, without calling the handler', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 200 }), 1024, { bodyIdleTimeoutMs: 300 });

    // Act
    const { response, closedAfterMs } = await rawExchange(url, [
      'POST /v1/notices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"eventId":',
    ]);

    // Assess
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
    expect(response).toContain('content-type: application/problem+json');
    expect(closedAfterMs).toBeLessThan(5_000);
    expect(events).toHaveLength(0);
  });

  it('answers 408 to a body that trickles past the total body timeout', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 200 }), 1024, {
      bodyIdleTimeoutMs: 1_000,
      bodyTimeoutMs: 600,
    });
    const trickle = Array.from({ length: 20 }, () => ['x', { pauseMs: 100 }]).flat();

    // Act
    const { response, closedAfterMs } = await rawExchange(url, [
      'POST /v1/notices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n',
      ...trickle,
    ]);

    // Assess
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeLessThan(1_900);
    expect(events).toHaveLength(0);
  });

  it('closes a connection whose headers do not arrive in time, and refuses headers past 10 240 bytes', async () => {
    // Prepare
    const { url, events } = await serve(async () => ({ statusCode: 200 }), 1024, { headersTimeoutMs: 300 });

    // Act
    const slowHeaders = await rawExchange(url, ['POST /v1/notices HTTP/1.1\r\nHost: x\r\n']);
    const huge = await fetch(`${url}/v1/health`, { headers: { 'x-padding': 'p'.repeat(11_000) } });

    // Assess
    expect(slowHeaders.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(slowHeaders.closedAfterMs).toBeLessThan(5_000);
    expect(huge.status).toBe(431);
    expect(events).toHaveLength(0);
  });
});
