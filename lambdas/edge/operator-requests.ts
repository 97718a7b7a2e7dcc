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
 *   POST /v1/notices/{noticeId}/channels/{channel}/resolution   { outcome, reason, evidence? }
 *   POST /v1/notices/{noticeId}/cancel                          { reason }
 */
export const OperatorLimits = {
  reasonMaxLength: 500,
  evidenceMaxLength: 2000,
  listDefaultLimit: 50,
  listMaxLimit: 200,
  cursorMaxLength: 1024,
} as const;

/** States a list may ask for: the unresolved ones (DESIGN §3), the only ones in the open index. */
export const LISTABLE_STATES = ['reserved', 'sending', 'retry_scheduled', 'unknown'] as const;
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

/**
 * Query of `GET /v1/notices`. Query values arrive as strings (API Gateway joins a repeated
 * parameter with commas, which then fails the enum: one value per parameter).
 */
export const ListNoticesQuerySchema = z.strictObject({
  state: z
    .enum(LISTABLE_STATES)
    .optional()
    .meta({ description: 'only channels in this unresolved state; all unresolved states when absent' }),
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
    .regex(/^[0-9]{1,3}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(OperatorLimits.listMaxLimit))
    .optional()
    .meta({ description: `page size (default ${OperatorLimits.listDefaultLimit})` }),
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
});

export const CancelRequestSchema = z.strictObject({
  reason: boundedText(OperatorLimits.reasonMaxLength, 'why the notice is called off; shown in the timeline'),
});

export type ResolutionRequestBody = z.input<typeof ResolutionRequestSchema>;
export type CancelRequestBody = z.input<typeof CancelRequestSchema>;
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

export interface ResolutionBody {
  readonly outcome: 'accepted' | 'not_sent';
  readonly reason: string;
  readonly evidence?: string | undefined;
}

export function parseResolutionRequest(input: unknown): Parsed<ResolutionBody> {
  const parsed = ResolutionRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  return { ok: true, value: parsed.data };
}

export function parseCancelRequest(input: unknown): Parsed<{ readonly reason: string }> {
  const parsed = CancelRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  return { ok: true, value: parsed.data };
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
