import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { resolveDestination } from '../../lambdas/domain/destination.ts';
import { planCancel } from '../../lambdas/domain/operator-actions.ts';
import {
  BatchRequestSchema,
  IDENTIFIER_PATTERN,
  NoticeLimits,
  parseNoticeRequest,
  text,
} from '../../lambdas/edge/notice-request.ts';
import {
  CancelRequestSchema,
  ListNoticesQuerySchema,
  parseIsoDuration,
  parseSuppressionRequest,
  ResolutionRequestSchema,
  SuppressionRequestSchema,
} from '../../lambdas/edge/operator-requests.ts';
import { invalidRequest } from '../../lambdas/edge/problem.ts';
import { toTimeline } from '../../lambdas/edge/timeline.ts';
import { openApiDocument, openApiJson } from '../../lambdas/handlers/http/openapi.ts';
import { newIntent, T0, TEST_KEY, TEST_TIMING } from '../helpers/factories.ts';
import { hostileExamples, validNotice } from '../helpers/hostile-examples.ts';
import { harness, twilioHardBounce } from '../helpers/http-harness.ts';
import { TEST_ACTOR } from '../helpers/ledger-properties.ts';
import { fromLedger, throttledAndResolvedTimeline } from '../helpers/timelines.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC_ID = 'https://notice-ledger.dev/openapi.json';

