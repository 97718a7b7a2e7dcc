/**
 * The provider-events function behind its own Lambda function URL (lib/providers/webhook-ingress.ts):
 * no PUBLIC_BASE_URL (the function cannot be given its own URL), so a Twilio signature is checked
 * against the URL the request reached, the function URL the SMS sender named as StatusCallback;
 * every path but the webhooks' answers 404 problem+json, as API Gateway's missing routes did.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../lambdas/edge/config.ts';
import { createProviderEventsHandler } from '../../lambdas/handlers/provider-events.ts';
import { computeTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { logger } from '../../lambdas/wiring/observability.ts';
import { loadInbound, providerEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { apiEvent, contentType, responseJson } from '../helpers/api-events.ts';
import { AUTH_TOKEN, EVENTS_ENV, type Harness, harness, SID } from '../helpers/http-harness.ts';

const FUNCTION_URL_HOST = 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6.lambda-url.us-east-1.on.aws';
const FUNCTION_URL_ORIGIN = `https://${FUNCTION_URL_HOST}`;
const TWILIO_PATH = '/v1/provider-events/twilio';
const PROBLEM = 'https://notice-ledger.dev/problems';

/** What the function's environment holds behind its URL: the credentials, no PUBLIC_BASE_URL. */
const { PUBLIC_BASE_URL: _unset, ...URL_ENV } = EVENTS_ENV;

/** The provider-events function on the harness's ledger, configured with `env`. */
function providerEvents(h: Harness, env: Record<string, string>) {
  return createProviderEventsHandler(async () => {
    const config = readConfig(env);
    return providerEventsRuntime(
      config,
      { store: h.store, clock: h.deps.clock, timing: h.deps.timing },
      await loadInbound(config, env),
    );
  });
}

/**
 * A request as a Lambda function URL delivers it (payload format 2.0): the URL's host as
 * `domainName`, its id as `apiId`, a form body base64-encoded (not a text type Lambda passes as is).
 */
function functionUrlEvent(input: {
  method: string;
  path: string;
  query?: string;
  body?: string;
  headers?: Record<string, string>;
}): APIGatewayProxyEventV2 {
  const event = apiEvent({
    method: input.method,
    path: input.path,
    query: input.query ?? '',
    ...(input.body === undefined ? {} : { body: Buffer.from(input.body).toString('base64') }),
    headers: { host: FUNCTION_URL_HOST, ...input.headers },
    isBase64Encoded: input.body !== undefined,
  });
  const [urlId] = FUNCTION_URL_HOST.split('.');
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      domainName: FUNCTION_URL_HOST,
      domainPrefix: urlId ?? '',
      apiId: urlId ?? '',
    },
  };
}

const delivered = {
  AccountSid: 'AC_test',
  ApiVersion: '2010-04-01',
  From: '+15005550006',
  MessageSid: SID,
  MessageStatus: 'delivered',
  SmsSid: SID,
  SmsStatus: 'delivered',
  To: '+15551234567',
};

/** Twilio's callback for `ref`, signed for `origin` (the URL Twilio was given). */
function callback(ref: string, origin: string): APIGatewayProxyEventV2 {
  const query = `ref=${ref}`;
  return functionUrlEvent({
    method: 'POST',
    path: TWILIO_PATH,
    query,
    body: new URLSearchParams(delivered).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': computeTwilioSignature(AUTH_TOKEN, `${origin}${TWILIO_PATH}?${query}`, delivered),
    },
  });
}

async function acceptedSms(h: Harness): Promise<string> {
  const { json } = await h.call({
    method: 'POST',
    path: '/v1/notices',
    body: {
      eventId: 'evt_url',
      eventType: 'lab-result-ready',
      recipient: { id: 'pat_1042', phone: '+15551234567' },
      channels: ['sms'],
      template: { id: 'lab-result-ready', version: 'v3' },
      variables: { firstName: 'Ada', portalUrl: 'https://portal.example.org/r/1' },
      deadline: '2026-12-01T09:00:00Z',
    },
  });
  h.sms.next = { kind: 'accepted', receiptId: SID };
  await deliverIntent({ noticeId: json.noticeId, channel: 'sms' }, h.deps);
  return json.noticeId as string;
}

beforeEach(() => {
  for (const level of ['info', 'warn', 'error'] as const)
    vi.spyOn(logger, level).mockImplementation(() => undefined);
});
afterEach(() => vi.restoreAllMocks());

describe('provider-events behind its function URL', () => {
  it('verifies a Twilio callback against the function URL it reached, and records the delivery', async () => {
    // Prepare
    const h = harness();
    const noticeId = await acceptedSms(h);
    const handler = providerEvents(h, URL_ENV);

    // Act
    const reply = await handler(callback(`${noticeId}-sms`, FUNCTION_URL_ORIGIN));

    // Assess
    expect(reply.statusCode).toBe(200);
    expect((await h.store.get(noticeId, 'sms'))?.state).toBe('delivered');
  });

  it('refuses (403, nothing changes) a callback signed for another origin than the one it reached', async () => {
    // Prepare
    const h = harness();
    const noticeId = await acceptedSms(h);
    const before = await h.store.get(noticeId, 'sms');
    const handler = providerEvents(h, URL_ENV);

    // Act
    const reply = await handler(
      callback(`${noticeId}-sms`, 'https://abc123.execute-api.us-east-1.amazonaws.com'),
    );

    // Assess
    expect(reply.statusCode).toBe(403);
    expect(responseJson(reply)).toMatchObject({ type: `${PROBLEM}/invalid-signature` });
    expect(await h.store.get(noticeId, 'sms')).toEqual(before);
  });

  it('checks against PUBLIC_BASE_URL when the deployment names one, not the host the request reached', async () => {
    // Prepare
    const h = harness();
    const noticeId = await acceptedSms(h);
    const handler = providerEvents(h, EVENTS_ENV);

    // Act
    const forHost = await handler(callback(`${noticeId}-sms`, FUNCTION_URL_ORIGIN));
    const forBase = await handler(callback(`${noticeId}-sms`, EVENTS_ENV.PUBLIC_BASE_URL));

    // Assess
    expect([forHost.statusCode, forBase.statusCode]).toEqual([403, 200]);
  });

  it('answers 404 problem+json for every path but the webhooks, 405 for another method on one', async () => {
    // Prepare
    const h = harness();
    const handler = providerEvents(h, URL_ENV);
    const requests = [
      functionUrlEvent({ method: 'GET', path: '/' }),
      functionUrlEvent({ method: 'GET', path: '/v1/health' }),
      functionUrlEvent({ method: 'POST', path: '/v1/notices', body: '{}' }),
      functionUrlEvent({ method: 'POST', path: '/v1/provider-events/nobody', body: 'a=b' }),
      functionUrlEvent({ method: 'POST', path: '/v1/provider-events/twilio/extra', body: 'a=b' }),
    ];

    // Act
    const replies = await Promise.all(requests.map((r) => handler(r)));
    const wrongMethod = await handler(functionUrlEvent({ method: 'GET', path: TWILIO_PATH }));

    // Assess
    for (const reply of replies) {
      expect(reply.statusCode).toBe(404);
      expect(contentType(reply)).toBe('application/problem+json');
      expect(responseJson(reply)).toMatchObject({ type: `${PROBLEM}/not-found`, status: 404 });
    }
    expect(wrongMethod.statusCode).toBe(405);
    expect(contentType(wrongMethod)).toBe('application/problem+json');
  });
});
