import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TIMEOUT_CODE } from '../../lambdas/domain/outcome.ts';
import type { SmsMessage } from '../../lambdas/ports/transport.port.ts';
import { outcomeForNetworkError, parseRetryAfter } from '../../lambdas/providers/fetch-send.ts';
import {
  fetchMessage,
  findMessages,
  TwilioLookupError,
} from '../../lambdas/providers/twilio/messages-api.ts';
import { computeTwilioSignature, verifyTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import {
  outcomeForTwilioResponse,
  TwilioSmsTransport,
  type TwilioSmsTransportOptions,
} from '../../lambdas/providers/twilio/transport.ts';
import { type SmsSimulator, startSmsSimulator } from '../../local/sms-simulator/server.ts';

const TO = '+15551234567';
const FROM = '+15005550006';
const BODY = 'Hello Ada, your lab result is ready in the portal.';

function sms(overrides: Partial<SmsMessage> = {}): SmsMessage {
  return { to: TO, body: BODY, correlationId: 'ntc_1#sms', idempotencyKey: 'ntc_1#sms', ...overrides };
}

function transportFor(
  sim: SmsSimulator,
  overrides: Partial<TwilioSmsTransportOptions> = {},
): TwilioSmsTransport {
  return new TwilioSmsTransport({
    baseUrl: sim.baseUrl,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: FROM,
    timeoutMs: 2_000,
    ...overrides,
  });
}

/** A port that was just free: nothing listens there, so a connect is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('TwilioSmsTransport against the SMS simulator', () => {
  let sim: SmsSimulator;

  beforeAll(async () => {
    sim = await startSmsSimulator({ statusDelayMs: 10 });
  });
  beforeEach(() => sim.reset());
  afterAll(async () => {
    await sim.close();
  });

  it('returns accepted with the SID of the one message the provider stored', async () => {
    const outcome = await transportFor(sim).send(sms());

    expect(outcome.kind).toBe('accepted');
    const stored = sim.messages();
    expect(stored).toHaveLength(1);
    expect(outcome).toEqual({ kind: 'accepted', receiptId: stored[0]?.sid });
    expect(stored[0]?.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(stored[0]).toMatchObject({ to: TO, from: FROM, body: BODY, statusCallback: null });
    expect(sim.faults.counters).toMatchObject({ createCalls: 1, accepted: 1 });
  });

  it('maps 429 with Retry-After to a throttled retryable outcome carrying the delay', async () => {
    sim.faults.failNext = [{ kind: 'status', status: 429, retryAfterSeconds: 3 }];

    const outcome = await transportFor(sim).send(sms());

    expect(outcome).toEqual({ kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: 3_000 });
    expect(sim.messages()).toHaveLength(0);
  });

  it('maps an invalid destination (400, 21211) to a permanent rejection without leaking the number', async () => {
    const badNumber = '5551234';
    const outcome = await transportFor(sim).send(sms({ to: badNumber }));

    expect(outcome).toEqual({ kind: 'rejected', code: 'twilio_21211', permanent: true });
    expect(JSON.stringify(outcome)).not.toContain(badNumber);
    expect(sim.messages()).toHaveLength(0);
  });

  it('names authentication failures as an account refusal (operator action; a fallback may take over)', async () => {
    const outcome = await transportFor(sim, { authToken: 'not-the-token' }).send(sms());

    expect(outcome).toEqual({ kind: 'operator_action_required', code: 'twilio_20003' });
  });

  it('maps 500 to ambiguous and 503 to retryable (not throttled) with its Retry-After', async () => {
    sim.faults.failNext = [
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503, retryAfterSeconds: 7 },
    ];
    const transport = transportFor(sim);

    expect(await transport.send(sms())).toEqual({ kind: 'ambiguous', code: 'twilio_500' });
    expect(await transport.send(sms())).toEqual({
      kind: 'retryable',
      code: 'twilio_503',
      throttled: false,
      retryAfterMs: 7_000,
    });
  });

  it('reports a timeout after the provider accepted as ambiguous, while the provider holds exactly one message', async () => {
    sim.faults.failNext = [{ kind: 'timeout_after_accept', delayMs: 3_000 }];

    const outcome = await transportFor(sim, { timeoutMs: 150 }).send(sms());

    expect(outcome).toEqual({ kind: 'ambiguous', code: TIMEOUT_CODE });
    expect(sim.messages()).toHaveLength(1);
  });

  it('reports a timeout before the provider accepted as ambiguous too, with nothing stored', async () => {
    sim.faults.failNext = [{ kind: 'timeout_before_accept', delayMs: 3_000 }];

    const outcome = await transportFor(sim, { timeoutMs: 150 }).send(sms());

    // Indistinguishable from the previous case for the client: that is why the reconciler asks.
    expect(outcome).toEqual({ kind: 'ambiguous', code: TIMEOUT_CODE });
    expect(sim.messages()).toHaveLength(0);
  });

  it('reports a connection reset after the request was sent as ambiguous', async () => {
    sim.faults.failNext = [{ kind: 'reset_after_accept' }];

    const outcome = await transportFor(sim).send(sms());

    expect(outcome).toEqual({ kind: 'ambiguous', code: 'connection_reset' });
    expect(sim.messages()).toHaveLength(1);
  });

  it('reports a refused connection as retryable: nothing was sent', async () => {
    const port = await closedPort();
    const transport = new TwilioSmsTransport({
      baseUrl: `http://127.0.0.1:${port}`,
      accountSid: sim.accountSid,
      authToken: sim.authToken,
      from: FROM,
      timeoutMs: 2_000,
    });

    expect(await transport.send(sms())).toEqual({
      kind: 'retryable',
      code: 'connection_refused',
      throttled: false,
    });
  });

  it('finds the accepted message by destination, time and body, and fetches it by SID', async () => {
    const sentAfter = Date.now();
    const transport = transportFor(sim);
    await transport.send(sms({ to: '+15557654321', body: 'someone else' }));
    const outcome = await transport.send(sms());
    await transport.send(sms({ body: 'a different notice' }));
    if (outcome.kind !== 'accepted') throw new Error(`expected accepted, got ${outcome.kind}`);
    const config = { baseUrl: sim.baseUrl, accountSid: sim.accountSid, authToken: sim.authToken };

    const found = await findMessages(config, { to: TO, sentAfter, bodyEquals: BODY });
    expect(found.map((m) => m.sid)).toEqual([outcome.receiptId]);
    expect(found[0]?.dateCreated).toBeGreaterThanOrEqual(Math.floor(sentAfter / 1000) * 1000);

    expect(await findMessages(config, { to: TO, sentAfter })).toHaveLength(2);
    expect(await findMessages(config, { to: TO, sentAfter, bodyEquals: 'never sent' })).toEqual([]);
    expect(await findMessages(config, { to: TO, sentAfter: sentAfter + 86_400_000 })).toEqual([]);

    const fetched = await fetchMessage(config, outcome.receiptId);
    expect(fetched).toMatchObject({ sid: outcome.receiptId, errorCode: null });
    expect(await fetchMessage(config, `SM${'0'.repeat(32)}`)).toBeNull();
  });

  it('pages through listings, and refuses to call a short listing conclusive', async () => {
    const transport = transportFor(sim);
    const sentAfter = Date.now();
    for (let i = 0; i < 5; i++) await transport.send(sms({ body: `message ${i}` }));
    const config = {
      baseUrl: sim.baseUrl,
      accountSid: sim.accountSid,
      authToken: sim.authToken,
      pageSize: 2,
    };

    const all = await findMessages(config, { to: TO, sentAfter });
    expect(all).toHaveLength(5);
    expect(await findMessages(config, { to: TO, sentAfter, bodyEquals: 'message 0' })).toHaveLength(1);

    // Three pages would be needed; with two allowed and no match, the answer is "don't know".
    await expect(
      findMessages({ ...config, maxPages: 2 }, { to: TO, sentAfter, bodyEquals: 'message 0' }),
    ).rejects.toMatchObject({ reason: 'page_limit_reached' });
    await expect(
      findMessages({ ...config, authToken: 'wrong' }, { to: TO, sentAfter }),
    ).rejects.toBeInstanceOf(TwilioLookupError);
  });

  describe('status callbacks', () => {
    let receiver: Server;
    let receiverUrl: string;
    const received: { url: string; signature: string | undefined; params: Record<string, string> }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({
            url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${req.url ?? ''}`,
            signature: req.headers['x-twilio-signature'] as string | undefined,
            params: Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))),
          });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/provider-events/twilio?tenant=t1`;
    });
    beforeEach(() => {
      received.length = 0;
    });
    afterAll(async () => {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    });

    it('carry a signature that verifies, and fails once a parameter is tampered with', async () => {
      const outcome = await transportFor(sim, { statusCallbackUrl: receiverUrl }).send(sms());
      if (outcome.kind !== 'accepted') throw new Error(`expected accepted, got ${outcome.kind}`);

      await vi.waitFor(
        () => expect(received.map((r) => r.params.MessageStatus)).toEqual(['sent', 'delivered']),
        {
          timeout: 5_000,
          interval: 20,
        },
      );

      for (const callback of received) {
        expect(callback.url).toBe(receiverUrl);
        expect(callback.params).toMatchObject({
          MessageSid: outcome.receiptId,
          SmsSid: outcome.receiptId,
          AccountSid: sim.accountSid,
          To: TO,
          From: FROM,
          ApiVersion: '2010-04-01',
        });
        expect(verifyTwilioSignature(sim.authToken, callback.signature, callback.url, callback.params)).toBe(
          true,
        );
        expect(
          verifyTwilioSignature(sim.authToken, callback.signature, callback.url, {
            ...callback.params,
            MessageStatus: 'failed',
          }),
        ).toBe(false);
        expect(
          verifyTwilioSignature('another-token', callback.signature, callback.url, callback.params),
        ).toBe(false);
        expect(
          verifyTwilioSignature(sim.authToken, callback.signature, `${callback.url}&x=1`, callback.params),
        ).toBe(false);
      }
      expect(sim.messages()[0]?.status).toBe('delivered');
    });

    it('can carry the correlation id in the signed callback URL', async () => {
      const transport = transportFor(sim, { statusCallbackUrl: receiverUrl, callbackCorrelationParam: 'c' });
      await transport.send(sms({ correlationId: 'ntc_abc#sms' }));

      await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 5_000, interval: 20 });
      const callback = received[0];
      if (callback === undefined) throw new Error('no callback');
      const url = new URL(callback.url);
      expect(url.searchParams.get('c')).toBe('ntc_abc#sms');
      expect(url.searchParams.get('tenant')).toBe('t1');
      expect(verifyTwilioSignature(sim.authToken, callback.signature, callback.url, callback.params)).toBe(
        true,
      );
      const forged = new URL(callback.url);
      forged.searchParams.set('c', 'ntc_other#sms');
      expect(
        verifyTwilioSignature(sim.authToken, callback.signature, forged.toString(), callback.params),
      ).toBe(false);
    });

    it('report a destination ending in 0000 as undelivered with ErrorCode 30003', async () => {
      const outcome = await transportFor(sim, { statusCallbackUrl: receiverUrl }).send(
        sms({ to: '+15550000000' }),
      );
      expect(outcome.kind).toBe('accepted');

      await vi.waitFor(
        () => expect(received.map((r) => r.params.MessageStatus)).toEqual(['sent', 'undelivered']),
        {
          timeout: 5_000,
          interval: 20,
        },
      );
      expect(received[1]?.params.ErrorCode).toBe('30003');
      expect(received[0]?.params.ErrorCode).toBeUndefined();
    });
  });
});

describe('token bucket', () => {
  it('with 5 per second, 20 rapid sends give exactly 5 accepted and 15 throttled with Retry-After ≥ 1 s', async () => {
    // A frozen clock makes "rapid" exact: no token is refilled between the sends.
    const now = Date.parse('2026-03-01T12:00:00Z');
    const sim = await startSmsSimulator({ clock: () => now });
    try {
      sim.faults.rateLimitPerSecond = 5;
      const transport = transportFor(sim);

      const outcomes = [];
      for (let i = 0; i < 20; i++) outcomes.push(await transport.send(sms()));

      const accepted = outcomes.filter((o) => o.kind === 'accepted');
      const throttled = outcomes.filter((o) => o.kind === 'retryable' && o.throttled);
      expect(accepted).toHaveLength(5);
      expect(throttled).toHaveLength(15);
      for (const o of throttled) {
        expect(o).toMatchObject({ code: 'twilio_429' });
        expect(o.kind === 'retryable' && o.retryAfterMs).toBeGreaterThanOrEqual(1_000);
      }
      expect(sim.messages()).toHaveLength(5);
      expect(sim.faults.counters).toMatchObject({ createCalls: 20, accepted: 5, rateLimited: 15 });
    } finally {
      await sim.close();
    }
  });
});

describe('Twilio response classification', () => {
  const headers = (h: Record<string, string> = {}) => new Headers(h);
  const now = Date.parse('2026-03-01T12:00:00Z');
  const error = (code: number) => ({ code, message: 'The number +15551234567 is …', status: 400 });

  it.each([
    [21211, true],
    [21614, true],
    [21610, true],
    [21408, true],
    [21612, true],
    [21617, true],
  ])('Twilio code %i is a permanent rejection about the message', (code, permanent) => {
    expect(outcomeForTwilioResponse(400, error(code), headers(), now)).toEqual({
      kind: 'rejected',
      code: `twilio_${code}`,
      permanent,
    });
  });

  it.each([20003, 20005])('Twilio code %i refuses our account: operator action', (code) => {
    expect(outcomeForTwilioResponse(401, error(code), headers(), now)).toEqual({
      kind: 'operator_action_required',
      code: `twilio_${code}`,
    });
  });

  it.each([21603, 21606, 21660])('Twilio code %i is a configuration rejection', (code) => {
    expect(outcomeForTwilioResponse(400, error(code), headers(), now)).toEqual({
      kind: 'rejected',
      code: `twilio_config_${code}`,
      permanent: true,
    });
  });

  it('treats a full sender queue (21611) as throttling and unknown codes as non-permanent', () => {
    expect(outcomeForTwilioResponse(400, error(21611), headers(), now)).toEqual({
      kind: 'retryable',
      code: 'twilio_21611',
      throttled: true,
    });
    expect(outcomeForTwilioResponse(400, error(29999), headers(), now)).toEqual({
      kind: 'rejected',
      code: 'twilio_29999',
      permanent: false,
    });
  });

  it('treats gateway errors as ambiguous and a 201 without a SID as ambiguous', () => {
    expect(outcomeForTwilioResponse(502, undefined, headers(), now)).toEqual({
      kind: 'ambiguous',
      code: 'twilio_502',
    });
    expect(outcomeForTwilioResponse(504, undefined, headers(), now)).toEqual({
      kind: 'ambiguous',
      code: 'twilio_504',
    });
    expect(outcomeForTwilioResponse(201, { status: 'queued' }, headers(), now)).toEqual({
      kind: 'ambiguous',
      code: 'twilio_unreadable_2xx',
    });
  });

  it('reads Retry-After as seconds or as an HTTP-date', () => {
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(new Date(now + 5_000).toUTCString(), now)).toBe(5_000);
    expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon-ish', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(
      outcomeForTwilioResponse(
        429,
        { code: 20429 },
        headers({ 'retry-after': new Date(now + 4_000).toUTCString() }),
        now,
      ),
    ).toEqual({ kind: 'retryable', code: 'twilio_429', throttled: true, retryAfterMs: 4_000 });
  });

  it('classifies network errors by whether the request can have been written', () => {
    const fetchFailed = (cause: object) => Object.assign(new TypeError('fetch failed'), { cause });
    expect(outcomeForNetworkError(fetchFailed({ code: 'ECONNRESET', message: 'read ECONNRESET' }))).toEqual({
      kind: 'ambiguous',
      code: 'connection_reset',
    });
    expect(
      outcomeForNetworkError(fetchFailed({ code: 'UND_ERR_SOCKET', message: 'other side closed' })),
    ).toEqual({
      kind: 'ambiguous',
      code: 'connection_reset',
    });
    expect(
      outcomeForNetworkError(fetchFailed({ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND' })),
    ).toEqual({
      kind: 'retryable',
      code: 'dns_failure',
      throttled: false,
    });
    expect(
      outcomeForNetworkError(
        fetchFailed(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])),
      ),
    ).toEqual({ kind: 'retryable', code: 'connection_refused', throttled: false });
    expect(outcomeForNetworkError(new DOMException('signal timed out', 'TimeoutError'))).toEqual({
      kind: 'ambiguous',
      code: TIMEOUT_CODE,
    });
    expect(outcomeForNetworkError(new Error('something new'))).toEqual({
      kind: 'ambiguous',
      code: 'network_error',
    });
  });

  it('never throws for a fetch that rejects, and never puts the number or body into the code', async () => {
    const transport = new TwilioSmsTransport({
      baseUrl: 'https://api.twilio.example',
      accountSid: 'AC00000000000000000000000000000001',
      authToken: 'token',
      from: FROM,
      timeoutMs: 1_000,
      fetch: async () => {
        throw new TypeError(`fetch failed for ${TO}: ${BODY}`);
      },
    });
    const outcome = await transport.send(sms());
    expect(outcome).toEqual({ kind: 'ambiguous', code: 'network_error' });
  });
});

describe('Twilio signatures', () => {
  // The example from Twilio's request-validation documentation and its libraries' tests.
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  };
  const expected = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

  it('matches Twilio’s published example', () => {
    expect(computeTwilioSignature('12345', url, params)).toBe(expected);
    expect(verifyTwilioSignature('12345', expected, url, params)).toBe(true);
  });

  it('accepts the URL with its default port added or removed, as Twilio’s libraries do', () => {
    expect(
      verifyTwilioSignature('12345', expected, 'https://mycompany.com:443/myapp.php?foo=1&bar=2', params),
    ).toBe(true);
    expect(
      verifyTwilioSignature('12345', expected, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', params),
    ).toBe(false);
  });

  it('rejects missing, repeated and garbled headers', () => {
    expect(verifyTwilioSignature('12345', undefined, url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', null, url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', '', url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', [expected, expected], url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', 'not base64 at all!', url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', `${expected}=`, url, params)).toBe(false);
    expect(verifyTwilioSignature('12345', expected.replace('R', 'S'), url, params)).toBe(false);
  });
});

describe('TwilioProviderLookup (the reconciler asks: did this attempt reach Twilio?)', () => {
  it('found for exactly one match in the attempt window; absent for none; undecidable for two identical texts', async () => {
    const { TwilioProviderLookup } = await import('../../lambdas/providers/twilio/lookup.ts');
    const sim = await startSmsSimulator({ statusDelayMs: 10 });
    try {
      const lookup = new TwilioProviderLookup({
        baseUrl: sim.baseUrl,
        accountSid: sim.accountSid,
        authToken: sim.authToken,
      });
      const start = Date.now();
      const query = (to: string) => ({
        correlationId: 'ntc_x-sms',
        destination: to,
        content: BODY,
        attemptStartedAt: start,
        attemptEndedAt: start + 5_000,
      });
      expect((await lookup.lookup(query('+15557770001'))).kind).toBe('absent');
      const sent = await transportFor(sim).send(sms({ to: '+15557770001' }));
      expect(await lookup.lookup(query('+15557770001'))).toMatchObject({
        kind: 'found',
        receiptId: sent.kind === 'accepted' ? sent.receiptId : 'none',
      });
      // Outside the attempt's window it is not this attempt's message.
      expect(
        (
          await lookup.lookup({
            ...query('+15557770001'),
            attemptStartedAt: start + 600_000,
            attemptEndedAt: start + 601_000,
          })
        ).kind,
      ).toBe('absent');
      // Two notices with the same text to one number: the listing cannot tell them apart.
      await transportFor(sim).send(sms({ to: '+15557770002' }));
      await transportFor(sim).send(sms({ to: '+15557770002' }));
      expect((await lookup.lookup(query('+15557770002'))).kind).toBe('undecidable');
    } finally {
      await sim.close();
    }
  });
});
