import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { z } from 'zod';
import { Channel } from '../domain/channel.ts';
import { isNoticeId } from '../domain/identity.ts';
import { text, toFieldErrors } from './notice-request.ts';
import type { FieldError } from './problem.ts';

/**
 * Operator routes (docs/operators.md): the schemas their handlers validate with, and from which
 * `docs/openapi.json` is generated. Same conventions as `notice-request.ts`: strict objects (an
 * unknown field is a 400), lengths in code points, no control characters, messages that never
 * quote the input. `.meta()` carries into the generated document what a refinement checks.
 *
 *   GET  /v1/notices?state=&channel=&olderThan=&limit=&cursor=
 *   POST /v1/notices/{noticeId}/channels/{channel}/resolution   { outcome, reason, evidence?, actor? }
 *   POST /v1/notices/{noticeId}/cancel                          { reason, actor? }
 *   PUT | DELETE /v1/suppressions/{channel}/{destination}       { reason?, actor? } (optional body)
 *
 * Every operator act is recorded with an `actor` (`operatorActor` below): a transition record
 * (stored as `by`) or a suppression record (stored as `actor`), one rule for both.
 */
export const OperatorLimits = {
  reasonMaxLength: 500,
  evidenceMaxLength: 2000,
  listDefaultLimit: 50,
  listMaxLimit: 200,
  cursorMaxLength: 1024,
} as const;

/**
 * States a list may ask for: the unresolved ones (docs/architecture.md §3), read from the open
 * index, and `failed`, read from the recent-failures list (the last day's, newest first).
 */
export const LISTABLE_STATES = ['reserved', 'sending', 'retry_scheduled', 'unknown', 'failed'] as const;
export type ListableState = (typeof LISTABLE_STATES)[number];

function boundedText(max: number, description: string) {
  return text(max).meta({ minLength: 1, maxLength: max, description });
}

// ---------------------------------------------------------------------------------------------
// ISO 8601 durations (olderThan)
// ---------------------------------------------------------------------------------------------

/**
 * `PnW`, or `PnDTnHnMnS` with any part omitted (at least one present); integers, seconds may
 * have a fraction. Years and months are refused: they have no fixed length.
 */
const DURATION =
  /^P(?:(\d{1,6})W|(?!$)(?:(\d{1,6})D)?(?:T(?=\d)(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,9}(?:\.\d{1,3})?)S)?)?)$/;

/** Milliseconds of an ISO 8601 duration, or undefined when it is not one this API accepts. */
export function parseIsoDuration(value: string): number | undefined {
  const m = DURATION.exec(value);
  if (!m) return undefined;
  const [, weeks, days, hours, minutes, seconds] = m;
  return Math.round(
    (Number(weeks ?? 0) * 7 * 86_400 +
      Number(days ?? 0) * 86_400 +
      Number(hours ?? 0) * 3_600 +
      Number(minutes ?? 0) * 60 +
      Number(seconds ?? 0)) *
      1000,
  );
}

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

const custom = (ctx: z.RefinementCtx, code: string, message: string) =>
  ctx.addIssue({ code: 'custom', message, params: { code } });

/** A snake_case code: copied into the ledger and read by alarms, so never free text. */
const REASON_CODE = /^[a-z][a-z0-9_]{0,63}$/;
/** An operator name: letters, digits and `._:/-`, no `@` (an address is not a name to keep). */
const ACTOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/** The actor of an operator act on the local stack when the body names none. */
export const LOCAL_ACTOR = 'local';

/** An optional string that must match `pattern`; the document carries the same pattern. */
function optionalMatching(pattern: RegExp, message: string, description: string) {
  return z
    .string()
    .superRefine((value, ctx) => {
      if (!pattern.test(value)) custom(ctx, 'invalid_format', message);
    })
    .optional()
    .meta({ pattern: pattern.source, description });
}

const ActorField = optionalMatching(
  ACTOR_NAME,
  'must be 1-128 letters, digits or ._:/- (no @)',
  `who acts, where the request carries no IAM principal (the local stack; default ${LOCAL_ACTOR}). Behind IAM authorisation the caller's principal ARN is the actor and this field is refused (400 not_allowed)`,
);

