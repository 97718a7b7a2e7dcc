import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { resolveDestination } from '../../lambdas/domain/destination.ts';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import type { TemplateDefinition } from '../../lambdas/domain/template.ts';
import { createTemplateCatalog } from '../../lambdas/domain/template-catalog.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { createHttpApi } from '../../lambdas/handlers/http/router.ts';
import { computeTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { logger, metrics } from '../../lambdas/wiring/observability.ts';
import { loadInbound, providerEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { LOCAL_OPERATOR_ROLE } from '../../local/callers.ts';
import { type ApiEventInput, apiEvent, contentType, responseJson } from '../helpers/api-events.ts';
import { T0, TEST_KEY } from '../helpers/factories.ts';
import {
  AUTH_TOKEN,
  type Harness,
  harness,
  PUBLIC_BASE_URL,
  type Reply,
  SID,
  TEST_CALLERS,
  TWILIO_PATH,
  twilioCallback,
  twilioHardBounce,
} from '../helpers/http-harness.ts';

// Personal data the requests carry. None of it may appear in a response body or a log line.
const EMAIL = 'zelda.quartz@example.com';
const PHONE = '+15551234567';
const PHONE_IN_PATH = '%2B15551234567';
const FIRST_NAME = 'Zebulonius';
const PORTAL_URL = 'https://portal.example.org/r/83af9c';
const PERSONAL = [EMAIL, PHONE, PHONE_IN_PATH, FIRST_NAME, PORTAL_URL];

function noticeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventId: 'evt_8f31',
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: EMAIL, phone: PHONE },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: FIRST_NAME, portalUrl: PORTAL_URL },
    deadline: '2026-12-01T09:00:00Z',
    ...overrides,
  };
}

const submit = (h: Harness, body: unknown) => h.call({ method: 'POST', path: '/v1/notices', body });

function expectNoPersonalData(text: string, extra: readonly string[] = []): void {
  for (const value of [...PERSONAL, ...extra]) expect(text).not.toContain(value);
}

function expectProblem(reply: Reply, status: number, type: string): void {
  expect(reply.status).toBe(status);
  expect(contentType(reply.raw)).toBe('application/problem+json');
  expect(reply.json).toMatchObject({ type, status, title: expect.any(String) });
}

const PROBLEM = 'https://notice-ledger.dev/problems';

let logs: string[];
let requestLines: Record<string, unknown>[];

beforeEach(() => {
  logs = [];
  requestLines = [];
  const capture =
    (level: string) =>
    (...args: unknown[]) => {
      logs.push(`${level} ${JSON.stringify(args)}`);
      if (level === 'info' && args[0] === 'http request')
        requestLines.push(args[1] as Record<string, unknown>);
    };
  vi.spyOn(logger, 'info').mockImplementation(capture('info') as never);
  vi.spyOn(logger, 'warn').mockImplementation(capture('warn') as never);
  vi.spyOn(logger, 'error').mockImplementation(capture('error') as never);
});

afterEach(() => {
  // Privacy holds for every test: no log line carries a destination or a variable value.
  for (const line of logs) expectNoPersonalData(line);
  vi.restoreAllMocks();
});

