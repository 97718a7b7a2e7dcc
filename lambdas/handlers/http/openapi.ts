import { z } from 'zod';
import { Channel } from '../../domain/channel.ts';
import { NOTICE_ID_PATTERN } from '../../domain/identity.ts';
import {
  BatchResponseSchema,
  CancelResponseSchema,
  HealthSchema,
  NoticeListSchema,
  NoticeRecordedSchema,
  ProblemSchema,
  SuppressionRecordSchema,
  SuppressionSchema,
  TimelineChannelSchema,
  TimelineSchema,
} from '../../edge/api-responses.ts';
import { BodyLimits } from '../../edge/http-body.ts';
import { BatchRequestSchema, NoticeLimits, NoticeRequestSchema } from '../../edge/notice-request.ts';
import {
  CancelRequestSchema,
  ListNoticesQuerySchema,
  ResolutionRequestSchema,
  SuppressionRequestSchema,
} from '../../edge/operator-requests.ts';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas the handlers validate
 * with (requests) and the response schemas of `edge/api-responses.ts`. There is no hand-written
 * copy of a body: `npm run openapi` writes `docs/openapi.json` from this, and
 * `test/edge/openapi.test.ts` fails when the committed file differs.
 *
 * Some request rules live in refinements (lengths in code points, control characters, a
 * destination per channel), which JSON Schema cannot see; `DOCUMENTED_RULES` states them on the
 * same schema objects, from the same limit constants, so the document tells a client what the
 * server will check.
 */

type JsonSchema = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const TEXT_RULE = 'no control, line-separator or bidi-control characters';
const shape = NoticeRequestSchema.shape;

/** Facts a refinement checks, attached to the very schema that checks them. */
const DOCUMENTED_RULES = new Map<z.ZodType, JsonSchema>([
  [
    shape.eventId,
    { minLength: 1, maxLength: NoticeLimits.idMaxLength, description: `business event id; ${TEXT_RULE}` },
  ],
  [
    shape.eventType,
    { minLength: 1, maxLength: NoticeLimits.idMaxLength, description: `event type; ${TEXT_RULE}` },
  ],
  [
    shape.recipient.shape.id,
    { minLength: 1, maxLength: NoticeLimits.idMaxLength, description: `recipient id; ${TEXT_RULE}` },
  ],
  [
    shape.recipient.shape.email,
    { maxLength: NoticeLimits.emailMaxLength, description: 'required when channels has email' },
  ],
  [
    shape.recipient.shape.phone,
    {
      maxLength: NoticeLimits.phoneMaxLength,
      description: 'E.164 (+ and country code); required when channels has sms',
    },
  ],
  [shape.channels, { uniqueItems: true }],
  [shape.template.shape.id, { minLength: 1, maxLength: NoticeLimits.idMaxLength }],
  [shape.template.shape.version, { minLength: 1, maxLength: NoticeLimits.templateVersionMaxLength }],
  [
    shape.variables,
    {
      type: ['object', 'null'],
      maxProperties: NoticeLimits.maxVariables,
      propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: NoticeLimits.variableNameMaxLength },
      description: "the template's variables; its contract is checked at intake (422)",
    },
  ],
  [
    shape.deadline,
    {
      format: 'date-time',
      maxLength: NoticeLimits.deadlineMaxLength,
      description: 'RFC 3339 instant with offset, in the future (422 otherwise); default from configuration',
    },
  ],
  [BatchRequestSchema.shape.notices.element, ref('NoticeRequest')],
]);

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Runs on every node zod emits: documented rules in, zod's noise out. */
function override(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const json = ctx.jsonSchema;
  const rules = DOCUMENTED_RULES.get(ctx.zodSchema as z.ZodType);
  if (rules) Object.assign(json, rules);
  // zod bounds every integer by the safe range; that says nothing to a client.
  if (json.minimum === -MAX_SAFE) delete json.minimum;
  if (json.maximum === MAX_SAFE) delete json.maximum;
  // `format: date-time` says it; zod's 1 KB regex for it is noise.
  if (json.format === 'date-time') delete json.pattern;
}