/** 1 to listMaxLimit (200) in decimal, no sign, no leading zero. */
const LIMIT = /^(?:[1-9][0-9]?|1[0-9]{2}|200)$/;

/**
 * Query of `GET /v1/notices`. Query values arrive as strings (API Gateway joins a repeated
 * parameter with commas, which then fails the enum: one value per parameter).
 */
export const ListNoticesQuerySchema = z.strictObject({
  state: z.enum(LISTABLE_STATES).optional().meta({
    description:
      'only channels in this unresolved state; all unresolved states when absent; failed: the channels that failed in the last 24 hours (at most the newest 1000), most recent first',
  }),
  channel: z.enum(Channel).optional().meta({ description: 'only this channel' }),
  olderThan: z
    .string()
    .superRefine((value, ctx) => {
      if (parseIsoDuration(value) === undefined) {
        custom(
          ctx,
          'invalid_duration',
          'must be an ISO 8601 duration in weeks, days, hours, minutes or seconds, e.g. PT10M or P1D',
        );
      }
    })
    .optional()
    .meta({
      description: 'only channels created at least this long ago (ISO 8601 duration, e.g. PT10M, P1D)',
      pattern: DURATION.source,
      examples: ['PT10M'],
    }),
  limit: z
    .string()
    .superRefine((value, ctx) => {
      if (!LIMIT.test(value)) {
        custom(ctx, 'out_of_range', `must be a whole number from 1 to ${OperatorLimits.listMaxLimit}`);
      }
    })
    .transform(Number)
    .optional()
    .meta({
      description: `page size, 1 to ${OperatorLimits.listMaxLimit} (default ${OperatorLimits.listDefaultLimit})`,
      pattern: LIMIT.source,
    }),
  cursor: z
    .string()
    .max(OperatorLimits.cursorMaxLength)
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .meta({ description: "opaque: the previous page's nextCursor, with the same filters" }),
});

export const ResolutionRequestSchema = z.strictObject({
  outcome: z.enum(['accepted', 'not_sent']).meta({
    description:
      'accepted: the provider holds the message (seen in its console); not_sent: it never got it (send again)',
  }),
  reason: boundedText(
    OperatorLimits.reasonMaxLength,
    'why the operator concluded this; shown in the timeline',
  ),
  evidence: boundedText(
    OperatorLimits.evidenceMaxLength,
    'what was seen (ticket, console search)',
  ).optional(),
  actor: ActorField,
});

export const CancelRequestSchema = z.strictObject({
  reason: boundedText(OperatorLimits.reasonMaxLength, 'why the notice is called off; shown in the timeline'),
  actor: ActorField,
});

/**
 * Body of an operator's `PUT` (suppress) or `DELETE` (lift) on a suppression, optional as a
 * whole. `reason` is a code, not prose: it is copied into the ledger (the `detail` of an
 * `on_suppression_list` transition) and read by alarms. Free text (`detail`) is refused with its
 * own code: it is where personal data would end up ("patient phoned from her new number …"), and
 * it would be shown to every operator who reads the entry.
 */
export const SuppressionRequestSchema = z.strictObject({
  reason: optionalMatching(
    REASON_CODE,
    'must be a snake_case code (a-z, 0-9, _; at most 64 characters)',
    'snake_case code, copied into the ledger; default operator (PUT), lifted_by_operator (DELETE)',
  ),
  actor: ActorField,
  detail: z
    .unknown()
    .superRefine((_value, ctx) => {
      custom(ctx, 'free_text_not_accepted', 'is not accepted: free text is not kept; use a reason code');
    })
    .optional()
    .meta({ not: {}, description: 'refused (400 free_text_not_accepted): free text is not kept' }),
});

export type ResolutionRequestBody = z.input<typeof ResolutionRequestSchema>;
export type CancelRequestBody = z.input<typeof CancelRequestSchema>;
/** As a client writes it: `detail` is in the schema only to be refused by name. */
export type SuppressionRequestBody = Omit<z.input<typeof SuppressionRequestSchema>, 'detail'>;
export type ListNoticesQuery = z.input<typeof ListNoticesQuerySchema>;

