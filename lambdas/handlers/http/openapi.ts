import { z } from 'zod';
import { findRoute } from '../../contract/routes.ts';
import { Channel } from '../../domain/channel.ts';
import { EMAIL_PATTERN, PHONE_PATTERN } from '../../domain/destination.ts';
import { NOTICE_ID_PATTERN } from '../../domain/identity.ts';
import {
  BatchResponseSchema,
  CancelResponseSchema,
  HealthSchema,
  NoticeConflictSchema,
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
import { overCapacity, problem, providerEventPaths, ref } from './openapi-webhooks.ts';

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

const IDENTIFIER_RULE =
  'taken exactly as sent: leading or trailing whitespace is refused (surrounding_whitespace), not stripped; not whitespace only (blank); no control, format (bidi, zero-width) or line-separator characters (invalid_characters); length in code points';
const CONTACT_DATA_RULE =
  'must not contain contact data — an @-address or + and 8 or more digits — refused with 422 contact_data_in_identifier (it would be stored and shown as sent)';
const shape = NoticeRequestSchema.shape;

/** `recipient.<field>` must match `pattern` when `channels` names `channel` (the server's cross-field rule). */
function destinationFor(channel: string, field: string, pattern: string): JsonSchema {
  return {
    if: { required: ['channels'], properties: { channels: { contains: { const: channel } } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword; this object is never awaited.
    then: {
      required: ['recipient'],
      properties: {
        recipient: { required: [field], properties: { [field]: { type: 'string', pattern } } },
      },
    },
  };
}

/** Facts a refinement checks, attached to the very schema that checks them. */
const DOCUMENTED_RULES = new Map<z.ZodType, JsonSchema>([
  [
    NoticeRequestSchema,
    {
      allOf: [destinationFor('email', 'email', EMAIL_PATTERN), destinationFor('sms', 'phone', PHONE_PATTERN)],
    },
  ],
  [shape.eventId, { description: `business event id; ${IDENTIFIER_RULE}; ${CONTACT_DATA_RULE}` }],
  [shape.eventType, { description: `event type; ${IDENTIFIER_RULE}` }],
  [
    shape.recipient.shape.id,
    {
      description: `the business system's pseudonymous recipient id (pat_1042); ${IDENTIFIER_RULE}; ${CONTACT_DATA_RULE}`,
    },
  ],
  [
    shape.recipient.shape.email,
    {
      maxLength: NoticeLimits.emailMaxLength,
      description:
        'required when channels has email, and then checked (400, a code per rule: email_not_ascii, email_quoted_local_part, email_address_literal, email_local_part_too_long, email_invalid_local_part, email_invalid_domain, …): ASCII (an internationalised domain as xn--), at most 254 octets, a dot-atom local part of at most 64 octets, a domain of two or more LDH labels, the last not all digits. Accepted in any case, lower-cased for the fingerprint and the send. Ignored (never stored) when email is not requested',
    },
  ],
  [
    shape.recipient.shape.phone,
    {
      maxLength: NoticeLimits.phoneMaxLength,
      description:
        'required when channels has sms, and then E.164 exactly: +, a country code not starting with 0, 8 to 15 digits, nothing else — spaces, dashes, dots and parentheses are refused (phone_separators), not stripped. Ignored (never stored) when sms is not requested',
    },
  ],
  [shape.channels, { uniqueItems: true }],
  [shape.template.shape.id, { description: `template id; ${IDENTIFIER_RULE}` }],
  [shape.template.shape.version, { description: `template version; ${IDENTIFIER_RULE}` }],
  [
    shape.variables,
    {
      type: ['object', 'null'],
      maxProperties: NoticeLimits.maxVariables,
      propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: NoticeLimits.variableNameMaxLength },
      description:
        "the template's variables; absent or null is {}. The template's contract (required names, types, lengths) is checked at intake: 422 naming each offending variable",
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

const PROBLEMS = {
  400: problem(
    'malformed-body: not valid UTF-8 bytes (invalid_utf8; U+FFFD and lone surrogates count as invalid, raw or escaped), not canonical base64 (invalid_base64), not JSON (not_json) or nested too deeply (too_deep); invalid-request: wrong shape, types, lengths, characters or fields. `errors` names each field by path, never its value',
  ),
  404: problem('no such resource'),
  413: problem(`body over ${BodyLimits.jsonMaxBytes} bytes`),
  415: problem('not application/json, or a charset other than utf-8'),
  422: problem(
    'well-formed but not acceptable; `errors` names each field and why: channel_not_configured (this deployment does not send the channel: its provider is `none`), unknown_template, channel_not_in_template, the template variables’ rules, deadline_not_in_future, deadline_too_far, contact_data_in_identifier',
  ),
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

/**
 * Every IAM route may answer 403 (docs/api.md "Callers"): the caller's role is not among the
 * route's (lambdas/contract/routes.ts), or the request names no principal.
 */
function forbiddenOnIamRoutes<P extends Record<string, Record<string, unknown>>>(paths: P): P {
  const forbidden = problem("forbidden: the caller's role (in the problem) may not call this route");
  for (const [path, item] of Object.entries(paths)) {
    if (findRoute(path)?.route.auth !== 'iam') continue;
    for (const [key, operation] of Object.entries(item)) {
      if (key === 'parameters') continue;
      const responses = (operation as { responses: Record<string, unknown> }).responses;
      responses[403] = forbidden;
    }
  }
  return paths;
}

/** Routes that answer without the ledger (./router.ts): no capacity to exceed. */
const WITHOUT_LEDGER = new Set(['/v1/health', '/v1/openapi.json']);

/**
 * Every route that reads or writes the ledger may answer 503 with Retry-After when DynamoDB
 * refuses it for capacity (./route.ts `failureAnswer`); a batch's items get theirs one by one.
 */
function overCapacityOnLedgerRoutes<P extends Record<string, Record<string, unknown>>>(paths: P): P {
  for (const [path, item] of Object.entries(paths)) {
    if (WITHOUT_LEDGER.has(path)) continue;
    for (const [key, operation] of Object.entries(item)) {
      if (key === 'parameters') continue;
      const responses = (operation as { responses: Record<string, unknown> }).responses;
      responses[503] = overCapacity;
    }
  }
  return paths;
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
      NoticeConflict: NoticeConflictSchema,
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
    paths: overCapacityOnLedgerRoutes(
      forbiddenOnIamRoutes({
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
            summary:
              'this document (IAM-authorised in AWS like every route but provider callbacks; open on the local stack)',
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
                description:
                  'a replay of a recorded notice (same content), also after its channels left the table (past the hot window: answered from their key records, whatever the replayed deadline says)',
                ...json(ref('NoticeRecorded')),
              },
              409: {
                description:
                  'notice-conflict: recorded with other content (template, destination or variables); the recorded intent is unchanged. `errors` and `channels[].differs` name what differs by path, never by value. notice-taken: the notice id is another submitter’s; nothing recorded, nothing of it told (a plain Problem)',
                content: {
                  'application/problem+json': { schema: { oneOf: [ref('NoticeConflict'), ref('Problem')] } },
                },
              },
              ...PROBLEMS,
            },
          },
          get: {
            operationId: 'listNotices',
            summary:
              'unresolved channels (reserved, sending, retry_scheduled, unknown), oldest first, read from the open-intent index only',
            parameters: listParameters(),
            responses: {
              200: { description: 'one page', ...json(ref('NoticeList')) },
              400: problem(
                'invalid-request: a state that is not unresolved, an unknown channel, a malformed duration, a limit outside 1..200, or a cursor that is not ours or was given for other filters (invalid_cursor); `errors` names the parameter',
              ),
            },
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
            summary: 'the operator timeline, from the table or, past the hot window, from the archive',
            parameters: [noticeIdParameter],
            responses: {
              200: {
                description:
                  'timeline (a submitter: the channels its principal submitted); `source` says where it was read (ledger, archive, mixed)',
                ...json(ref('Timeline')),
              },
              400: PROBLEMS[400],
              404: problem('no such notice, or none the caller may see (the same answer)'),
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
              400: PROBLEMS[400],
              404: problem('no such notice or channel'),
              409: problem(
                'state-conflict: the channel is not unknown (its `state` is in the problem), or it resolved and left the table (code archived: final); unchanged',
              ),
              413: PROBLEMS[413],
              415: PROBLEMS[415],
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
              400: PROBLEMS[400],
              404: problem('no such notice, or none the caller may see (the same answer)'),
              409: problem(
                'state-conflict (code archived): every channel resolved and left the table, past the hot window: final; unchanged',
              ),
              413: PROBLEMS[413],
              415: PROBLEMS[415],
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
        ...providerEventPaths(),
      }),
    ),
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
