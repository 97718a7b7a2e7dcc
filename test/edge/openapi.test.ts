import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { resolveDestination } from '../../lambdas/domain/destination.ts';
import { planCancel } from '../../lambdas/domain/operator-actions.ts';
import {
  BatchRequestSchema,
  NoticeRequestSchema,
  parseNoticeRequest,
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
import { harness } from '../helpers/http-harness.ts';
import { TEST_ACTOR } from '../helpers/ledger-properties.ts';
import { throttledAndResolvedTimeline } from '../helpers/timelines.ts';

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

  it('describes every route of the API as issue 14 defines it', () => {
    const operations = Object.entries(openApiDocument().paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /v1/health',
        'GET /v1/openapi.json',
        'POST /v1/notices',
        'GET /v1/notices',
        'POST /v1/notices/batch',
        'GET /v1/notices/{noticeId}',
        'POST /v1/notices/{noticeId}/channels/{channel}/resolution',
        'POST /v1/notices/{noticeId}/cancel',
        'GET /v1/suppressions/{channel}/{destination}',
        'PUT /v1/suppressions/{channel}/{destination}',
        'DELETE /v1/suppressions/{channel}/{destination}',
        'POST /v1/provider-events/twilio',
      ].sort(),
    );
  });
});

describe('the README and the deploy guide agree with the document', () => {
  const validate = validatorFor();
  const examples = [...curlExamples('README.md'), ...curlExamples('docs/deploy.md')];
  const notices = examples.filter((e) => e.route === '/v1/notices');
  const suppressions = examples.filter((e) => e.route.startsWith('/v1/suppressions/'));

  it('finds the example bodies', () => {
    expect(notices.length).toBeGreaterThanOrEqual(2);
    expect(suppressions.length).toBeGreaterThanOrEqual(1);
    expect(notices.length + suppressions.length).toBe(examples.length);
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
  const cases: { component: string; schema: z.ZodType; body: unknown; accepted: boolean }[] = [
    { component: 'NoticeRequest', schema: NoticeRequestSchema, body: valid, accepted: true },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, variables: null, deadline: null },
      accepted: true,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, extra: 1 },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, eventId: 'e'.repeat(129) },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, eventId: '' },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, channels: [] },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 1])) },
      accepted: false,
    },
    {
      component: 'NoticeRequest',
      schema: NoticeRequestSchema,
      body: { ...valid, variables: { '1x': 1 } },
      accepted: false,
    },
    { component: 'BatchRequest', schema: BatchRequestSchema, body: { notices: [valid] }, accepted: true },
    { component: 'BatchRequest', schema: BatchRequestSchema, body: { notices: [] }, accepted: false },
    {
      component: 'ResolutionRequest',
      schema: ResolutionRequestSchema,
      body: { outcome: 'accepted', reason: 'seen in provider console', evidence: 'OPS-7' },
      accepted: true,
    },
    {
      component: 'ResolutionRequest',
      schema: ResolutionRequestSchema,
      body: { outcome: 'resend', reason: 'x' },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      schema: ResolutionRequestSchema,
      body: { outcome: 'not_sent', reason: 'r'.repeat(501) },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      schema: ResolutionRequestSchema,
      body: { outcome: 'not_sent', reason: 'r', evidence: 'e'.repeat(2001) },
      accepted: false,
    },
    {
      component: 'ResolutionRequest',
      schema: ResolutionRequestSchema,
      body: { outcome: 'not_sent' },
      accepted: false,
    },
    {
      component: 'CancelRequest',
      schema: CancelRequestSchema,
      body: { reason: 'appointment cancelled' },
      accepted: true,
    },
    { component: 'CancelRequest', schema: CancelRequestSchema, body: { reason: '' }, accepted: false },
    { component: 'CancelRequest', schema: CancelRequestSchema, body: {}, accepted: false },
    { component: 'SuppressionRequest', schema: SuppressionRequestSchema, body: {}, accepted: true },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { reason: 'patient_request', actor: 'ops-7' },
      accepted: true,
    },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { reason: 'Not-Snake' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { reason: 'r'.repeat(65) },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { detail: 'patient phoned' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { actor: 'jane@example.com' },
      accepted: false,
    },
    {
      component: 'SuppressionRequest',
      schema: SuppressionRequestSchema,
      body: { note: 'x' },
      accepted: false,
    },
  ];

  it.each(cases.map((c, i) => ({ ...c, i })))('case $i: $component accepted=$accepted by both', (c) => {
    expect(c.schema.safeParse(c.body).success).toBe(c.accepted);
    expect(validate(c.component, c.body).valid).toBe(c.accepted);
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
    expect(check('limit', 200)).toBe(true);
    expect(check('limit', 201)).toBe(false);
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
    expect(validate('Timeline', JSON.parse(JSON.stringify(toTimeline([cancelled.plan.next])))).valid).toBe(
      true,
    );
    // Strict: a field the schema does not name (the envelope, a lease owner) would fail.
    expect(validate('Timeline', { ...timeline, envelope: 'x' }).valid).toBe(false);
  });

  it('a suppression with its history: a provider bounce, an operator record, a lift', async () => {
    const h = harness();
    const phone = resolveDestination(TEST_KEY, 'sms', '+15551234567');
    await h.store.appendSuppression(
      { channel: 'sms', fingerprint: phone.fingerprint, masked: phone.masked },
      {
        action: 'suppress',
        reason: 'hard_bounce',
        source: 'provider',
        actor: 'twilio',
        at: T0 - 60_000,
        code: '30005',
      },
    );
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