// ---------------------------------------------------------------------------------------------
// Entry points: one per route, each answering a value or the field errors of a 400
// ---------------------------------------------------------------------------------------------

export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

export interface ListNoticesFilter {
  readonly state?: ListableState | undefined;
  readonly channel?: Channel | undefined;
  readonly olderThanMs?: number | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** `event.queryStringParameters` (undefined when there is no query string). */
export function parseListNoticesQuery(
  query: Readonly<Record<string, string | undefined>> | undefined,
): Parsed<ListNoticesFilter> {
  const input = query ?? {};
  const parsed = ListNoticesQuerySchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  const { state, channel, olderThan, limit, cursor } = parsed.data;
  return {
    ok: true,
    value: {
      state,
      channel,
      olderThanMs: olderThan === undefined ? undefined : parseIsoDuration(olderThan),
      limit: limit ?? OperatorLimits.listDefaultLimit,
      cursor,
    },
  };
}

/** The caller's IAM principal ARN, when API Gateway's IAM authorizer vouched for one. */
export function iamPrincipal(event: APIGatewayProxyEventV2): string | undefined {
  const context = event.requestContext as { authorizer?: { iam?: { userArn?: unknown } } } | undefined;
  const arn = context?.authorizer?.iam?.userArn;
  return typeof arn === 'string' && arn.length > 0 ? arn : undefined;
}

/**
 * Who an operator act is recorded as, for transition records and suppression records alike:
 * behind API Gateway's IAM authorisation the caller's principal ARN, and a body `actor` is
 * refused (a signed caller cannot write someone else's name); where there is no principal (the
 * local stack), the body's `actor`, else `local`.
 */
export function operatorActor(principal: string | undefined, bodyActor: string | undefined): Parsed<string> {
  if (principal !== undefined && bodyActor !== undefined) {
    return {
      ok: false,
      errors: [
        { path: 'actor', code: 'not_allowed', message: "is taken from the request's IAM credentials" },
      ],
    };
  }
  return { ok: true, value: principal ?? bodyActor ?? LOCAL_ACTOR };
}

export interface ResolutionBody {
  readonly outcome: 'accepted' | 'not_sent';
  readonly reason: string;
  readonly evidence?: string | undefined;
  readonly actor?: string | undefined;
}

export function parseResolutionRequest(input: unknown): Parsed<ResolutionBody> {
  const parsed = ResolutionRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  return { ok: true, value: parsed.data };
}

export function parseCancelRequest(
  input: unknown,
): Parsed<{ readonly reason: string; readonly actor?: string | undefined }> {
  const parsed = CancelRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  return { ok: true, value: parsed.data };
}

/** A suppression `PUT`/`DELETE` body (`undefined` or `null` when none was sent). */
export function parseSuppressionRequest(
  input: unknown,
): Parsed<{ readonly reason?: string | undefined; readonly actor?: string | undefined }> {
  const body = input ?? {};
  const parsed = SuppressionRequestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, body) };
  return { ok: true, value: { reason: parsed.data.reason, actor: parsed.data.actor } };
}

/** Path parameters `{noticeId}` and `{channel}` of the operator routes. */
export function parseNoticePath(
  params: Readonly<Record<string, string>>,
  withChannel: boolean,
): Parsed<{
  readonly noticeId: string;
  readonly channel?: Channel;
}> {
  const errors: FieldError[] = [];
  const noticeId = params.noticeId ?? '';
  if (!isNoticeId(noticeId)) {
    errors.push({
      path: 'noticeId',
      code: 'invalid_format',
      message: 'must be ntc_ followed by 26 characters a-z or 2-7',
    });
  }
  const channel = params.channel ?? '';
  const channelOk = (Object.values(Channel) as string[]).includes(channel);
  if (withChannel && !channelOk) {
    errors.push({
      path: 'channel',
      code: 'not_allowed',
      message: `must be one of: ${Object.values(Channel).join(', ')}`,
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { noticeId, ...(withChannel ? { channel: channel as Channel } : {}) } };
}