function components(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override,
  }) as { schemas: Record<string, JsonSchema> };
  for (const schema of Object.values(out.schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return out.schemas;
}

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override,
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

const json = (schema: JsonSchema) => ({ content: { 'application/json': { schema } } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

const PROBLEMS = {
  400: problem('wrong shape, types, lengths or fields; `errors` names each field'),
  404: problem('no such resource'),
  413: problem(`body over ${BodyLimits.jsonMaxBytes} bytes`),
  415: problem('not application/json (UTF-8)'),
  422: problem('well-formed but not acceptable; `errors` names each field'),
} as const;

const noticeIdParameter = {
  name: 'noticeId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NOTICE_ID_PATTERN.source },
  description: 'ntc_ + 26 base32 characters of SHA-256(eventType LF eventId LF recipient.id)',
};
const channelParameter = {
  name: 'channel',
  in: 'path',
  required: true,
  schema: { type: 'string', enum: Object.values(Channel) },
};
const destinationParameter = {
  name: 'destination',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'email address or E.164 number, URL-encoded (%2B for +); stored only as a fingerprint',
};

function listParameters() {
  return Object.entries(ListNoticesQuerySchema.shape).map(([name, schema]) => {
    const { description, ...rest } = schemaOf(schema, 'output');
    return { name, in: 'query', required: false, schema: rest, ...(description ? { description } : {}) };
  });
}

/** `x-amazon-apigateway-authtype: awsSigv4` is how API Gateway names IAM authorisation. */
const SIGV4 = [{ sigv4: [] }];

function buildDocument() {
  const requests = components(
    {
      NoticeRequest: NoticeRequestSchema,
      BatchRequest: BatchRequestSchema,
      ResolutionRequest: ResolutionRequestSchema,
      CancelRequest: CancelRequestSchema,
      SuppressionRequest: SuppressionRequestSchema,
    },
    'input',
  );
  const responses = components(
    {
      Problem: ProblemSchema,
      NoticeRecorded: NoticeRecordedSchema,
      BatchResponse: BatchResponseSchema,
      Timeline: TimelineSchema,
      TimelineChannel: TimelineChannelSchema,
      NoticeList: NoticeListSchema,
      CancelResponse: CancelResponseSchema,
      Suppression: SuppressionSchema,
      SuppressionRecord: SuppressionRecordSchema,
      Health: HealthSchema,
    },
    'output',
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'notice-ledger',
      version: '1',
      description:
        'One durable intent per (notice, channel), an explicit state for every fact, and no resend until an ambiguous outcome is reconciled. Errors are RFC 9457 problem+json. In AWS every route but provider callbacks is IAM-authorised (SigV4, service execute-api).',
    },
    security: SIGV4,
    paths: {
      '/v1/health': {
        get: {
          operationId: 'health',
          summary: 'liveness',
          responses: { 200: { description: 'up', ...json(ref('Health')) } },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openApi',
          summary: 'this document',
          responses: {
            200: {
              description: 'OpenAPI 3.1',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
      '/v1/notices': {
        post: {
          operationId: 'submitNotice',
          summary: 'record one notice: one intent per channel, reserved before any send',
          requestBody: { required: true, ...json(ref('NoticeRequest')) },
          responses: {
            202: { description: 'recorded by this request', ...json(ref('NoticeRecorded')) },
            200: {
              description: 'a replay of a recorded notice (same content)',
              ...json(ref('NoticeRecorded')),
            },
            409: problem('recorded with a different template version, variables or destination; unchanged'),
            ...PROBLEMS,
          },
        },
        get: {
          operationId: 'listNotices',
          summary: 'unresolved channels, oldest first, from the open-intent index',
          parameters: listParameters(),
          responses: { 200: { description: 'one page', ...json(ref('NoticeList')) }, 400: PROBLEMS[400] },
        },
      },
      '/v1/notices/batch': {
        post: {
          operationId: 'submitBatch',
          summary: `up to ${NoticeLimits.batchMaxItems} notices, one result each`,
          requestBody: { required: true, ...json(ref('BatchRequest')) },
          responses: {
            200: { description: 'one result per item, in order', ...json(ref('BatchResponse')) },
            400: PROBLEMS[400],
            413: PROBLEMS[413],
            415: PROBLEMS[415],
          },
        },
      },
      '/v1/notices/{noticeId}': {
        get: {
          operationId: 'getNotice',
          summary: 'the operator timeline',
          parameters: [noticeIdParameter],
          responses: {
            200: { description: 'timeline', ...json(ref('Timeline')) },
            400: PROBLEMS[400],
            404: PROBLEMS[404],
          },
        },
      },
      '/v1/notices/{noticeId}/channels/{channel}/resolution': {
        post: {
          operationId: 'resolveChannel',
          summary: "settle an `unknown` channel on an operator's word (the person is recorded as actor)",
          parameters: [noticeIdParameter, channelParameter],
          requestBody: { required: true, ...json(ref('ResolutionRequest')) },
          responses: {
            200: { description: 'the channel as the timeline shows it', ...json(ref('TimelineChannel')) },
            409: problem('the channel is not unknown; unchanged'),
            ...PROBLEMS,
          },
        },
      },
      '/v1/notices/{noticeId}/cancel': {
        post: {
          operationId: 'cancelNotice',
          summary: 'call off the channels not yet sent (idempotent)',
          parameters: [noticeIdParameter],
          requestBody: { required: true, ...json(ref('CancelRequest')) },
          responses: {
            200: { description: 'per channel: cancelled or why not', ...json(ref('CancelResponse')) },
            ...PROBLEMS,
          },
        },
      },
      '/v1/suppressions/{channel}/{destination}': {
        parameters: [channelParameter, destinationParameter],
        get: {
          operationId: 'getSuppression',
          summary: 'the effective state and the history (provider and operator records, oldest first)',
          responses: {
            200: { description: 'recorded (suppressed or lifted)', ...json(ref('Suppression')) },
            400: PROBLEMS[400],
            404: problem('nothing was ever recorded for this destination on this channel'),
          },
        },
        put: {
          operationId: 'putSuppression',
          summary:
            'suppress: appends an operator record (reason defaults to operator); nothing is overwritten',
          requestBody: { required: false, ...json(ref('SuppressionRequest')) },
          responses: {
            201: { description: 'this turned suppression on', ...json(ref('Suppression')) },
            200: {
              description: 'it was suppressed already (the record is appended all the same)',
              ...json(ref('Suppression')),
            },
            400: PROBLEMS[400],
            413: PROBLEMS[413],
            415: PROBLEMS[415],
          },
        },
        delete: {
          operationId: 'deleteSuppression',
          summary: 'lift: appends a lift record (reason defaults to lifted_by_operator)',
          requestBody: { required: false, ...json(ref('SuppressionRequest')) },
          responses: {
            204: { description: 'lifted' },
            400: PROBLEMS[400],
            404: problem('the destination is not suppressed on this channel'),
            413: PROBLEMS[413],
            415: PROBLEMS[415],
          },
        },
      },
      '/v1/provider-events/twilio': {
        post: {
          operationId: 'twilioStatusCallback',
          summary: 'Twilio status callbacks; X-Twilio-Signature verified',
          security: [],
          parameters: [
            { name: 'X-Twilio-Signature', in: 'header', required: true, schema: { type: 'string' } },
          ],
          requestBody: {
            required: true,
            content: {
              'application/x-www-form-urlencoded': {
                schema: { type: 'object', additionalProperties: { type: 'string' } },
              },
            },
          },
          responses: {
            200: { description: 'recorded or ignored' },
            400: PROBLEMS[400],
            403: problem('signature not valid'),
          },
        },
      },
    },
    components: {
      schemas: { ...requests, ...responses },
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          description: 'AWS Signature Version 4, service execute-api (IAM authorisation)',
          'x-amazon-apigateway-authtype': 'awsSigv4',
        },
      },
    },
  } as const;
}

export type OpenApiDocument = ReturnType<typeof buildDocument>;

let cached: OpenApiDocument | undefined;

/** Built once per process: the schemas do not change while it runs. */
export function openApiDocument(): OpenApiDocument {
  cached ??= buildDocument();
  return cached;
}

/** The document as committed in `docs/openapi.json` (two-space indent, trailing newline). */
export function openApiJson(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
