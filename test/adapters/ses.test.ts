import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AccountSuspendedException,
  BadRequestException,
  GetAccountCommand,
  LimitExceededException,
  MessageRejected,
  NotFoundException,
  SESv2ServiceException,
  SendingPausedException,
  TooManyRequestsException,
} from '@aws-sdk/client-sesv2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TIMEOUT_CODE } from '../../lambdas/domain/outcome.ts';
import type { EmailMessage } from '../../lambdas/ports/transport.port.ts';
import {
  classifySesError,
  createSesClient,
  SES_DAILY_QUOTA_RETRY_AFTER_MS,
  SesEmailTransport,
  sesTagValue,
} from '../../lambdas/providers/ses/transport.ts';
import {
  clearSesStore,
  DEFAULT_SES_ACCOUNT,
  readSesStore,
  type SesLocal,
  startSesLocal,
} from '../../local/ses/server.ts';

const FROM = 'notices@example.com';
const TO = 'patient@example.com';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

function message(overrides: Partial<EmailMessage> = {}): EmailMessage {
  return {
    to: TO,
    subject: 'Your lab result is ready — Ada',
    text: 'Hello Ada, your result is ready.',
    html: '<p>Hello Ada, your result is ready.</p>',
    correlationId: 'ntc_ABC123#email',
    idempotencyKey: 'ntc_ABC123:email',
    ...overrides,
  };
}

describe('SesEmailTransport against aws-ses-v2-local', () => {
  let ses: SesLocal;
  let transport: SesEmailTransport;

  beforeAll(async () => {
    ses = await startSesLocal();
    // The production path: the SDK finds the endpoint in the standard variable by itself.
    vi.stubEnv('AWS_ENDPOINT_URL_SESV2', ses.endpoint);
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
    transport = new SesEmailTransport({
      fromAddress: FROM,
      configurationSetName: 'notices',
      timeoutMs: 5000,
    });
  });

  afterAll(async () => {
    vi.unstubAllEnvs();
    await ses?.close();
  });

  beforeEach(async () => {
    await clearSesStore(ses.endpoint);
  });

  it('accepts a send and the store holds exactly that one email', async () => {
    const outcome = await transport.send(message());

    expect(outcome.kind).toBe('accepted');
    const receiptId = outcome.kind === 'accepted' ? outcome.receiptId : '';
    const emails = await readSesStore(ses.endpoint);
    expect(emails).toHaveLength(1);
    const [email] = emails;
    expect(email?.messageId).toBe(receiptId);
    expect(email?.subject).toBe('Your lab result is ready — Ada');
    expect(email?.destination.to).toEqual([TO]);
    expect(email?.from).toBe(FROM);
    expect(email?.body.text).toBe('Hello Ada, your result is ready.');
    expect(email?.body.html).toBe('<p>Hello Ada, your result is ready.</p>');
  });

  it('filters the store by epoch second', async () => {
    await transport.send(message());
    const now = Math.floor(Date.now() / 1000);
    expect(await readSesStore(ses.endpoint, now - 60)).toHaveLength(1);
    expect(await readSesStore(ses.endpoint, now + 60)).toHaveLength(0);
  });

  it('answers GetAccount with the default quota (AWS_SES_ACCOUNT)', async () => {
    const account = await createSesClient({ timeoutMs: 5000 }).send(new GetAccountCommand({}));
    expect(account.SendQuota?.MaxSendRate).toBe(DEFAULT_SES_ACCOUNT.SendQuota.MaxSendRate);
    expect(account.SendingEnabled).toBe(true);
  });

  it("maps the emulator's nameless 400 by status to a permanent rejection", async () => {
    // The emulator refuses an empty subject; its errors reach the SDK named `Unknown`.
    const outcome = await transport.send(message({ subject: '' }));

    expect(outcome).toEqual({ kind: 'rejected', code: 'ses_http_400', permanent: true });
    expect(await readSesStore(ses.endpoint)).toHaveLength(0);
  });
});

interface FakeSes {
  readonly endpoint: string;
  readonly requests: { readonly method?: string; readonly url?: string; readonly body: string }[];
  close(): Promise<void>;
}