describe('POST /v1/notices', () => {
  it('takes an absent or null `variables` as {} for a template that requires none', async () => {
    // Prepare: a portal reminder whose only variable is optional.
    const portalReminder: TemplateDefinition = {
      id: 'portal-reminder',
      version: 'v1',
      description: 'Reminds a patient to sign in to the portal.',
      variables: { portalUrl: { type: 'https_url', required: false, maxLength: 2048 } },
      email: {
        subject: 'A message in your portal',
        text: 'Please sign in to your patient portal.{{#portalUrl}} {{portalUrl}}{{/portalUrl}}\n',
        html: '<p>Please sign in to your patient portal.</p>\n',
      },
      sms: { text: 'Please sign in to your patient portal.' },
    };
    const h = harness({ catalog: createTemplateCatalog([portalReminder]) });
    const body = (eventId: string, variables: unknown) => ({
      ...noticeBody({ eventId, template: { id: 'portal-reminder', version: 'v1' } }),
      variables,
    });

    // Act
    const absent = await submit(h, body('evt_absent', undefined));
    const nulled = await submit(h, body('evt_null', null));
    const empty = await submit(h, body('evt_empty', {}));
    const absentAgain = await submit(h, body('evt_absent', {}));

    // Assess: all three recorded; {} is the same content as absent (a replay, not a 409).
    expect([absent.status, nulled.status, empty.status]).toEqual([202, 202, 202]);
    expect(absentAgain.status).toBe(200);
  });

  it('answers 202 on creation, 200 on an exact replay and 409 on changed content', async () => {
    // Prepare
    const h = harness();
    const noticeId = deriveNoticeId('lab-result-ready', 'evt_8f31', 'pat_1042');

    // Act
    const created = await submit(h, noticeBody());
    const replay = await submit(h, noticeBody());
    const changedVariables = await submit(h, noticeBody({ variables: { firstName: 'Someone Else' } }));
    const changedTemplate = await submit(
      h,
      noticeBody({
        template: { id: 'appointment-reminder', version: 'v1' },
        variables: { firstName: FIRST_NAME, appointmentDate: '2026-12-03T09:30' },
      }),
    );

    // Assess
    expect(created.status).toBe(202);
    expect(contentType(created.raw)).toBe('application/json');
    expect(created.json).toEqual({
      noticeId,
      created: true,
      channels: [
        { channel: 'email', state: 'reserved' },
        { channel: 'sms', state: 'reserved' },
      ],
    });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({ ...created.json, created: false });
    for (const conflict of [changedVariables, changedTemplate]) {
      expectProblem(conflict, 409, `${PROBLEM}/notice-conflict`);
      expect(conflict.json).toMatchObject({
        noticeId,
        channels: [
          { channel: 'email', state: 'reserved', outcome: 'conflict' },
          { channel: 'sms', state: 'reserved', outcome: 'conflict' },
        ],
      });
    }
    // What differs, by path, never by value.
    const differs = (reply: Reply) =>
      reply.json.errors.map((e: { path: string; code: string }) => [e.path, e.code]);
    expect(differs(changedVariables)).toEqual([
      ['variables.firstName', 'differs_from_recorded'],
      ['variables.portalUrl', 'differs_from_recorded'],
    ]);
    expect(changedVariables.json.channels[0].differs).toEqual(['variables.firstName', 'variables.portalUrl']);
    expect(differs(changedTemplate)).toEqual([
      ['template.id', 'differs_from_recorded'],
      ['template.version', 'differs_from_recorded'],
      ['variables.appointmentDate', 'differs_from_recorded'],
      ['variables.portalUrl', 'differs_from_recorded'],
    ]);
    // One message per created channel; replays and conflicts enqueue nothing.
    expect(h.enqueued).toEqual([
      { noticeId, channel: 'email' },
      { noticeId, channel: 'sms' },
    ]);
    expect((await h.store.get(noticeId, 'email'))?.templateVersion).toBe('v3');
    for (const body of h.bodies) expectNoPersonalData(body, ['Someone Else']);
    expect(requestLines.map((line) => [line.route, line.status, line.noticeId])).toEqual([
      ['POST /v1/notices', 202, noticeId],
      ['POST /v1/notices', 200, noticeId],
      ['POST /v1/notices', 409, noticeId],
      ['POST /v1/notices', 409, noticeId],
    ]);
  });

  it('records only the requested channel and accepts a charset parameter and null optionals', async () => {
    // Prepare
    const h = harness();

    // Act
    const reply = await h.call({
      method: 'POST',
      path: '/v1/notices',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: noticeBody({
        channels: ['sms'],
        recipient: { id: 'pat_1042', email: null, phone: PHONE },
        deadline: null,
      }),
    });

    // Assess
    expect(reply.status).toBe(202);
    expect(reply.json.channels).toEqual([{ channel: 'sms', state: 'reserved' }]);
    const [row] = await h.store.getNotice(reply.json.noticeId);
    expect(row?.deadline).toBe(T0 + 86_400_000);
  });

  const tooDeep = (() => {
    let nested: unknown = 'x';
    for (let i = 0; i < 40; i++) nested = [nested];
    return JSON.stringify(noticeBody({ variables: { firstName: nested } }));
  })();
  const withoutEventId = (() => {
    const { eventId: _omitted, ...rest } = noticeBody();
    return rest;
  })();

  interface MalformedCase {
    readonly name: string;
    readonly request: Partial<ApiEventInput>;
    readonly status: number;
    readonly type: string;
    /** [path, code] pairs that must be among `errors`. */
    readonly errors?: readonly (readonly [string, string])[];
    /** Submitted values that must not be echoed. */
    readonly secrets?: readonly string[];
  }

  const invalid = `${PROBLEM}/invalid-request`;
  const unprocessable = `${PROBLEM}/unprocessable-notice`;
  const malformed = `${PROBLEM}/malformed-body`;
  const CASES: readonly MalformedCase[] = [
    {
      name: 'not JSON',
      request: { body: `{"eventId": "evt", "recipient": "${EMAIL}"` },
      status: 400,
      type: malformed,
    },
    {
      name: 'a JSON array',
      request: { body: [noticeBody()] },
      status: 400,
      type: invalid,
      errors: [['', 'wrong_type']],
    },
    {
      name: 'JSON null',
      request: { body: 'null' },
      status: 400,
      type: invalid,
      errors: [['', 'wrong_type']],
    },
    { name: 'an empty body', request: { body: '' }, status: 400, type: malformed },
    {
      name: 'missing eventId',
      request: { body: withoutEventId },
      status: 400,
      type: invalid,
      errors: [['eventId', 'required']],
    },
    {
      name: 'eventId with a control character',
      request: { body: noticeBody({ eventId: 'evt\u0007_1' }) },
      status: 400,
      type: invalid,
      errors: [['eventId', 'invalid_characters']],
    },
    {
      name: 'a 129-character eventId',
      request: { body: noticeBody({ eventId: 'e'.repeat(129) }) },
      status: 400,
      type: invalid,
      errors: [['eventId', 'too_long']],
    },
    {
      name: 'eventType of the wrong type',
      request: { body: noticeBody({ eventType: 42 }) },
      status: 400,
      type: invalid,
      errors: [['eventType', 'wrong_type']],
    },
    {
      name: 'an empty recipient id',
      request: { body: noticeBody({ recipient: { id: '', email: EMAIL, phone: PHONE } }) },
      status: 400,
      type: invalid,
      errors: [['recipient.id', 'too_short']],
    },
    {
      name: 'empty channels',
      request: { body: noticeBody({ channels: [] }) },
      status: 400,
      type: invalid,
      errors: [['channels', 'too_few']],
    },
    {
      name: 'a repeated channel',
      request: { body: noticeBody({ channels: ['sms', 'sms'] }) },
      status: 400,
      type: invalid,
      errors: [['channels.1', 'duplicate']],
    },
    {
      name: 'an unknown channel',
      request: { body: noticeBody({ channels: ['email', 'fax'] }) },
      status: 400,
      type: invalid,
      errors: [['channels.1', 'not_allowed']],
    },
    {
      name: 'the email channel without an email',
      request: { body: noticeBody({ recipient: { id: 'pat_1042', phone: PHONE } }) },
      status: 400,
      type: invalid,
      errors: [['recipient.email', 'required']],
    },
    {
      name: 'an invalid email address',
      request: {
        body: noticeBody({ recipient: { id: 'pat_1042', email: 'zelda.quartz.example.com', phone: PHONE } }),
      },
      status: 400,
      type: invalid,
      errors: [['recipient.email', 'email_missing_at']],
      secrets: ['zelda.quartz.example.com'],
    },
    {
      name: 'an invalid phone number',
      request: { body: noticeBody({ recipient: { id: 'pat_1042', email: EMAIL, phone: '0155 5123 999' } }) },
      status: 400,
      type: invalid,
      errors: [['recipient.phone', 'phone_separators']],
      secrets: ['0155 5123 999', '01555123999'],
    },
    {
      name: 'an unknown top-level field',
      request: { body: noticeBody({ deadlne: '2026-12-01T09:00:00Z' }) },
      status: 400,
      type: invalid,
      errors: [['deadlne', 'unknown_field']],
    },
    {
      name: 'an unknown recipient field carrying personal data',
      request: {
        body: noticeBody({ recipient: { id: 'pat_1042', email: EMAIL, phone: PHONE, name: 'Zelda Quartz' } }),
      },
      status: 400,
      type: invalid,
      errors: [['recipient.name', 'unknown_field']],
      secrets: ['Zelda Quartz'],
    },
    {
      name: 'a template without version',
      request: { body: noticeBody({ template: { id: 'lab-result-ready' } }) },
      status: 400,
      type: invalid,
      errors: [['template.version', 'required']],
    },
    {
      name: 'variables that are an array',
      request: { body: noticeBody({ variables: [FIRST_NAME] }) },
      status: 400,
      type: invalid,
      errors: [['variables', 'wrong_type']],
    },
    {
      name: 'a variable name that is not an identifier',
      request: { body: noticeBody({ variables: { firstName: FIRST_NAME, [EMAIL]: 'x' } }) },
      status: 400,
      type: invalid,
      errors: [['variables', 'invalid_variable_name']],
    },
    {
      name: 'more than 50 variables',
      request: {
        body: noticeBody({
          variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])),
        }),
      },
      status: 400,
      type: invalid,
      errors: [['variables', 'too_many']],
    },
    {
      name: 'a deadline of the wrong type',
      request: { body: noticeBody({ deadline: 1796115600000 }) },
      status: 400,
      type: invalid,
      errors: [['deadline', 'wrong_type']],
    },
    {
      name: 'a deadline in the past',
      request: { body: noticeBody({ deadline: '2026-11-30T09:59:59Z' }) },
      status: 422,
      type: unprocessable,
      errors: [['deadline', 'deadline_not_in_future']],
    },
    {
      name: 'a deadline that is not a date',
      request: { body: noticeBody({ deadline: 'next tuesday' }) },
      status: 422,
      type: unprocessable,
      errors: [['deadline', 'invalid_date_time']],
      secrets: ['next tuesday'],
    },
    {
      name: 'a deadline on 30 February',
      request: { body: noticeBody({ deadline: '2027-02-30T09:00:00Z' }) },
      status: 422,
      type: unprocessable,
      errors: [['deadline', 'invalid_date_time']],
    },
    {
      name: 'a deadline without offset',
      request: { body: noticeBody({ deadline: '2026-12-01T09:00:00' }) },
      status: 422,
      type: unprocessable,
      errors: [['deadline', 'missing_offset']],
    },
    {
      name: 'an unknown template',
      request: { body: noticeBody({ template: { id: 'lab-result-ready-shouty', version: 'v3' } }) },
      status: 422,
      type: unprocessable,
      errors: [['template', 'unknown_template']],
      secrets: ['lab-result-ready-shouty'],
    },
    {
      name: 'an unknown template version',
      request: { body: noticeBody({ template: { id: 'lab-result-ready', version: 'v99' } }) },
      status: 422,
      type: unprocessable,
      errors: [['template', 'unknown_template']],
    },
    {
      name: 'a missing required variable',
      request: { body: noticeBody({ variables: { portalUrl: PORTAL_URL } }) },
      status: 422,
      type: unprocessable,
      errors: [['variables.firstName', 'missing']],
    },
    {
      name: 'no variables at all: {} by the template contract, which names what is missing',
      request: { body: noticeBody({ variables: undefined }) },
      status: 422,
      type: unprocessable,
      errors: [['variables.firstName', 'missing']],
    },
    {
      name: 'a variable of the wrong type',
      request: { body: noticeBody({ variables: { firstName: 31337 } }) },
      status: 422,
      type: unprocessable,
      errors: [['variables.firstName', 'wrong_type']],
      secrets: ['31337'],
    },
    {
      name: 'a non-https portalUrl',
      request: {
        body: noticeBody({
          variables: { firstName: FIRST_NAME, portalUrl: 'http://portal.example.org/r/83af9c' },
        }),
      },
      status: 422,
      type: unprocessable,
      errors: [['variables.portalUrl', 'not_https_url']],
      secrets: ['portal.example.org'],
    },
    {
      name: 'an unknown variable',
      request: { body: noticeBody({ variables: { firstName: FIRST_NAME, diagnosis: 'Hypothyroidism' } }) },
      status: 422,
      type: unprocessable,
      errors: [['variables.diagnosis', 'unknown_variable']],
      secrets: ['Hypothyroidism'],
    },
    {
      name: 'a variable with a line break',
      request: { body: noticeBody({ variables: { firstName: `${FIRST_NAME}\nBcc: x` } }) },
      status: 422,
      type: unprocessable,
      errors: [['variables.firstName', 'invalid_characters']],
    },
    {
      name: 'a 300 KiB body',
      request: { body: noticeBody({ variables: { firstName: 'x'.repeat(300 * 1024) } }) },
      status: 413,
      type: `${PROBLEM}/payload-too-large`,
    },
    {
      name: 'text/plain',
      request: { body: noticeBody(), headers: { 'content-type': 'text/plain' } },
      status: 415,
      type: `${PROBLEM}/unsupported-media-type`,
    },
    {
      name: 'no content type',
      request: { body: noticeBody(), headers: { 'content-type': undefined } },
      status: 415,
      type: `${PROBLEM}/unsupported-media-type`,
    },
    {
      name: 'a charset other than UTF-8',
      request: { body: noticeBody(), headers: { 'content-type': 'application/json; charset=iso-8859-1' } },
      status: 415,
      type: `${PROBLEM}/unsupported-media-type`,
    },
    { name: 'nesting deeper than 32 levels', request: { body: tooDeep }, status: 400, type: malformed },
    {
      name: 'bytes that are not UTF-8',
      request: {
        body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('base64'),
        isBase64Encoded: true,
      },
      status: 400,
      type: malformed,
    },
  ];

  for (const c of CASES) {
    it(`rejects ${c.name} with ${c.status}`, async () => {
      // Prepare
      const h = harness();

      // Act
      const reply = await h.call({ method: 'POST', path: '/v1/notices', ...c.request });

      // Assess
      expectProblem(reply, c.status, c.type);
      const paths = ((reply.json.errors ?? []) as { path: string; code: string; message: string }[]).map(
        (e) => [e.path, e.code] as const,
      );
      for (const expected of c.errors ?? []) expect(paths).toContainEqual(expected);
      for (const e of reply.json.errors ?? []) expect(e.message).toEqual(expect.any(String));
      expectNoPersonalData(reply.raw.body ?? '', c.secrets);
      expect(h.store.intents.size).toBe(0);
      expect(h.enqueued).toEqual([]);
    });
  }
});

