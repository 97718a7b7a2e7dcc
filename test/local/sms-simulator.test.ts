import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import { countSegments, type SmsSimulator, startSmsSimulator } from '../../local/sms-simulator/server.ts';

const TO = '+15551234567';
const FROM = '+15005550006';
const START = Date.parse('2026-03-01T12:00:00Z');

/** Plain HTTP against the simulator, as a test in another process would drive it. */
function client(sim: SmsSimulator) {
  const auth = `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}`;
  const messagesUrl = `${sim.baseUrl}/2010-04-01/Accounts/${sim.accountSid}/Messages.json`;
  return {
    messagesUrl,
    async create(form: Record<string, string>, authorization = auth) {
      const res = await fetch(messagesUrl, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
      return {
        status: res.status,
        headers: res.headers,
        body: (await res.json()) as Record<string, unknown>,
      };
    },
    async get(pathAndQuery: string) {
      const res = await fetch(`${sim.baseUrl}${pathAndQuery}`, { headers: { authorization: auth } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async control(path: string, body?: unknown) {
      const res = await fetch(`${sim.baseUrl}${path}`, {
        method: body === undefined && path !== '/__reset' ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return {
        status: res.status,
        body: (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown>,
      };
    },
  };
}

describe('SMS simulator: the Twilio API subset', () => {
  let now = START;
  let sim: SmsSimulator;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    sim = await startSmsSimulator({ clock: () => now, fromNumbers: [FROM, '+15005550007'] });
    api = client(sim);
  });
  beforeEach(() => {
    now = START;
    sim.reset();
    // Deterministic dates for listing: messages stay queued unless a test moves them.
    sim.faults.autoAdvance = false;
  });
  afterAll(async () => {
    await sim.close();
  });

  it('binds to 127.0.0.1 on an ephemeral port', () => {
    expect(sim.baseUrl).toBe(`http://127.0.0.1:${sim.port}`);
    expect(sim.port).toBeGreaterThan(0);
  });

  it('creates a message with Twilio’s 201 shape', async () => {
    const res = await api.create({ To: TO, From: FROM, Body: 'hello' });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      account_sid: sim.accountSid,
      to: TO,
      from: FROM,
      body: 'hello',
      status: 'queued',
      num_segments: '1',
      direction: 'outbound-api',
      api_version: '2010-04-01',
      error_code: null,
      error_message: null,
      date_created: 'Sun, 01 Mar 2026 12:00:00 +0000',
      date_sent: null,
    });
    expect(res.body.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(res.body.uri).toBe(`/2010-04-01/Accounts/${sim.accountSid}/Messages/${res.body.sid}.json`);
  });

  it('answers Twilio-style errors for bad credentials and bad input', async () => {
    const cases: [Record<string, string>, number, number][] = [
      [{ From: FROM, Body: 'x' }, 400, 21604],
      [{ To: '555-1234', From: FROM, Body: 'x' }, 400, 21211],
      [{ To: TO, Body: 'x' }, 400, 21603],
      [{ To: TO, From: '+15009999999', Body: 'x' }, 400, 21606],
      [{ To: TO, From: FROM, Body: '' }, 400, 21602],
      [{ To: TO, From: FROM, Body: 'x'.repeat(1601) }, 400, 21617],
      [{ To: TO, From: FROM, Body: 'x', StatusCallback: 'not a url' }, 400, 21609],
    ];
    for (const [form, status, code] of cases) {
      const res = await api.create(form);
      expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
      expect(res.body).toMatchObject({ status, more_info: `https://www.twilio.com/docs/errors/${code}` });
    }
    expect((await api.create({ To: TO, From: FROM, Body: 'x'.repeat(1600) })).status).toBe(201);

    const unauthorized = await api.create({ To: TO, From: FROM, Body: 'x' }, 'Basic bm90OnJpZ2h0');
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body).toMatchObject({ code: 20003, status: 401 });
    expect(sim.messages()).toHaveLength(1);
  });

  it('fetches one message and answers 404 / 20404 for an unknown SID', async () => {
    const created = await api.create({ To: TO, From: FROM, Body: 'hello' });
    const path = `/2010-04-01/Accounts/${sim.accountSid}/Messages`;

    const found = await api.get(`${path}/${created.body.sid}.json`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ sid: created.body.sid, status: 'queued' });

    const missing = await api.get(`${path}/SM${'f'.repeat(32)}.json`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe(20404);
  });

  it('lists newest first with To/From filters, PageSize and PageToken paging', async () => {
    for (let i = 0; i < 7; i++) {
      now = START + i * 1_000;
      await api.create({ To: TO, From: FROM, Body: `m${i}` });
    }
    await api.create({ To: '+15557654321', From: FROM, Body: 'other' });
    await api.create({ To: TO, From: '+15005550007', Body: 'other sender' });

    const base = `/2010-04-01/Accounts/${sim.accountSid}/Messages.json`;
    const bodies: string[] = [];
    let next: string | null =
      `${base}?To=${encodeURIComponent(TO)}&From=${encodeURIComponent(FROM)}&PageSize=3`;
    const pageSizes: number[] = [];
    for (let page = 0; page < 10 && next !== null; page++) {
      const res = await api.get(next);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page, page_size: 3 });
      const messages = res.body.messages as { body: string }[];
      pageSizes.push(messages.length);
      bodies.push(...messages.map((m) => m.body));
      next = res.body.next_page_uri as string | null;
    }
    expect(pageSizes).toEqual([3, 3, 1]);
    expect(bodies).toEqual(['m6', 'm5', 'm4', 'm3', 'm2', 'm1', 'm0']);

    const defaults = await api.get(`${base}?To=${encodeURIComponent(TO)}`);
    expect(defaults.body).toMatchObject({ page_size: 50, next_page_uri: null });
    expect(defaults.body.messages).toHaveLength(8);
    const capped = await api.get(`${base}?PageSize=5000`);
    expect(capped.body.page_size).toBe(1000);
  });

  it('filters by DateSent>= and DateSent<=, as dates or timestamps', async () => {
    const day = 86_400_000;
    for (let i = 0; i < 4; i++) {
      now = START + i * day; // 1st, 2nd, 3rd, 4th of March, noon
      await api.create({ To: TO, From: FROM, Body: `day${i + 1}` });
    }
    const base = `/2010-04-01/Accounts/${sim.accountSid}/Messages.json?To=${encodeURIComponent(TO)}`;
    const list = async (query: string) =>
      ((await api.get(`${base}&${query}`)).body.messages as { body: string }[]).map((m) => m.body);

    expect(await list('DateSent>=2026-03-02')).toEqual(['day4', 'day3', 'day2']);
    expect(await list('DateSent<=2026-03-02')).toEqual(['day2', 'day1']);
    expect(await list('DateSent>=2026-03-02&DateSent<=2026-03-03')).toEqual(['day3', 'day2']);
    expect(await list('DateSent=2026-03-03')).toEqual(['day3']);
    expect(await list(`DateSent>=${encodeURIComponent('2026-03-03T12:00:01Z')}`)).toEqual(['day4']);
    expect(await list(`${encodeURIComponent('DateSent>=')}=2026-03-04`)).toEqual(['day4']);
    expect((await api.get(`${base}&DateSent>=yesterday`)).status).toBe(400);
  });
});

describe('SMS simulator: fault controls over HTTP', () => {
  let now = START;
  let sim: SmsSimulator;
  let api: ReturnType<typeof client>;
  const form = { To: TO, From: FROM, Body: 'hello' };

  beforeAll(async () => {
    sim = await startSmsSimulator({ clock: () => now });
    api = client(sim);
  });
  beforeEach(async () => {
    now = START;
    expect((await api.control('/__reset')).status).toBe(204);
  });
  afterAll(async () => {
    await sim.close();
  });

  it('applies failNext entries in order, then answers normally', async () => {
    const set = await api.control('/__faults', {
      failNext: [
        { kind: 'status', status: 503, retryAfterSeconds: 2 },
        { kind: 'status', status: 400, code: 21610 },
      ],
    });
    expect(set.status).toBe(200);
    expect(set.body.failNext).toHaveLength(2);

    const first = await api.create(form);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(first.body.code).toBe(20503);
    const second = await api.create(form);
    expect({ status: second.status, code: second.body.code }).toEqual({ status: 400, code: 21610 });
    expect((await api.create(form)).status).toBe(201);

    const faults = await api.control('/__faults');
    expect(faults.body.failNext).toEqual([]);
    expect(faults.body.counters).toMatchObject({ createCalls: 3, accepted: 1, faultsInjected: 2 });
  });

  it('listingStatus makes list requests fail (create and fetch still work), until it is cleared', async () => {
    const created = await api.create(form);
    expect((await api.control('/__faults', { listingStatus: 503 })).status).toBe(200);
    const failing = await api.get(`${new URL(api.messagesUrl).pathname}?To=${encodeURIComponent(TO)}`);
    const fetched = await api.get(
      `${new URL(api.messagesUrl).pathname.replace('.json', '')}/${created.body.sid as string}.json`,
    );
    expect(failing).toMatchObject({ status: 503, body: { code: 20503 } });
    expect(fetched.status).toBe(200);
    expect((await api.create(form)).status).toBe(201);
    expect((await api.control('/__faults', { listingStatus: 200 })).status).toBe(400);
    await api.control('/__faults', { listingStatus: null });
    const listed = await api.get(`${new URL(api.messagesUrl).pathname}?To=${encodeURIComponent(TO)}`);
    expect(listed.status).toBe(200);
    expect(listed.body.messages).toHaveLength(2);
  });

  it('rejects a malformed patch with 400 and changes nothing', async () => {
    const bad = await api.control('/__faults', { rateLimitPerSecond: 2, failNext: [{ kind: 'explode' }] });
    expect(bad.status).toBe(400);
    expect(
      await api.control('/__faults', { probabilities: { status500: 0.8, status429: 0.5 } }),
    ).toMatchObject({
      status: 400,
    });
    expect(await api.control('/__faults', { nonsense: true })).toMatchObject({ status: 400 });

    const faults = await api.control('/__faults');
    expect(faults.body).toMatchObject({ rateLimitPerSecond: null, failNext: [] });
  });

  it('rate-limits with a token bucket over HTTP, refilling with the clock', async () => {
    await api.control('/__faults', { rateLimitPerSecond: 2 });

    expect((await api.create(form)).status).toBe(201);
    expect((await api.create(form)).status).toBe(201);
    const limited = await api.create(form);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe(20429);
    expect(limited.headers.get('retry-after')).toBe('1');

    now += 500; // one token at 2/s
    expect((await api.create(form)).status).toBe(201);
    expect((await api.create(form)).status).toBe(429);
    now += 10_000; // the bucket holds at most 2
    expect((await api.create(form)).status).toBe(201);
    expect((await api.create(form)).status).toBe(201);
    expect((await api.create(form)).status).toBe(429);

    const { body } = await api.control('/__messages');
    expect(body.messages).toHaveLength(5);
    expect(body.counters).toMatchObject({ createCalls: 8, accepted: 5, rateLimited: 3 });
  });

  it('reports Retry-After as whole seconds to the next token when the rate is slow', async () => {
    sim.faults.rateLimitPerSecond = 0.25;
    expect((await api.create(form)).status).toBe(201);
    const limited = await api.create(form);
    expect(limited.headers.get('retry-after')).toBe('4');
  });

  it('draws randomized faults from a seeded PRNG, reproducibly', async () => {
    const run = async () => {
      await api.control('/__reset');
      await api.control('/__faults', { seed: 42, probabilities: { status500: 0.3, status429: 0.2 } });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await api.create(form)).status);
      return statuses;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    expect(new Set(first)).toEqual(new Set([201, 500, 429]));
  });

  it('resets messages, counters and faults', async () => {
    await api.create(form);
    await api.control('/__faults', { rateLimitPerSecond: 1, callbacksEnabled: false });

    expect((await api.control('/__reset')).status).toBe(204);

    const { body } = await api.control('/__messages');
    expect(body.messages).toEqual([]);
    expect(body.counters).toMatchObject({ createCalls: 0, accepted: 0 });
    expect((await api.control('/__faults')).body).toMatchObject({
      rateLimitPerSecond: null,
      callbacksEnabled: true,
    });
  });

  describe('status progression and callbacks', () => {
    let receiver: Server;
    let callbackUrl: string;
    const received: { signature: string | undefined; params: Record<string, string> }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({
            signature: req.headers['x-twilio-signature'] as string | undefined,
            params: Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))),
          });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`;
    });
    beforeEach(() => {
      received.length = 0;
    });
    afterAll(async () => {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    });

    it('holds messages in queued when autoAdvance is off, and moves one over HTTP with a signed callback', async () => {
      await api.control('/__faults', { autoAdvance: false });
      const created = await api.create({ ...form, StatusCallback: callbackUrl });
      const sid = created.body.sid as string;

      const moved = await api.control(`/__messages/${sid}/status`, { status: 'failed', errorCode: 30007 });
      expect(moved.body).toMatchObject({ status: 'failed', errorCode: 30007 });
      expect(received).toHaveLength(1);
      expect(received[0]?.params).toMatchObject({
        MessageSid: sid,
        MessageStatus: 'failed',
        ErrorCode: '30007',
      });
      expect(
        verifyTwilioSignature(sim.authToken, received[0]?.signature, callbackUrl, received[0]?.params ?? {}),
      ).toBe(true);

      const fetched = await api.get(`/2010-04-01/Accounts/${sim.accountSid}/Messages/${sid}.json`);
      expect(fetched.body).toMatchObject({ status: 'failed', error_code: 30007 });
    });

    it('moves messages on but sends nothing when callbacks are disabled', async () => {
      await api.control('/__faults', { callbacksEnabled: false, statusDelayMs: 5 });
      await api.create({ ...form, StatusCallback: callbackUrl });

      await vi.waitFor(() => expect(sim.messages()[0]?.status).toBe('delivered'), {
        timeout: 5_000,
        interval: 10,
      });
      expect(received).toEqual([]);
      expect(sim.messages()[0]?.dateSent).toBe(START);
    });

    it('honours configured delivery failures', async () => {
      await api.control('/__faults', {
        statusDelayMs: 5,
        deliveryFailures: [{ toSuffix: '4567', status: 'failed', errorCode: 30006 }],
      });
      await api.create({ ...form, StatusCallback: callbackUrl });

      await vi.waitFor(() => expect(received.map((r) => r.params.MessageStatus)).toEqual(['failed']), {
        timeout: 5_000,
        interval: 10,
      });
      expect(received[0]?.params.ErrorCode).toBe('30006');
      // The simulator records the callback once its answer is back, after the receiver saw it.
      await vi.waitFor(
        () => expect(sim.messages()[0]?.callbacks).toEqual([{ status: 'failed', httpStatus: 200 }]),
        { timeout: 5_000, interval: 10 },
      );
    });
  });
});

describe('segment counting', () => {
  it('counts GSM-7 and UCS-2 segments as carriers do', () => {
    expect(countSegments('a'.repeat(160))).toBe(1);
    expect(countSegments('a'.repeat(161))).toBe(2);
    expect(countSegments('€'.repeat(80))).toBe(1); // extension characters take two septets
    expect(countSegments('€'.repeat(81))).toBe(2);
    expect(countSegments('ü'.repeat(160))).toBe(1);
    expect(countSegments('ł'.repeat(70))).toBe(1);
    expect(countSegments('ł'.repeat(71))).toBe(2);
  });
});

describe('SMS simulator: a store that survives a restart, on a port that can be set', () => {
  it('keeps its messages in the store file; a restart on the same file and port still has them and finishes their delivery', async () => {
    // Prepare
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { freePort } = await import('../../local/process-utils.ts');
    const dir = await mkdtemp(join(tmpdir(), 'sms-store-'));
    const storeFile = join(dir, 'twilio-simulator.json');
    const port = await freePort();
    const first = await startSmsSimulator({ port, storeFile, fromNumbers: [FROM], statusDelayMs: 10 });
    // Nothing progresses in the first run: as if the process died right after the 201s.
    first.faults.set({ autoAdvance: false });
    const created = [await client(first).create({ To: TO, From: FROM, Body: 'one' })];
    created.push(await client(first).create({ To: TO, From: FROM, Body: 'two' }));

    // Act: a kill -9 leaves the file as the last request wrote it; start again on it.
    await first.close();
    const second = await startSmsSimulator({
      port,
      storeFile,
      fromNumbers: [FROM],
      accountSid: first.accountSid,
      authToken: first.authToken,
      statusDelayMs: 10,
    });

    // Assess
    try {
      expect(second.port).toBe(port);
      expect(second.messages().map((m) => [m.sid, m.body])).toEqual(
        created.map((c) => [c.body.sid, c.body.body]),
      );
      await vi.waitFor(() =>
        expect(second.messages().map((m) => m.status)).toEqual(['delivered', 'delivered']),
      );
      const listed = await client(second).get(
        `/2010-04-01/Accounts/${second.accountSid}/Messages.json?To=${encodeURIComponent(TO)}`,
      );
      expect((listed.body.messages as unknown[]).length).toBe(2);
    } finally {
      await second.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
