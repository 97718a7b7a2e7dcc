import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoticeLedgerClient } from '../../client/client.ts';
import { executeApiRegion, sigV4Signer } from '../../client/sigv4.ts';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

describe('executeApiRegion', () => {
  it('reads the region of an execute-api host and nothing else', () => {
    expect(executeApiRegion('abc123defg.execute-api.eu-west-1.amazonaws.com')).toBe('eu-west-1');
    expect(executeApiRegion('abc123.execute-api.cn-north-1.amazonaws.com.cn')).toBe('cn-north-1');
    expect(executeApiRegion('127.0.0.1')).toBeUndefined();
    expect(executeApiRegion('execute-api.eu-west-1.amazonaws.com.evil.example')).toBeUndefined();
    expect(executeApiRegion('api.example.com')).toBeUndefined();
  });
});

describe('sigV4Signer', () => {
  it('reproduces the AWS SigV4 test suite (get-vanilla, get-vanilla-query-order-key-case)', async () => {
    const sign = sigV4Signer({
      region: 'us-east-1',
      service: 'service',
      applyChecksum: false,
      credentials: CREDENTIALS,
      signingDate: () => new Date('2015-08-30T12:36:00Z'),
    });
    const vanilla = await sign({
      method: 'GET',
      url: new URL('https://example.amazonaws.com/'),
      headers: {},
    });
    expect(vanilla.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    const query = await sign({
      method: 'GET',
      url: new URL('https://example.amazonaws.com/?Param2=value2&Param1=value1'),
      headers: {},
    });
    expect(query.authorization).toMatch(
      /Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500$/,
    );
    // Host is fetch's to set; the signature covers it all the same.
    expect(vanilla.host).toBeUndefined();
  });

  it('uses the named profile of the shared files (--profile), as the AWS CLI would', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nl-sigv4-'));
    const saved = { ...process.env };
    try {
      await writeFile(
        join(dir, 'credentials'),
        '[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = x\n\n[ops]\naws_access_key_id = AKIAOPSPROFILE\naws_secret_access_key = y\n',
      );
      await writeFile(join(dir, 'config'), '[default]\nregion = us-east-1\n');
      process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'credentials');
      process.env.AWS_CONFIG_FILE = join(dir, 'config');
      for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) {
        delete process.env[name];
      }
      const headers = await sigV4Signer({ region: 'eu-west-1', profile: 'ops' })({
        method: 'GET',
        url: new URL('https://abc.execute-api.eu-west-1.amazonaws.com/v1/health'),
        headers: {},
      });
      expect(headers.authorization).toContain('Credential=AKIAOPSPROFILE/');
      expect(headers.authorization).toContain('/eu-west-1/execute-api/aws4_request');
    } finally {
      process.env = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The client's requests, as they arrive at a server, verify against the SDK's own signer fed
 * the same inputs: what fetch put on the wire (path encoding, host with port, body) is what
 * was signed.
 */
describe('a request signed by the client verifies on the wire', () => {
  const received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let endpoint: string;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** What a verifier does: rebuild the request from what arrived, sign it again, compare. */
  async function verify(request: (typeof received)[number]): Promise<{ expected: string; actual: string }> {
    const url = new URL(request.url, endpoint);
    const authorization = String(request.headers.authorization);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
    const headers: Record<string, string> = {};
    // The payload hash is recomputed from the body that arrived, never taken from the header.
    for (const name of signedHeaders) {
      if (name !== 'x-amz-content-sha256') headers[name] = String(request.headers[name]);
    }
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const amzDate = String(request.headers['x-amz-date']);
    const signingDate = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const resigned = await new SignatureV4({
      service: 'execute-api',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      sha256: Sha256,
    }).sign(
      new HttpRequest({
        method: request.method,
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query,
        headers,
        body: request.body || undefined,
      }),
      { signingDate },
    );
    return { expected: String(resigned.headers.authorization), actual: authorization };
  }

  it('GET with a query, POST with a body, a path parameter with %2B', async () => {
    const client = new NoticeLedgerClient({
      endpoint,
      signer: sigV4Signer({ region: 'eu-west-1', credentials: CREDENTIALS }),
    });
    received.length = 0;
    await client.listNotices({ state: 'unknown', olderThan: 'PT10M', limit: '20' });
    await client.cancelNotice('ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa', {
      reason: 'appointment cancelled – ünïcode',
    });
    await client.putSuppression('sms', '+15551234567', { reason: 'operator' });
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/notices?state=unknown&olderThan=PT10M&limit=20',
      'POST /v1/notices/ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa/cancel',
      'PUT /v1/suppressions/sms/%2B15551234567',
    ]);
    for (const request of received) {
      const { expected, actual } = await verify(request);
      expect(actual).toBe(expected);
      expect(actual).toMatch(/SignedHeaders=[^,]*host/);
      expect(request.headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
    }
    // …and a changed body would not verify.
    const tampered = { ...(received[1] as (typeof received)[number]), body: '{"reason":"other"}' };
    const { expected, actual } = await verify(tampered);
    expect(actual).not.toBe(expected);
  });

  it('signs by default for an execute-api endpoint, never for another one unless asked', async () => {
    const seen: Request[] = [];
    const fakeFetch = (async (input: URL, init?: RequestInit) => {
      seen.push(new Request(input, init));
      return new Response('{"status":"ok"}', {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }) as typeof fetch;
    const saved = { ...process.env };
    try {
      process.env.AWS_ACCESS_KEY_ID = 'AKIAFROMENV';
      process.env.AWS_SECRET_ACCESS_KEY = 'z';
      delete process.env.AWS_PROFILE;
      await new NoticeLedgerClient({
        endpoint: 'https://abc123.execute-api.ap-southeast-2.amazonaws.com',
        fetch: fakeFetch,
      }).health();
      await new NoticeLedgerClient({ endpoint, fetch: fakeFetch }).health();
    } finally {
      process.env = saved;
    }
    expect(seen[0]?.headers.get('authorization')).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAFROMENV\/\d{8}\/ap-southeast-2\/execute-api\/aws4_request/,
    );
    expect(seen[1]?.headers.get('authorization')).toBeNull();
  });
});