function validatorFor() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // biome-ignore lint/suspicious/noExplicitAny: ajv-formats' CJS default export is typed for CJS consumers.
  (addFormats as any)(ajv);
  ajv.addSchema({ $id: DOC_ID, components: structuredClone(openApiDocument().components) });
  return (component: string, value: unknown) => {
    const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${component}`);
    if (!validate) throw new Error(`no component ${component}`);
    const valid = validate(value) as boolean;
    return { valid, errors: validate.errors };
  };
}

/**
 * The `curl … -d '{…}'` examples in a Markdown file, shell splices filled in: each body with the
 * route it is sent to (the first `/v1/…` path of the command).
 */
function curlExamples(file: string): { route: string; body: unknown }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [...text.matchAll(/^[^\n]*?(\/v1\/[\w/{}%-]*)[^\n]*?(?:\\\n[^\n]*?)?-d '(\{[\s\S]*?\})'\s*$/gm)].map(
    (m) => ({
      route: m[1] as string,
      body: JSON.parse((m[2] as string).replace(/'"\$\([^)]*\)"'/g, inAWeek)),
    }),
  );
}

describe('docs/openapi.json', () => {
  it('is the generated document (run `npm run openapi` after changing a schema)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')).toBe(openApiJson());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(
      structuredClone(openApiDocument()) as Parameters<Validator['validate']>[0],
    );
    expect(result).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
  });

  it('is what GET /v1/openapi.json serves', async () => {
    const h = harness();
    const reply = await h.call({ method: 'GET', path: '/v1/openapi.json' });
    expect(reply.status).toBe(200);
    expect(reply.raw.headers?.['content-type']).toBe('application/json');
    expect(reply.raw.body).toBe(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8'));
  });
});

describe('the README and the docs agree with the document', () => {
  const validate = validatorFor();
  const files = ['README.md', 'docs/api.md', 'docs/operators.md', 'docs/deploy.md'];
  const examples = files.flatMap((file) => curlExamples(file));
  const notices = examples.filter((e) => e.route === '/v1/notices');
  const suppressions = examples.filter((e) => e.route.startsWith('/v1/suppressions/'));
  const resolutions = examples.filter((e) => e.route.endsWith('/resolution'));
  const cancels = examples.filter((e) => e.route.endsWith('/cancel'));

  it('finds the example bodies', () => {
    // The README's first notice, and every file's examples (none of them left unread).
    expect(curlExamples('README.md').filter((e) => e.route === '/v1/notices')).toHaveLength(1);
    for (const file of files) expect(curlExamples(file).length, file).toBeGreaterThan(0);
    expect(notices.length).toBeGreaterThanOrEqual(2);
    expect(suppressions.length).toBeGreaterThanOrEqual(1);
    expect(resolutions.length).toBeGreaterThanOrEqual(1);
    expect(cancels.length).toBeGreaterThanOrEqual(1);
    expect(notices.length + suppressions.length + resolutions.length + cancels.length).toBe(examples.length);
  });

  it('every example resolution and cancel validates against the document, and the server accepts it too', () => {
    for (const { body } of resolutions) {
      expect(validate('ResolutionRequest', body).errors ?? []).toEqual([]);
      expect(ResolutionRequestSchema.safeParse(body).success).toBe(true);
    }
    for (const { body } of cancels) {
      expect(validate('CancelRequest', body).errors ?? []).toEqual([]);
      expect(CancelRequestSchema.safeParse(body).success).toBe(true);
    }
  });

  it('every example notice validates against NoticeRequest, and the server accepts it too', () => {
    for (const { body } of notices) {
      const result = validate('NoticeRequest', body);
      expect(result.errors ?? []).toEqual([]);
      expect(parseNoticeRequest(body).ok).toBe(true);
    }
  });

  it('every example suppression body validates against SuppressionRequest, and the server accepts it too', () => {
    for (const { body } of suppressions) {
      expect(validate('SuppressionRequest', body).errors ?? []).toEqual([]);
      expect(parseSuppressionRequest(body).ok).toBe(true);
    }
  });
});

describe('the document says what the server checks', () => {
  const validate = validatorFor();
  const valid = {
    eventId: 'evt_1',
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1', email: 'a@example.com' },
    channels: ['email'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
  };
  const both = {
    ...valid,
    recipient: { ...valid.recipient, phone: '+15551234567' },
    channels: ['email', 'sms'],
  };
  /** What the edge accepts (400 otherwise; 422 meaning checks come later and are described in words). */
  const notice = { parse: (body: unknown) => parseNoticeRequest(body).ok };
  const byZod = (schema: z.ZodType) => ({ parse: (body: unknown) => schema.safeParse(body).success });
  const cases: {
    component: string;
    server: { parse(body: unknown): boolean };
    body: unknown;
    accepted: boolean;
  }[] = [
    { component: 'NoticeRequest', server: notice, body: valid, accepted: true },
    { component: 'NoticeRequest', server: notice, body: both, accepted: true },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, variables: null, deadline: null },
      accepted: true,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: Object.fromEntries(Object.entries(valid).filter(([key]) => key !== 'variables')),
      accepted: true,
    },
    { component: 'NoticeRequest', server: notice, body: { ...valid, extra: 1 }, accepted: false },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, eventId: 'e'.repeat(129) },
      accepted: false,
    },
    { component: 'NoticeRequest', server: notice, body: { ...valid, eventId: '' }, accepted: false },
    // Identifiers exactly as sent (issue 10): nothing stripped, nothing invisible.
    { component: 'NoticeRequest', server: notice, body: { ...valid, eventId: ' evt_1' }, accepted: false },
    { component: 'NoticeRequest', server: notice, body: { ...valid, eventId: 'evt_1\n' }, accepted: false },
    { component: 'NoticeRequest', server: notice, body: { ...valid, eventType: '   ' }, accepted: false },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { ...valid.recipient, id: 'pat\u200b1' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, eventId: 'evt\u202e1' },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, eventId: 'evt 1 (retry)' },
      accepted: true,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, eventId: 'ü'.repeat(128) },
      accepted: true,
    },
    // Contact data in an identifier is a 422 of the use case: past the edge, and said in words.
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, eventId: 'jane@example.com' },
      accepted: true,
    },
    { component: 'NoticeRequest', server: notice, body: { ...valid, channels: [] }, accepted: false },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, channels: ['email', 'email'] },
      accepted: false,
    },
    // A destination per requested channel, by the providers' rules; an unused one is ignored.
    { component: 'NoticeRequest', server: notice, body: { ...valid, channels: ['sms'] }, accepted: false },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...both, recipient: { ...both.recipient, phone: '+1 555 123 4567' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { ...valid.recipient, phone: '+1 555 123 4567' } },
      accepted: true,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...both, recipient: { ...both.recipient, phone: '+0551234567' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { ...valid.recipient, email: '"quoted"@example.com' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { ...valid.recipient, email: 'x@[127.0.0.1]' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { ...valid.recipient, email: 'Ada.Lovelace+lab@Example.COM' } },
      accepted: true,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, recipient: { id: 'pat_1', phone: '+15551234567' } },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 1])) },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      server: notice,
      body: { ...valid, variables: { '1x': 1 } },
      accepted: false,
    },
    {
      component: 'BatchRequest',
      server: byZod(BatchRequestSchema),
      body: { notices: [valid] },
      accepted: true,
    },
    { component: 'BatchRequest', server: byZod(BatchRequestSchema), body: { notices: [] }, accepted: false },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'accepted', reason: 'seen in provider console', evidence: 'OPS-7' },
      accepted: true,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'resend', reason: 'x' },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'not_sent', reason: 'r'.repeat(501) },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'not_sent', reason: 'r', evidence: 'e'.repeat(2001) },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'not_sent', reason: 'seen in console ' },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'not_sent' },
      accepted: false,
    },
    {
      component: 'CancelRequest',
      server: byZod(CancelRequestSchema),
      body: { reason: 'appointment cancelled' },
      accepted: true,
    },
    {
      component: 'CancelRequest',
      server: byZod(CancelRequestSchema),
      body: { reason: 'appointment cancelled', actor: 'ops-7' },
      accepted: true,
    },
    {
      component: 'ResolutionRequest',
      server: byZod(ResolutionRequestSchema),
      body: { outcome: 'accepted', reason: 'seen in console', actor: 'ada@example.com' },
      accepted: false,
    },
    { component: 'CancelRequest', server: byZod(CancelRequestSchema), body: { reason: '' }, accepted: false },
    { component: 'CancelRequest', server: byZod(CancelRequestSchema), body: {}, accepted: false },
    { component: 'SuppressionRequest', server: byZod(SuppressionRequestSchema), body: {}, accepted: true },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { reason: 'patient_request', actor: 'ops-7' },
      accepted: true,
    },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { reason: 'Not-Snake' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { reason: 'r'.repeat(65) },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { detail: 'patient phoned' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { actor: 'jane@example.com' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      server: byZod(SuppressionRequestSchema),
      body: { note: 'x' },
      accepted: false,
    },
  ];

  it.each(cases.map((c, i) => ({ ...c, i })))('case $i: $component accepted=$accepted by both', (c) => {
    expect(c.server.parse(c.body)).toBe(c.accepted);
    expect(validate(c.component, c.body).valid).toBe(c.accepted);
  });

  it("issue 10's hostile notices: the document refuses what the edge refuses", () => {
    const notices = hostileExamples(T0).filter((e) => e.path === '/v1/notices');
    let compared = 0;
    for (const example of notices) {
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(example.body));
      } catch {
        continue; // not UTF-8 or not JSON: refused before any schema (400 malformed-body)
      }
      compared++;
      const accepted = parseNoticeRequest(body).ok;
      expect(validate('NoticeRequest', body).valid, example.name).toBe(accepted);
    }
    expect(compared).toBeGreaterThanOrEqual(15);
  });

  it('the identifier pattern accepts exactly what text() accepts', () => {
    const pattern = new RegExp(IDENTIFIER_PATTERN, 'u');
    const identifier = text(NoticeLimits.idMaxLength);
    const pieces = fc.constantFrom(
      'a',
      'Z',
      '7',
      '_',
      ' ',
      '\t',
      '\n',
      '\u00a0',
      '\u200b',
      '\u202e',
      '\u2028',
      'é',
      '😀',
      '\u0000',
      '\u3000',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 6 }), (parts) => {
        const value = parts.join('');
        expect(pattern.test(value), JSON.stringify(value)).toBe(identifier.safeParse(value).success);
      }),
      { numRuns: 2000 },
    );
  });

  it('list query parameters: what the schema accepts, the document accepts', () => {
    const listOp = openApiDocument().paths['/v1/notices'].get;
    const byName = Object.fromEntries(listOp.parameters.map((p) => [p.name, p.schema]));
    expect(Object.keys(byName).sort()).toEqual(Object.keys(ListNoticesQuerySchema.shape).sort());
    const ajv = new Ajv2020({ strict: false });
    const check = (name: string, value: unknown) => ajv.validate(byName[name] as object, value);
    expect(check('state', 'unknown')).toBe(true);
    expect(check('state', 'delivered')).toBe(false);
    expect(check('olderThan', 'PT10M')).toBe(true);
    expect(check('olderThan', 'P1M')).toBe(false);
    // Query values are strings on the wire: the document and the schema take the same ones.
    for (const limit of [
      '0',
      '1',
      '9',
      '10',
      '99',
      '100',
      '199',
      '200',
      '201',
      '999',
      '01',
      '-1',
      'ten',
      '',
    ]) {
      expect(check('limit', limit), limit).toBe(ListNoticesQuerySchema.safeParse({ limit }).success);
    }
    expect(check('limit', '200')).toBe(true);
    expect(ListNoticesQuerySchema.safeParse({ limit: '201' }).success).toBe(false);
    expect(ListNoticesQuerySchema.safeParse({ olderThan: 'P1M' }).success).toBe(false);
  });
});

describe('what the handlers build matches the response schemas', () => {
  const validate = validatorFor();

  it('timelines through a 429 retry, an unknown settled by an operator, and a cancel', () => {
    const timeline = throttledAndResolvedTimeline();
    const result = validate('Timeline', JSON.parse(JSON.stringify(timeline)));
    expect(result.errors ?? []).toEqual([]);
    const cancelled = planCancel(
      newIntent(),
      { reason: 'appointment cancelled', actor: TEST_ACTOR, now: T0 + 5 },
      TEST_TIMING,
    );
    if (cancelled.kind !== 'cancel') throw new Error('not cancelled');
    expect(
      validate('Timeline', JSON.parse(JSON.stringify(toTimeline(fromLedger([cancelled.plan.next]))))).valid,
    ).toBe(true);
    // Strict: a field the schema does not name (the envelope, a lease owner) would fail.
    expect(validate('Timeline', { ...timeline, envelope: 'x' }).valid).toBe(false);
  });

  it('a suppression with its history: a provider bounce, an operator record, a lift', async () => {
    const h = harness();
    const phone = resolveDestination(TEST_KEY, 'sms', '+15551234567');
    await twilioHardBounce(h, phone);
    const path = '/v1/suppressions/sms/%2B15551234567';
    const put = await h.call({ method: 'PUT', path, body: { reason: 'patient_request', actor: 'ops-7' } });
    h.clock.now = T0 + 1_000;
    expect((await h.call({ method: 'DELETE', path })).status).toBe(204);
    const get = await h.call({ method: 'GET', path });
    expect([put.status, get.status]).toEqual([200, 200]);
    expect(get.json.history).toHaveLength(3);
    for (const reply of [put, get]) expect(validate('Suppression', reply.json).errors ?? []).toEqual([]);
    expect(validate('Suppression', { ...get.json, detail: null }).valid).toBe(false);
  });

  it("a 409 names what differs: errors by path and each channel's differs", async () => {
    const h = harness();
    const submit = (body: unknown) => h.call({ method: 'POST', path: '/v1/notices', body });
    expect((await submit(validNotice(T0))).status).toBe(202);
    const conflict = await submit(validNotice(T0, { variables: { firstName: 'Someone Else' } }));
    expect(conflict.status).toBe(409);
    expect(conflict.json.channels).toEqual([
      expect.objectContaining({ channel: 'email', outcome: 'conflict', differs: ['variables.firstName'] }),
      expect.objectContaining({ channel: 'sms', outcome: 'conflict', differs: ['variables.firstName'] }),
    ]);
    expect(validate('NoticeConflict', conflict.json).errors ?? []).toEqual([]);
    const wrongOutcome = {
      ...conflict.json,
      channels: [{ ...conflict.json.channels[0], outcome: 'changed' }],
    };
    expect(validate('NoticeConflict', wrongOutcome).valid).toBe(false);
  });

  it('a problem with field errors', () => {
    const body = invalidRequest([{ path: 'eventId', code: 'required', message: 'is required' }]);
    expect(validate('Problem', JSON.parse(JSON.stringify(body))).valid).toBe(true);
  });
});

describe('parseIsoDuration', () => {
  it('reads weeks, days and clock parts; refuses months, years and empty parts', () => {
    expect(parseIsoDuration('PT10M')).toBe(600_000);
    expect(parseIsoDuration('P1DT2H')).toBe(93_600_000);
    expect(parseIsoDuration('P2W')).toBe(1_209_600_000);
    expect(parseIsoDuration('PT1.5S')).toBe(1500);
    for (const bad of ['P', 'PT', 'P1M', 'P1Y', 'PT10', '10m', 'P1DT', '-PT1M', 'PT1M ']) {
      expect(parseIsoDuration(bad), bad).toBeUndefined();
    }
  });
});
