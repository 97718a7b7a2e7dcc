/**
 * The local API Gateway (local/http-gateway.ts) in-process, with a recording handler in place
 * of the http-api function: the event it builds and how it writes results back.
 */
import { request } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { apiGatewayTime, type HttpGateway, startHttpGateway } from '../../local/http-gateway.ts';

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
): Promise<{ url: string; events: APIGatewayProxyEventV2[] }> {
  const events: APIGatewayProxyEventV2[] = [];
  gateway = await startHttpGateway({
    port: 0,
    region: 'us-east-1',
    maxBodyBytes,
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
});