/** A stand-in SES endpoint on 127.0.0.1 that records every request it receives. */
async function startFakeSes(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<FakeSes> {
  const requests: { method?: string; url?: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const record = { method: req.method, url: req.url, body: '' };
    requests.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record.body = Buffer.concat(chunks).toString('utf8');
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function transportFor(endpoint: string, timeoutMs: number, configurationSetName?: string): SesEmailTransport {
  const client = createSesClient({
    timeoutMs,
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
  });
  return new SesEmailTransport({ client, fromAddress: FROM, configurationSetName, timeoutMs });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

describe('SesEmailTransport over the wire (fake endpoints)', () => {
  let fake: FakeSes | undefined;

  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('sends one SendEmail with simple UTF-8 content, the intent tag and the configuration set', async () => {
    fake = await startFakeSes(json(200, { MessageId: 'msg-0001' }));

    const outcome = await transportFor(fake.endpoint, 2000, 'notices').send(message());

    expect(outcome).toEqual({ kind: 'accepted', receiptId: 'msg-0001' });
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v2/email/outbound-emails');
    expect(JSON.parse(request?.body ?? '{}')).toEqual({
      FromEmailAddress: FROM,
      Destination: { ToAddresses: [TO] },
      Content: {
        Simple: {
          Subject: { Data: 'Your lab result is ready — Ada', Charset: 'UTF-8' },
          Body: {
            Text: { Data: 'Hello Ada, your result is ready.', Charset: 'UTF-8' },
            Html: { Data: '<p>Hello Ada, your result is ready.</p>', Charset: 'UTF-8' },
          },
          Headers: [{ Name: 'X-Notice-Intent', Value: 'ntc_ABC123_email' }],
        },
      },
      EmailTags: [{ Name: 'notice_intent', Value: 'ntc_ABC123_email' }],
      ConfigurationSetName: 'notices',
    });
  });

  it('omits Html and ConfigurationSetName when there are none', async () => {
    fake = await startFakeSes(json(200, { MessageId: 'msg-0002' }));

    await transportFor(fake.endpoint, 2000).send(message({ html: undefined }));

    const body = JSON.parse(fake.requests[0]?.body ?? '{}');
    expect(body.Content.Simple.Body).not.toHaveProperty('Html');
    expect(body).not.toHaveProperty('ConfigurationSetName');
  });

  it('turns a request that is never answered into an ambiguous timeout, after exactly one request', async () => {
    fake = await startFakeSes(() => {
      // Accept, read, never answer.
    });
    const timeoutMs = 400;

    const started = performance.now();
    const outcome = await transportFor(fake.endpoint, timeoutMs).send(message());
    const elapsed = performance.now() - started;

    expect(outcome).toEqual({ kind: 'ambiguous', code: TIMEOUT_CODE });
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(elapsed).toBeLessThan(timeoutMs + 1500);
    // Long enough for an SDK retry (100 ms base delay) to have arrived if retries were on.
    await sleep(500);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    [
      '429 without an error type',
      429,
      {},
      { kind: 'retryable', code: 'ses_max_send_rate_exceeded', throttled: true },
    ],
    [
      '429 TooManyRequestsException',
      429,
      { 'x-amzn-errortype': 'TooManyRequestsException' },
      { kind: 'retryable', code: 'ses_max_send_rate_exceeded', throttled: true },
    ],
  ] as const)(
    'maps %s "Maximum sending rate exceeded." to throttled, after exactly one request',
    async (_label, status, headers, expected) => {
      fake = await startFakeSes(json(status, { message: 'Maximum sending rate exceeded.' }, headers));

      const outcome = await transportFor(fake.endpoint, 2000).send(message());

      expect(outcome).toEqual(expected);
      expect(outcome).not.toHaveProperty('retryAfterMs');
      await sleep(300);
      expect(fake.requests).toHaveLength(1);
    },
  );

  it.each([
    [500, 'InternalFailure', { kind: 'ambiguous', code: 'ses_InternalFailure' }],
    [503, 'ServiceUnavailable', { kind: 'retryable', code: 'ses_ServiceUnavailable', throttled: false }],
  ] as const)('maps a %i %s without resending it', async (status, type, expected) => {
    fake = await startFakeSes(json(status, { message: 'try later' }, { 'x-amzn-errortype': type }));

    const outcome = await transportFor(fake.endpoint, 2000).send(message());

    expect(outcome).toEqual(expected);
    await sleep(300);
    expect(fake.requests).toHaveLength(1);
  });

  it('maps a refused connection to retryable (nothing was sent)', async () => {
    const closed = await startFakeSes(json(200, {}));
    await closed.close();

    const outcome = await transportFor(closed.endpoint, 2000).send(message());

    expect(outcome).toEqual({ kind: 'retryable', code: 'connection_refused', throttled: false });
  });

  it('maps a reset after the request was written to ambiguous', async () => {
    fake = await startFakeSes((req) => req.socket.resetAndDestroy());

    const outcome = await transportFor(fake.endpoint, 2000).send(message());

    expect(outcome).toEqual({ kind: 'ambiguous', code: 'connection_reset' });
    expect(fake.requests).toHaveLength(1);
  });

  it('maps a 2xx without a MessageId to ambiguous', async () => {
    fake = await startFakeSes(json(200, {}));

    expect(await transportFor(fake.endpoint, 2000).send(message())).toEqual({
      kind: 'ambiguous',
      code: 'ses_missing_message_id',
    });
  });
});

describe('classifySesError', () => {
  const meta = (httpStatusCode?: number) => ({
    $metadata: httpStatusCode === undefined ? {} : { httpStatusCode },
  });

  it('treats TooManyRequestsException as throttled with no advised delay', () => {
    const error = new TooManyRequestsException({ message: 'Too many requests', ...meta(429) });
    expect(classifySesError(error)).toEqual({
      kind: 'retryable',
      code: 'ses_TooManyRequestsException',
      throttled: true,
    });
  });

  it('recognises the sending-rate message whatever the exception', () => {
    const error = new TooManyRequestsException({ message: 'Maximum sending rate exceeded.', ...meta(429) });
    expect(classifySesError(error)).toEqual({
      kind: 'retryable',
      code: 'ses_max_send_rate_exceeded',
      throttled: true,
    });
  });

  it('holds the whole channel back for a while when the daily quota is exhausted', () => {
    const error = new TooManyRequestsException({ message: 'Daily message quota exceeded.', ...meta(429) });
    expect(classifySesError(error)).toEqual({
      kind: 'retryable',
      code: 'ses_daily_quota_exceeded',
      throttled: true,
      retryAfterMs: SES_DAILY_QUOTA_RETRY_AFTER_MS,
    });
  });

  it('treats LimitExceededException as a non-permanent rejection', () => {
    const error = new LimitExceededException({ message: 'Limit exceeded', ...meta(400) });
    expect(classifySesError(error)).toEqual({
      kind: 'rejected',
      code: 'ses_LimitExceededException',
      permanent: false,
    });
  });

  it.each([
    [
      'MessageRejected',
      new MessageRejected({ message: 'Email address is not verified: a@b.example', ...meta(400) }),
    ],
    ['SendingPausedException', new SendingPausedException({ message: 'paused', ...meta(400) })],
    ['AccountSuspendedException', new AccountSuspendedException({ message: 'suspended', ...meta(400) })],
    ['NotFoundException', new NotFoundException({ message: 'no such configuration set', ...meta(404) })],
    ['BadRequestException', new BadRequestException({ message: 'bad', ...meta(400) })],
  ])('treats %s as a permanent rejection', (name, error) => {
    expect(classifySesError(error)).toEqual({ kind: 'rejected', code: `ses_${name}`, permanent: true });
  });

  it('never puts the message (which may quote an address) into the code', () => {
    const error = new MessageRejected({
      message: 'Email address is not verified: a@b.example',
      ...meta(400),
    });
    const outcome = classifySesError(error);
    expect(JSON.stringify(outcome)).not.toContain('@');
  });

  it('treats a 500 as ambiguous: SES may have queued the message', () => {
    const error = new SESv2ServiceException({
      name: 'InternalFailure',
      $fault: 'server',
      message: 'internal failure',
      ...meta(500),
    });
    expect(classifySesError(error)).toEqual({ kind: 'ambiguous', code: 'ses_InternalFailure' });
  });

  it('treats a 503 as retryable: the request was not taken', () => {
    const error = new SESv2ServiceException({
      name: 'ServiceUnavailable',
      $fault: 'server',
      message: 'unavailable',
      ...meta(503),
    });
    expect(classifySesError(error)).toEqual({
      kind: 'retryable',
      code: 'ses_ServiceUnavailable',
      throttled: false,
    });
  });

  it.each([
    [429, { kind: 'retryable', code: 'ses_http_429', throttled: true }],
    [400, { kind: 'rejected', code: 'ses_http_400', permanent: true }],
    [403, { kind: 'rejected', code: 'ses_http_403', permanent: false }],
    [500, { kind: 'ambiguous', code: 'ses_http_500' }],
    [502, { kind: 'ambiguous', code: 'ses_http_502' }],
    [503, { kind: 'retryable', code: 'ses_http_503', throttled: false }],
  ])('maps a nameless (`Unknown`) %i by status', (status, expected) => {
    const error = new SESv2ServiceException({
      name: 'Unknown',
      $fault: status >= 500 ? 'server' : 'client',
      message: 'x',
      ...meta(status),
    });
    expect(classifySesError(error)).toEqual(expected);
  });

  it('treats an unreadable 2xx as ambiguous: SES probably holds the message', () => {
    const error = Object.assign(new SyntaxError('Unexpected end of JSON input'), meta(200));
    expect(classifySesError(error)).toEqual({ kind: 'ambiguous', code: 'ses_http_200' });
  });

  it('treats a request timeout (TimeoutError) as ambiguous timeout', () => {
    const error = Object.assign(new Error('a request has exceeded the configured 400 ms requestTimeout.'), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      ...meta(),
    });
    expect(classifySesError(error)).toEqual({ kind: 'ambiguous', code: TIMEOUT_CODE });
  });

  it('treats a connection that never opened within the timeout as retryable', () => {
    const error = Object.assign(
      new Error(
        '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 200 ms.',
      ),
      { name: 'TimeoutError', ...meta() },
    );
    expect(classifySesError(error)).toEqual({ kind: 'retryable', code: 'connect_timeout', throttled: false });
  });

  it('treats ECONNREFUSED and DNS failures as retryable', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
      ...meta(),
    });
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND email.example'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      ...meta(),
    });
    expect(classifySesError(refused)).toEqual({
      kind: 'retryable',
      code: 'connection_refused',
      throttled: false,
    });
    expect(classifySesError(dns)).toEqual({ kind: 'retryable', code: 'dns_failure', throttled: false });
  });

  it('treats an OS connect timeout as retryable but a read timeout as ambiguous', () => {
    const connect = Object.assign(new Error('connect ETIMEDOUT'), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      syscall: 'connect',
    });
    const read = Object.assign(new Error('read ETIMEDOUT'), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      syscall: 'read',
    });
    expect(classifySesError(connect)).toEqual({
      kind: 'retryable',
      code: 'connect_failed',
      throttled: false,
    });
    expect(classifySesError(read)).toEqual({ kind: 'ambiguous', code: TIMEOUT_CODE });
  });

  it('treats ECONNRESET after sending as ambiguous, though smithy names it TimeoutError', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), {
      name: 'TimeoutError',
      code: 'ECONNRESET',
      syscall: 'read',
      ...meta(),
    });
    expect(classifySesError(reset)).toEqual({ kind: 'ambiguous', code: 'connection_reset' });
  });

  it('treats anything it does not recognise as ambiguous', () => {
    expect(classifySesError(new Error('???'))).toEqual({ kind: 'ambiguous', code: 'ses_unclassified' });
    expect(classifySesError('a string')).toEqual({ kind: 'ambiguous', code: 'ses_unclassified' });
    expect(classifySesError(undefined)).toEqual({ kind: 'ambiguous', code: 'ses_unclassified' });
  });
});

describe('sesTagValue', () => {
  it('keeps only what EmailTags allow, within 256 characters', () => {
    expect(sesTagValue('ntc_AB-12#email')).toBe('ntc_AB-12_email');
    expect(sesTagValue('a@b.example')).toBe('a_b_example');
    expect(sesTagValue('x'.repeat(300))).toHaveLength(256);
  });
});