describe('POST /v1/notices/batch', () => {
  it('answers each item with the status it would get alone and records the valid ones', async () => {
    // Prepare
    const h = harness();
    await submit(h, noticeBody({ eventId: 'evt_existing' }));
    const items = [
      noticeBody({ eventId: 'evt_b1' }),
      noticeBody({ eventId: 'evt_b2', channels: [] }),
      noticeBody({ eventId: 'evt_b3', channels: ['sms'] }),
      noticeBody({ eventId: 'evt_b4', template: { id: 'nope', version: 'v1' } }),
      noticeBody({ eventId: 'evt_existing' }),
      noticeBody({ eventId: 'evt_existing', variables: { firstName: 'Changed' } }),
      'not an object',
    ];

    // Act
    const reply = await h.call({ method: 'POST', path: '/v1/notices/batch', body: { notices: items } });

    // Assess
    expect(reply.status).toBe(200);
    const results = reply.json.results;
    expect(results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([
      [0, 202],
      [1, 400],
      [2, 202],
      [3, 422],
      [4, 200],
      [5, 409],
      [6, 400],
    ]);
    expect(results[0]?.noticeId).toBe(deriveNoticeId('lab-result-ready', 'evt_b1', 'pat_1042'));
    expect(results[1]?.error).toMatchObject({ status: 400, type: `${PROBLEM}/invalid-request` });
    expect(results[1]?.error.errors).toContainEqual(
      expect.objectContaining({ path: 'channels', code: 'too_few' }),
    );
    expect(results[3]?.error).toMatchObject({
      status: 422,
      errors: [expect.objectContaining({ path: 'template' })],
    });
    expect(results[5]).toMatchObject({
      noticeId: deriveNoticeId('lab-result-ready', 'evt_existing', 'pat_1042'),
      error: { status: 409, channels: expect.any(Array) },
    });
    expect(results[6]?.error.errors).toContainEqual(
      expect.objectContaining({ path: '', code: 'wrong_type' }),
    );
    // evt_existing (2) + evt_b1 (2) + evt_b3 (1)
    expect(h.store.intents.size).toBe(5);
    expect(await h.store.get(deriveNoticeId('lab-result-ready', 'evt_b3', 'pat_1042'), 'sms')).toBeDefined();
    expectNoPersonalData(reply.raw.body ?? '', ['Changed']);
  });

  it('gives an item that fails on infrastructure a 500 result and keeps the others', async () => {
    // Prepare
    const store = new MemoryLedgerStore();
    const reserve = store.reserve.bind(store);
    vi.spyOn(store, 'reserve').mockImplementation(async (intent) => {
      if (intent.eventId === 'evt_doomed') throw new Error('ProvisionedThroughputExceededException');
      return reserve(intent);
    });
    const h = harness({ store });

    // Act
    const reply = await h.call({
      method: 'POST',
      path: '/v1/notices/batch',
      body: { notices: [noticeBody({ eventId: 'evt_ok' }), noticeBody({ eventId: 'evt_doomed' })] },
    });

    // Assess
    expect(reply.status).toBe(200);
    expect(reply.json.results.map((r: { status: number }) => r.status)).toEqual([202, 500]);
    expect(reply.raw.body).not.toContain('ProvisionedThroughput');
  });

  const BODY_CASES: readonly {
    name: string;
    request: Partial<ApiEventInput>;
    status: number;
    path?: string;
  }[] = [
    {
      name: '101 items',
      request: { body: { notices: Array.from({ length: 101 }, () => noticeBody()) } },
      status: 400,
      path: 'notices',
    },
    {
      name: 'notices that is not an array',
      request: { body: { notices: noticeBody() } },
      status: 400,
      path: 'notices',
    },
    { name: 'no notices', request: { body: { notices: [] } }, status: 400, path: 'notices' },
    { name: 'a body without notices', request: { body: { items: [] } }, status: 400, path: 'notices' },
    { name: 'a body that is not JSON', request: { body: '{"notices": [' }, status: 400 },
    {
      name: 'a wrong content type',
      request: { body: { notices: [noticeBody()] }, headers: { 'content-type': 'text/plain' } },
      status: 415,
    },
  ];

  for (const c of BODY_CASES) {
    it(`rejects a batch with ${c.name} as a whole`, async () => {
      // Prepare
      const h = harness();

      // Act
      const reply = await h.call({ method: 'POST', path: '/v1/notices/batch', ...c.request });

      // Assess
      expect(reply.status).toBe(c.status);
      expect(contentType(reply.raw)).toBe('application/problem+json');
      if (c.path !== undefined)
        expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(c.path);
      expect(h.store.intents.size).toBe(0);
      expectNoPersonalData(reply.raw.body ?? '');
    });
  }
});

describe('GET /v1/notices/{noticeId}', () => {
  it('returns the timeline with masked destinations, ISO times and no envelope', async () => {
    // Prepare
    const h = harness();
    const { json: created } = await submit(h, noticeBody());
    h.clock.now = T0 + 5_000;
    await deliverIntent({ noticeId: created.noticeId, channel: 'sms' }, h.deps);

    // Act
    const reply = await h.call({ method: 'GET', path: `/v1/notices/${created.noticeId}` });

    // Assess
    expect(reply.status).toBe(200);
    const email = resolveDestination(TEST_KEY, 'email', EMAIL);
    const phone = resolveDestination(TEST_KEY, 'sms', PHONE);
    expect(Object.keys(reply.json).sort()).toEqual(
      [
        'channels',
        'createdAt',
        'deadline',
        'eventId',
        'eventType',
        'noticeId',
        'recipientId',
        'source',
        'template',
      ].sort(),
    );
    expect(reply.json).toMatchObject({
      noticeId: created.noticeId,
      source: 'ledger',
      eventId: 'evt_8f31',
      eventType: 'lab-result-ready',
      recipientId: 'pat_1042',
      template: { id: 'lab-result-ready', version: 'v3' },
      createdAt: '2026-11-30T10:00:00.000Z',
      deadline: '2026-12-01T09:00:00.000Z',
    });
    const [emailChannel, smsChannel] = reply.json.channels;
    const channelKeys = [
      'attempts',
      'channel',
      'destination',
      'escalatedAt',
      'next',
      'nextAttemptAt',
      'priority',
      'provider',
      'providerReceiptId',
      'source',
      'state',
      'submittedBy',
      'transitions',
    ];
    expect(Object.keys(emailChannel).sort()).toEqual(channelKeys);
    expect(Object.keys(smsChannel).sort()).toEqual([...channelKeys, 'sms'].sort());
    expect(emailChannel).toEqual({
      channel: 'email',
      source: 'ledger',
      state: 'reserved',
      destination: { fingerprint: email.fingerprint, masked: email.masked },
      provider: null,
      providerReceiptId: null,
      attempts: 0,
      priority: 'standard',
      nextAttemptAt: null,
      escalatedAt: null,
      // Submitted without IAM context: the harness's unsigned caller, the local operator role.
      submittedBy: LOCAL_OPERATOR_ROLE,
      // What happens next, derived from the row: it waits for a worker until its deadline.
      next: {
        kind: 'send',
        at: '2026-12-01T09:00:00.000Z',
        summary: 'waiting to be sent; failed at its deadline 2026-12-01T09:00:00.000Z if not sent by then',
      },
      transitions: [{ seq: 1, at: '2026-11-30T10:00:00.000Z', from: null, to: 'reserved', reason: 'intake' }],
    });
    expect(email.masked).toBe('z**********z@example.com');
    expect(smsChannel).toMatchObject({
      channel: 'sms',
      state: 'accepted',
      destination: { fingerprint: phone.fingerprint, masked: '+1******4567' },
      provider: 'twilio',
      providerReceiptId: SID,
      attempts: 1,
      nextAttemptAt: null,
      sms: { encoding: 'GSM-7', segments: expect.any(Number), characters: expect.any(Number) },
    });
    expect(
      smsChannel.transitions.map((t: { seq: number; to: string; reason: string }) => [t.seq, t.to, t.reason]),
    ).toEqual([
      [1, 'reserved', 'intake'],
      [2, 'sending', 'claimed'],
      [3, 'accepted', 'provider_accepted'],
    ]);
    for (const t of smsChannel.transitions) expect(t.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const hidden of ['envelope', 'leaseOwner', 'leaseExpiresAt', 'contentDigest', 'dueAt', 'e1.']) {
      expect(reply.raw.body).not.toContain(hidden);
    }
    expectNoPersonalData(reply.raw.body ?? '');
    expect(requestLines.at(-1)).toMatchObject({
      route: 'GET /v1/notices/{noticeId}',
      status: 200,
      noticeId: created.noticeId,
    });
  });

  it('answers 404 for an unknown notice and 400 for an id that cannot be one', async () => {
    // Prepare
    const h = harness();

    // Act
    const unknown = await h.call({ method: 'GET', path: `/v1/notices/${deriveNoticeId('a', 'b', 'c')}` });
    const malformedId = await h.call({ method: 'GET', path: '/v1/notices/ntc_NOT-AN-ID' });

    // Assess
    expectProblem(unknown, 404, `${PROBLEM}/not-found`);
    expectProblem(malformedId, 400, `${PROBLEM}/invalid-request`);
    expect(malformedId.json.errors).toEqual([
      expect.objectContaining({ path: 'noticeId', code: 'invalid_format' }),
    ]);
  });
});

describe('/v1/suppressions/{channel}/{destination}', () => {
  it('keeps a history: PUT appends, DELETE appends a lift, GET shows both (by URL-encoded phone number)', async () => {
    // Prepare
    const h = harness();
    const path = `/v1/suppressions/sms/${PHONE_IN_PATH}`;
    const phone = resolveDestination(TEST_KEY, 'sms', PHONE);

    // Act
    const created = await h.call({
      method: 'PUT',
      path,
      body: { reason: 'patient_request', actor: 'ops-7' },
    });
    h.clock.now = T0 + 1_000;
    const again = await h.call({ method: 'PUT', path });
    // A literal plus must stay a plus (not become a space) and name the same entry.
    const literalPlus = await h.call({ method: 'GET', path: `/v1/suppressions/sms/${PHONE}` });
    h.clock.now = T0 + 2_000;
    const lifted = await h.call({ method: 'DELETE', path });
    const afterLift = await h.call({ method: 'GET', path });
    const liftedAgain = await h.call({ method: 'DELETE', path });
    const never = await h.call({ method: 'GET', path: '/v1/suppressions/sms/%2B15559876543' });

    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      channel: 'sms',
      destination: { fingerprint: phone.fingerprint, masked: '+1******4567' },
      suppressed: true,
      latest: {
        action: 'suppress',
        reason: 'patient_request',
        source: 'operator',
        actor: 'ops-7',
        at: '2026-11-30T10:00:00.000Z',
        code: null,
      },
      history: [
        {
          action: 'suppress',
          reason: 'patient_request',
          source: 'operator',
          actor: 'ops-7',
          at: '2026-11-30T10:00:00.000Z',
          code: null,
        },
      ],
      historyTruncated: false,
    });
    expect(again.status).toBe(200);
    // No IAM principal and no body actor (the local stack): `local`, as on transition records.
    expect(again.json.latest).toMatchObject({ reason: 'operator', actor: 'local' });
    expect(again.json.history).toHaveLength(2);
    expect(literalPlus.status).toBe(200);
    expect(literalPlus.json.destination.fingerprint).toBe(phone.fingerprint);
    expect(lifted.status).toBe(204);
    expect(lifted.raw.body).toBeUndefined();
    expect(afterLift.status).toBe(200);
    expect(afterLift.json).toMatchObject({
      suppressed: false,
      latest: { action: 'lift', reason: 'lifted_by_operator', source: 'operator' },
    });
    expect(
      afterLift.json.history.map((r: { action: string; reason: string }) => [r.action, r.reason]),
    ).toEqual([
      ['suppress', 'patient_request'],
      ['suppress', 'operator'],
      ['lift', 'lifted_by_operator'],
    ]);
    expectProblem(liftedAgain, 404, `${PROBLEM}/not-found`);
    expectProblem(never, 404, `${PROBLEM}/not-found`);
    for (const body of h.bodies) expectNoPersonalData(body);
    expect(requestLines.map((line) => line.route)).toContain('PUT /v1/suppressions/{channel}/{destination}');
  });

  it("an operator's PUT stands beside a provider's hard bounce, which stays in the history", async () => {
    // Prepare
    const h = harness();
    const phone = resolveDestination(TEST_KEY, 'sms', PHONE);
    await twilioHardBounce(h, phone);
    const path = `/v1/suppressions/sms/${PHONE_IN_PATH}`;

    // Act
    const put = await h.call({ method: 'PUT', path, body: { reason: 'patient_request' } });

    // Assess
    expect(put.status).toBe(200);
    expect(put.json.history).toEqual([
      expect.objectContaining({ reason: 'hard_bounce', source: 'provider', actor: 'twilio', code: '30005' }),
      expect.objectContaining({ reason: 'patient_request', source: 'operator' }),
    ]);
  });

  it('takes the actor from IAM credentials and refuses another one in the body', async () => {
    // Prepare
    const h = harness();
    const path = `/v1/suppressions/sms/${PHONE_IN_PATH}`;
    const withIam = (event: ReturnType<typeof apiEvent>) => ({
      ...event,
      requestContext: {
        ...event.requestContext,
        authorizer: { iam: { userArn: 'arn:aws:iam::123456789012:user/ops-lead' } },
      },
    });

    // Act
    const put = await h.call(withIam(apiEvent({ method: 'PUT', path })));
    const spoofed = await h.call(withIam(apiEvent({ method: 'PUT', path, body: { actor: 'someone-else' } })));

    // Assess
    expect(put.json.latest.actor).toBe('arn:aws:iam::123456789012:user/ops-lead');
    expectProblem(spoofed, 400, `${PROBLEM}/invalid-request`);
    expect(spoofed.json.errors).toEqual([expect.objectContaining({ path: 'actor', code: 'not_allowed' })]);
  });

  it('handles an email address and keeps suppressed destinations from being sent to', async () => {
    // Prepare
    const h = harness();
    await h.call({
      method: 'PUT',
      path: `/v1/suppressions/email/${encodeURIComponent(EMAIL.toUpperCase())}`,
    });
    const { json } = await submit(h, noticeBody({ channels: ['email'] }));

    // Act
    const result = await deliverIntent({ noticeId: json.noticeId, channel: 'email' }, h.deps);

    // Assess
    expect(result).toMatchObject({ kind: 'recorded', state: 'suppressed', reason: 'on_suppression_list' });
  });

  const BAD: readonly { name: string; request: ApiEventInput; path: string }[] = [
    {
      name: 'an unknown channel',
      request: { method: 'GET', path: `/v1/suppressions/fax/${PHONE_IN_PATH}` },
      path: 'channel',
    },
    {
      name: 'a phone that does not normalise',
      request: { method: 'GET', path: '/v1/suppressions/sms/0155%205123%20999' },
      path: 'destination',
    },
    {
      name: 'a malformed escape',
      request: { method: 'DELETE', path: '/v1/suppressions/email/%E0%A4%A' },
      path: 'destination',
    },
    {
      name: 'an email in the sms channel',
      request: { method: 'PUT', path: `/v1/suppressions/sms/${encodeURIComponent(EMAIL)}` },
      path: 'destination',
    },
    {
      name: 'a reason that is not a code',
      request: {
        method: 'PUT',
        path: `/v1/suppressions/sms/${PHONE_IN_PATH}`,
        body: { reason: 'Patient said so!' },
      },
      path: 'reason',
    },
    {
      name: 'an unknown body field',
      request: { method: 'PUT', path: `/v1/suppressions/sms/${PHONE_IN_PATH}`, body: { phone: PHONE } },
      path: 'phone',
    },
    {
      name: 'free text in detail',
      request: {
        method: 'PUT',
        path: `/v1/suppressions/sms/${PHONE_IN_PATH}`,
        body: { detail: 'Patient said so on 555 0100' },
      },
      path: 'detail',
    },
    {
      name: 'an actor that is an address',
      request: {
        method: 'DELETE',
        path: `/v1/suppressions/sms/${PHONE_IN_PATH}`,
        body: { actor: EMAIL },
      },
      path: 'actor',
    },
    {
      name: 'a phone with a trailing newline',
      request: { method: 'PUT', path: '/v1/suppressions/sms/%2B15551234567%0A' },
      path: 'destination',
    },
  ];

  for (const c of BAD) {
    it(`answers 400 for ${c.name}`, async () => {
      // Prepare
      const h = harness();

      // Act
      const reply = await h.call(c.request);

      // Assess
      expectProblem(reply, 400, `${PROBLEM}/invalid-request`);
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(c.path);
      expectNoPersonalData(reply.raw.body ?? '', ['0155', 'Patient said so', '555 0100']);
      expect(h.store.suppressions.size).toBe(0);
    });
  }
});

describe('provider-events function: POST /v1/provider-events/twilio', () => {
  const callback = twilioCallback;

  const statusParams = (status: string, errorCode?: string): Record<string, string> => ({
    AccountSid: 'AC_test',
    ApiVersion: '2010-04-01',
    From: '+15005550006',
    MessageSid: SID,
    MessageStatus: status,
    SmsSid: SID,
    SmsStatus: status,
    To: PHONE,
    ...(errorCode ? { ErrorCode: errorCode } : {}),
  });

  async function smsNoticeIn(h: Harness, outcome: ProviderOutcome): Promise<string> {
    const { json } = await submit(h, noticeBody({ channels: ['sms'] }));
    h.sms.next = outcome;
    await deliverIntent({ noticeId: json.noticeId, channel: 'sms' }, h.deps);
    return json.noticeId as string;
  }

  it('records delivery from a correctly signed callback', async () => {
    // Prepare
    const h = harness();
    const noticeId = await smsNoticeIn(h, { kind: 'accepted', receiptId: SID });
    h.clock.now = T0 + 30_000;

    // Act
    const reply = await h.call(callback(statusParams('delivered'), { ref: `${noticeId}-sms` }));

    // Assess
    expect(reply.status).toBe(200);
    const row = await h.store.get(noticeId, 'sms');
    expect(row?.state).toBe('delivered');
    expect(row?.transitions.map((t) => [t.from, t.to, t.reason])).toEqual([
      [null, 'reserved', 'intake'],
      ['reserved', 'sending', 'claimed'],
      ['sending', 'accepted', 'provider_accepted'],
      ['accepted', 'delivered', 'delivery_reported'],
    ]);
    expect(requestLines.at(-1)).toMatchObject({
      route: 'POST /v1/provider-events/{provider}',
      provider: 'twilio',
      status: 200,
      noticeId,
    });
  });

  it('settles an unknown send as accepted on "sent", then delivered', async () => {
    // Prepare
    const h = harness();
    const noticeId = await smsNoticeIn(h, { kind: 'ambiguous', code: 'timeout' });
    expect((await h.store.get(noticeId, 'sms'))?.state).toBe('unknown');

    // Act
    const sent = await h.call(callback(statusParams('sent'), { ref: `${noticeId}-sms` }));
    const delivered = await h.call(callback(statusParams('delivered'), { ref: `${noticeId}-sms` }));

    // Assess
    expect([sent.status, delivered.status]).toEqual([200, 200]);
    const row = await h.store.get(noticeId, 'sms');
    expect(row?.providerReceiptId).toBe(SID);
    expect(row?.transitions.slice(-3).map((t) => [t.to, t.reason])).toEqual([
      ['unknown', 'provider_timeout'],
      ['accepted', 'reconciled_accepted'],
      ['delivered', 'delivery_reported'],
    ]);
  });

  it('answers 403 and changes nothing for a forged, missing or mis-scoped signature', async () => {
    // Prepare
    const h = harness();
    const noticeId = await smsNoticeIn(h, { kind: 'accepted', receiptId: SID });
    const ref = `${noticeId}-sms`;
    const before = await h.store.get(noticeId, 'sms');
    const signedForDelivered = computeTwilioSignature(
      AUTH_TOKEN,
      `${PUBLIC_BASE_URL}${TWILIO_PATH}?ref=${ref}`,
      statusParams('delivered'),
    );

    // Act
    const replies = [
      await h.call(callback(statusParams('undelivered', '30005'), { ref, signature: signedForDelivered })),
      await h.call(callback(statusParams('delivered'), { ref, signature: null })),
      await h.call(callback(statusParams('delivered'), { ref, signature: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' })),
      // Signed for another intent's URL: the ref is covered by the signature.
      await h.call(
        callback(statusParams('delivered'), {
          ref,
          signature: computeTwilioSignature(
            AUTH_TOKEN,
            `${PUBLIC_BASE_URL}${TWILIO_PATH}`,
            statusParams('delivered'),
          ),
        }),
      ),
    ];

    // Assess
    for (const reply of replies) expectProblem(reply, 403, `${PROBLEM}/invalid-signature`);
    expect(await h.store.get(noticeId, 'sms')).toEqual(before);
    expect(h.store.suppressions.size).toBe(0);
  });

  it('will not start without the Twilio auth token (naming it), and answers 404 for a provider it does not serve', async () => {
    // Prepare
    const h = harness();
    const config = readConfig({ PUBLIC_BASE_URL });

    // Act
    const refused = loadInbound(config, { PUBLIC_BASE_URL }).then((loaded) =>
      providerEventsRuntime(config, h.deps, loaded),
    );
    const unknown = await h.call({
      ...callback(statusParams('delivered')),
      path: '/v1/provider-events/nobody',
    });

    // Assess
    await expect(refused).rejects.toThrow(/TWILIO_AUTH_TOKEN is required by the twilio inbound/);
    expectProblem(unknown, 404, `${PROBLEM}/not-found`);
  });

  it('fails the channel and suppresses the destination on undelivered 30005', async () => {
    // Prepare
    const h = harness();
    const noticeId = await smsNoticeIn(h, { kind: 'accepted', receiptId: SID });

    // Act
    const reply = await h.call(callback(statusParams('undelivered', '30005'), { ref: `${noticeId}-sms` }));
    const suppression = await h.call({ method: 'GET', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` });

    // Assess
    expect(reply.status).toBe(200);
    const row = await h.store.get(noticeId, 'sms');
    expect(row?.state).toBe('failed');
    expect(row?.transitions.at(-1)).toMatchObject({
      from: 'accepted',
      to: 'failed',
      reason: 'hard_bounce',
      detail: '30005',
    });
    expect(suppression.status).toBe(200);
    expect(suppression.json).toMatchObject({
      channel: 'sms',
      suppressed: true,
      latest: {
        action: 'suppress',
        reason: 'hard_bounce',
        source: 'provider',
        actor: 'twilio',
        code: '30005',
      },
    });
  });

  it('fails without suppressing on a transient error code, and treats STOP (21610) as a complaint', async () => {
    // Prepare
    const h = harness();
    const transient = await smsNoticeIn(h, { kind: 'accepted', receiptId: SID });
    const { json } = await submit(h, noticeBody({ eventId: 'evt_stop', channels: ['sms'] }));
    h.sms.next = { kind: 'accepted', receiptId: SID.replace('SM0', 'SM1') };
    await deliverIntent({ noticeId: json.noticeId, channel: 'sms' }, h.deps);

    // Act
    await h.call(callback(statusParams('undelivered', '30003'), { ref: `${transient}-sms` }));
    const firstSuppressions = h.store.suppressions.size;
    await h.call(
      callback(
        { ...statusParams('failed', '21610'), MessageSid: SID.replace('SM0', 'SM1') },
        { ref: `${json.noticeId}-sms` },
      ),
    );

    // Assess
    expect((await h.store.get(transient, 'sms'))?.transitions.at(-1)).toMatchObject({
      reason: 'delivery_failed',
    });
    expect(firstSuppressions).toBe(0);
    expect((await h.store.get(json.noticeId, 'sms'))?.transitions.at(-1)).toMatchObject({
      reason: 'complaint',
    });
    expect([...h.store.suppressions.values()].map((entry) => entry.state.latest)).toEqual([
      expect.objectContaining({ reason: 'complaint', source: 'provider', actor: 'twilio' }),
    ]);
  });

  it('answers 200 for an unknown intent or a callback without ref (counted, nothing changed), 400 without MessageSid', async () => {
    // Prepare
    const h = harness();
    const { MessageSid: _sid, SmsSid: _smsSid, ...withoutSid } = statusParams('delivered');

    // Act
    const unknown = await h.call(
      callback(statusParams('delivered'), { ref: `${deriveNoticeId('a', 'b', 'c')}-sms` }),
    );
    const noRef = await h.call(callback(statusParams('delivered')));
    const noSid = await h.call(callback(withoutSid, { ref: `${deriveNoticeId('a', 'b', 'c')}-sms` }));
    const wrongType = await h.call({
      ...callback(statusParams('delivered'), { ref: `${deriveNoticeId('a', 'b', 'c')}-sms` }),
      headers: { 'content-type': 'application/json' },
    });

    // Assess
    expect(unknown.status).toBe(200);
    // A Messaging-Service-level callback names no intent: acknowledged so Twilio stops retrying.
    expect(noRef.status).toBe(200);
    expect(requestLines.find((line) => line.unmatched === 1)).toMatchObject({ status: 200, reports: 0 });
    expect(h.store.intents.size).toBe(0);
    expectProblem(noSid, 400, `${PROBLEM}/invalid-request`);
    expect(noSid.json.errors.map((e: { path: string }) => e.path)).toEqual(['MessageSid']);
    expectProblem(wrongType, 415, `${PROBLEM}/unsupported-media-type`);
    for (const body of h.bodies) expectNoPersonalData(body);
  });
});

describe('routing', () => {
  it('answers liveness without building the runtime', async () => {
    // Prepare
    const api = createHttpApi(
      () => Promise.reject(new Error('no runtime in this test')),
      () => TEST_CALLERS,
    );

    // Act
    const reply = await api(apiEvent({ method: 'GET', path: '/v1/health' }));

    // Assess
    expect(reply.statusCode).toBe(200);
    expect(responseJson(reply)).toEqual({ status: 'ok' });
  });

  it('answers 404 for an unknown route and 405 with Allow for a wrong method', async () => {
    // Prepare
    const h = harness();

    // Act
    const unknown = await h.call({ method: 'GET', path: '/v2/notices' });
    const trailingSlash = await h.call({ method: 'GET', path: '/v1/health/' });
    const putCollection = await h.call({ method: 'PUT', path: '/v1/notices' });
    const deleteNotice = await h.call({
      method: 'DELETE',
      path: `/v1/notices/${deriveNoticeId('a', 'b', 'c')}`,
    });
    const postSuppression = await h.call({ method: 'POST', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` });

    // Assess
    expectProblem(unknown, 404, `${PROBLEM}/not-found`);
    expectProblem(trailingSlash, 404, `${PROBLEM}/not-found`);
    // One resource, two contract entries (POST for submitters, GET for operators): both allowed.
    expectProblem(putCollection, 405, `${PROBLEM}/method-not-allowed`);
    expect(putCollection.raw.headers?.allow).toBe('POST, GET');
    expect(deleteNotice.raw.headers?.allow).toBe('GET');
    expectProblem(postSuppression, 405, `${PROBLEM}/method-not-allowed`);
    expect(postSuppression.raw.headers?.allow).toBe('GET, PUT, DELETE');
    expect(requestLines.map((line) => line.route)).toEqual([
      'unmatched',
      'unmatched',
      'PUT /v1/notices',
      'DELETE /v1/notices/{noticeId}',
      'POST /v1/suppressions/{channel}/{destination}',
    ]);
    for (const line of logs) expect(line).not.toContain('/v1/suppressions/sms/');
  });

  it('routes behind a named stage', async () => {
    // Prepare
    const h = harness();
    const event = apiEvent({ method: 'GET', path: '/prod/v1/notices/ntc_bad' });
    const staged = { ...event, requestContext: { ...event.requestContext, stage: 'prod' } };

    // Act
    const reply = await h.call(staged);

    // Assess
    expectProblem(reply, 400, `${PROBLEM}/invalid-request`);
  });

  it('maps an infrastructure failure to a generic 500, logs its name and counts it (HttpInternalErrors)', async () => {
    // Prepare
    const store = new MemoryLedgerStore();
    vi.spyOn(store, 'getNotice').mockRejectedValue(
      Object.assign(new Error('Requested resource not found: Table: notice-ledger'), {
        name: 'ResourceNotFoundException',
      }),
    );
    const h = harness({ store });
    const counted = vi.spyOn(metrics, 'addMetric').mockReturnValue(metrics);

    // Act
    const refused = await h.call({ method: 'GET', path: '/v1/notices/ntc_bad' });
    const countedBefore500 = counted.mock.calls.length;
    const reply = await h.call({ method: 'GET', path: `/v1/notices/${deriveNoticeId('a', 'b', 'c')}` });

    // Assess
    expectProblem(reply, 500, `${PROBLEM}/internal-error`);
    expect(reply.raw.body).not.toContain('Table');
    expect(reply.raw.body).not.toContain('ResourceNotFound');
    expect(logs.some((line) => line.startsWith('error') && line.includes('ResourceNotFoundException'))).toBe(
      true,
    );
    expect(requestLines).toEqual([
      expect.objectContaining({ route: 'GET /v1/notices/{noticeId}', status: 400 }),
      expect.objectContaining({ route: 'GET /v1/notices/{noticeId}', status: 500 }),
    ]);
    // A 4xx is the caller's; only the 500 is counted, once (the handler publishes it).
    expect(refused.status).toBe(400);
    expect(countedBefore500).toBe(0);
    expect(counted.mock.calls).toEqual([['HttpInternalErrors', 'Count', 1]]);
  });
});
