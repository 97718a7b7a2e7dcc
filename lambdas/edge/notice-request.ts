import { z } from 'zod';
import { Channel } from '../domain/channel.ts';
import { checkEmail, checkPhone } from '../domain/destination.ts';
import {
  FALLBACK_WITHIN_MAX_MS,
  FALLBACK_WITHIN_MIN_MS,
  type FallbackRequest,
  parseIsoDuration,
} from '../domain/fallback.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import { isKnownTimeZone } from '../domain/send-window.ts';
import type { NoticeRequest } from '../use-cases/submit-notice.ts';
import type { FieldError } from './problem.ts';

/**
 * The body of `POST /v1/notices` (docs/architecture.md §6) and of each `POST /v1/notices/batch` item.
 *
 * Two stages, two statuses:
 *  - shape (this schema) → 400: types, required fields, lengths, control characters, channels,
 *    a well-formed destination for every requested channel, unknown fields;
 *  - meaning → 422: a deadline that is not an absolute ISO 8601 instant (here), and, in the
 *    use case, an unknown template/version, variables breaking the contract, a channel the
 *    template has no body for, a deadline not in the future.
 *
 * Decisions:
 *  - objects are strict: an unknown field is a 400, because a misspelt `deadlne` or an extra
 *    `recipient.name` would otherwise be dropped silently (and the latter is personal data we
 *    must not pretend to handle);
 *  - `null` counts as absent for optional fields (`recipient.email`, `recipient.phone`,
 *    `deadline`, `variables`): business systems commonly serialise missing values that way;
 *  - absent `variables` is `{}`: whether that is enough is the template's contract (a template
 *    with required variables answers 422 naming each missing one, not a 400 for the object);
 *  - a destination is only checked for a channel that is requested; an unused one must still
 *    be a string of bounded length but is otherwise ignored (and never stored);
 *  - variables: at most 50 names, each an identifier of at most 64 characters (400 beyond);
 *    what the names and values must be is the template's contract (422);
 *  - lengths are counted in Unicode code points;
 *  - identifiers (`eventId`, `eventType`, `recipient.id`, `template.id`, `template.version`) are
 *    taken exactly as sent: leading or trailing whitespace is refused (`surrounding_whitespace`),
 *    not stripped, since a stripped id would derive another noticeId than the caller computes;
 *    whitespace only is `blank`; control, format (bidi, zero-width) and line-separator
 *    characters are `invalid_characters`;
 *  - destinations follow `lambdas/domain/destination.ts`, each refusal with its own code.
 */
export const NoticeLimits = {
  idMaxLength: 128,
  templateVersionMaxLength: 64,
  maxVariables: 50,
  variableNameMaxLength: 64,
  emailMaxLength: 254,
  phoneMaxLength: 32,
  deadlineMaxLength: 64,
  timeZoneMaxLength: 64,
  durationMaxLength: 32,
  batchMaxItems: 100,
} as const;

/** Control and format characters (bidi, zero-width), line/paragraph separators: they can forge log lines or spoof text. */
const FORBIDDEN_CLASS = '\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}';
const FORBIDDEN_CHARACTERS = new RegExp(`[${FORBIDDEN_CLASS}]`, 'u');
const BLANK = /^\p{White_Space}*$/u;
const SURROUNDING_WHITESPACE = /^\p{White_Space}|\p{White_Space}$/u;

/**
 * `text()`'s rules as one expression (with the `u` flag), for the API document: not empty, no
 * forbidden character, neither first nor last whitespace (so not whitespace only either).
 * test/edge/openapi.test.ts checks that it accepts exactly what `text()` accepts.
 */
export const IDENTIFIER_PATTERN = `^[^${FORBIDDEN_CLASS}\\p{White_Space}](?:[^${FORBIDDEN_CLASS}]*[^${FORBIDDEN_CLASS}\\p{White_Space}])?$`;
const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** A custom issue carries our own code in `params.code`; the message never quotes the input. */
function issue(ctx: z.RefinementCtx, code: string, message: string, path: (string | number)[] = []) {
  ctx.addIssue({ code: 'custom', message, path, params: { code } });
}

/** An identifier: 1–`max` code points, exactly as sent (no surrounding whitespace), no control characters. */
export function text(max: number) {
  const schema = z.string().superRefine((value, ctx) => {
    const length = codePoints(value);
    if (length === 0) issue(ctx, 'too_short', 'must not be empty');
    else if (length > max) issue(ctx, 'too_long', `must be at most ${max} characters`);
    if (length > 0 && BLANK.test(value)) issue(ctx, 'blank', 'must not be whitespace only');
    else if (SURROUNDING_WHITESPACE.test(value)) {
      issue(ctx, 'surrounding_whitespace', 'must not begin or end with whitespace (it is not stripped)');
    }
    if (FORBIDDEN_CHARACTERS.test(value)) {
      issue(
        ctx,
        'invalid_characters',
        'must not contain control, format (bidi, zero-width) or line-separator characters',
      );
    }
  });
  // Lengths in code points, as JSON Schema counts them.
  return schema.meta({ minLength: 1, maxLength: max, pattern: IDENTIFIER_PATTERN });
}

function optionalString(max: number) {
  return z
    .string()
    .nullish()
    .superRefine((value, ctx) => {
      if (typeof value === 'string' && codePoints(value) > max) {
        issue(ctx, 'too_long', `must be at most ${max} characters`);
      }
    });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Not `z.record`: it skips an own `__proto__` key that JSON.parse can produce, which would then
 * escape both this check and the template contract. Names are checked on the raw object.
 */
const Variables = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined || value === null) return;
    if (!isPlainObject(value)) {
      issue(ctx, 'wrong_type', 'must be an object');
      return;
    }
    const names = Object.keys(value);
    if (names.length > NoticeLimits.maxVariables) {
      issue(ctx, 'too_many', `must have at most ${NoticeLimits.maxVariables} variables`);
    }
    // Reported on `variables` itself: an invalid name is not a safe path segment to echo.
    if (names.some((name) => !VARIABLE_NAME.test(name) || name.length > NoticeLimits.variableNameMaxLength)) {
      issue(
        ctx,
        'invalid_variable_name',
        `variable names must be identifiers (a letter, then letters, digits or _) of at most ${NoticeLimits.variableNameMaxLength} characters`,
      );
    }
  })
  .transform((value) => (isPlainObject(value) ? value : {}));

/** An IANA zone the runtime knows (`Europe/Berlin`); the zone is never echoed in a refusal. */
const TimeZone = z
  .string()
  .nullish()
  .superRefine((value, ctx) => {
    if (typeof value !== 'string') return;
    if (codePoints(value) > NoticeLimits.timeZoneMaxLength) {
      issue(ctx, 'too_long', `must be at most ${NoticeLimits.timeZoneMaxLength} characters`);
    } else if (!isKnownTimeZone(value)) {
      issue(ctx, 'invalid_time_zone', 'must be an IANA time zone name, e.g. Europe/Berlin');
    }
  })
  .meta({ description: "the recipient's IANA time zone, for send windows; absent: SEND_WINDOW_TIME_ZONE" });

/**
 * docs/architecture.md §12 "Delivery policies": when `from` ends failed or suppressed, or is not
 * delivered `within` (an ISO 8601 duration, PT1M to P7D) of intake, `to` is reserved. Which
 * channels may be named is a cross-field rule (`crossFieldErrors`).
 */
const Fallback = z
  .strictObject({
    from: z.enum(Channel),
    to: z.enum(Channel),
    within: z.string().superRefine((value, ctx) => {
      const ms = value.length <= NoticeLimits.durationMaxLength ? parseIsoDuration(value) : undefined;
      if (ms === undefined) {
        issue(
          ctx,
          'invalid_duration',
          'must be an ISO 8601 duration of days, hours, minutes or seconds, e.g. PT10M',
        );
      } else if (ms < FALLBACK_WITHIN_MIN_MS || ms > FALLBACK_WITHIN_MAX_MS) {
        issue(ctx, 'out_of_range', 'must lie from PT1M to P7D');
      }
    }),
  })
  .nullish()
  .meta({
    description:
      "channel fallback: when `from` ends failed or suppressed, or is not delivered `within` (ISO 8601 duration, PT1M to P7D) of intake, `to` is reserved with reason fallback; `from` among channels, `to` not, its destination given; part of what a replay must match; absent: the template version's default where it fits",
  });

export const NoticeRequestSchema = z.strictObject({
  eventId: text(NoticeLimits.idMaxLength),
  eventType: text(NoticeLimits.idMaxLength),
  recipient: z.strictObject({
    id: text(NoticeLimits.idMaxLength),
    email: optionalString(NoticeLimits.emailMaxLength),
    phone: optionalString(NoticeLimits.phoneMaxLength),
    timeZone: TimeZone,
  }),
  channels: z.array(z.enum(Channel)).min(1),
  template: z.strictObject({
    id: text(NoticeLimits.idMaxLength),
    version: text(NoticeLimits.templateVersionMaxLength),
  }),
  // `.optional()` outside the transform: a transform alone makes the key required in zod 4.
  variables: Variables.optional(),
  deadline: optionalString(NoticeLimits.deadlineMaxLength),
  // docs/architecture.md §11: the lane; absent or null → the template's, else standard.
  priority: z.enum(PRIORITIES as [Priority, ...Priority[]]).nullish(),
  fallback: Fallback,
});

/**
 * Rules that span fields (repeats, a destination per requested channel). Run on the raw input
 * whether or not the rest of the shape is right, so one response lists every problem; a path
 * the schema already reported is not reported twice.
 */
function crossFieldErrors(input: unknown): FieldError[] {
  if (!isPlainObject(input) || !Array.isArray(input.channels)) return [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  input.channels.forEach((channel: unknown, i) => {
    if (typeof channel !== 'string') return;
    if (seen.has(channel))
      errors.push({ path: `channels.${i}`, code: 'duplicate', message: 'repeats a channel' });
    seen.add(channel);
  });
  const fallbackTo = fallbackErrors(input.fallback, seen, errors);
  const recipient = isPlainObject(input.recipient) ? input.recipient : {};
  const destinations = [
    { channel: 'email', field: 'email', check: checkEmail },
    { channel: 'sms', field: 'phone', check: checkPhone },
  ] as const;
  for (const { channel, field, check } of destinations) {
    if (!seen.has(channel) && fallbackTo !== channel) continue;
    const value = recipient[field];
    const path = `recipient.${field}`;
    if (value === undefined || value === null) {
      errors.push({ path, code: 'required', message: `is required for the ${channel} channel` });
    } else if (typeof value === 'string') {
      // The same rules the use case applies when it fingerprints, so a 400 here is never a 422 there.
      const result = check(value);
      if (!result.ok) errors.push({ path, code: result.code, message: result.message });
    }
  }
  return errors;
}

/**
 * The fallback's channels against the request's: `from` among `channels`, `to` not (it is the
 * fallback's to reserve), and not the same. Returns `to` when its destination must be given.
 */
function fallbackErrors(
  fallback: unknown,
  requested: ReadonlySet<string>,
  errors: FieldError[],
): string | undefined {
  if (!isPlainObject(fallback)) return undefined;
  const { from, to } = fallback;
  if (typeof from === 'string' && !requested.has(from)) {
    errors.push({
      path: 'fallback.from',
      code: 'not_requested',
      message: 'must be one of the requested channels',
    });
  }
  if (typeof to !== 'string') return undefined;
  if (to === from) {
    errors.push({ path: 'fallback.to', code: 'same_channel', message: 'must differ from fallback.from' });
  } else if (requested.has(to)) {
    errors.push({
      path: 'fallback.to',
      code: 'already_requested',
      message: 'must not be among channels: the fallback reserves it',
    });
  }
  return to === 'email' || to === 'sms' ? to : undefined;
}

export const BatchRequestSchema = z.strictObject({
  notices: z.array(z.unknown()).min(1).max(NoticeLimits.batchMaxItems),
});

// ---------------------------------------------------------------------------------------------
// Deadline
// ---------------------------------------------------------------------------------------------

/** RFC 3339 date-time: an offset (`Z` or `±hh:mm`) is required, seconds and fractions optional. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
/** Same, without the offset: recognised only to say precisely what is missing. */
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;

export type DeadlineParse =
  | { readonly ok: true; readonly epochMs: number }
  | { readonly ok: false; readonly error: FieldError };

/**
 * Parses a deadline to epoch ms. `Date.parse` alone is not enough: it rolls 30 February over
 * into March and reads an offset-less time in the server's zone.
 */
export function parseDeadline(value: string): DeadlineParse {
  const fail = (code: string, message: string): DeadlineParse => ({
    ok: false,
    error: { path: 'deadline', code, message },
  });
  const m = DATE_TIME.exec(value);
  if (!m) {
    return LOCAL_DATE_TIME.test(value)
      ? fail('missing_offset', 'must include a UTC offset (Z or ±hh:mm)')
      : fail('invalid_date_time', 'must be an ISO 8601 date-time with offset, e.g. 2026-12-01T09:00:00Z');
  }
  const [, y, mo, d, h, mi, s = '0', fraction = '', z, sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    Number(h) <= 23 &&
    Number(mi) <= 59 &&
    Number(s) <= 59 &&
    (z !== undefined || (Number(oh) <= 23 && Number(om) <= 59));
  if (!valid) return fail('invalid_date_time', 'is not a valid calendar date and time');
  const offsetMinutes = z !== undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const millis = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  const epochMs =
    Date.UTC(year, month - 1, day, Number(h), Number(mi), Number(s), millis) - offsetMinutes * 60_000;
  return { ok: true, epochMs };
}

// ---------------------------------------------------------------------------------------------
// Issues → field errors
// ---------------------------------------------------------------------------------------------

function dotted(path: readonly PropertyKey[]): string {
  return path.map((segment) => String(segment)).join('.');
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = Object.hasOwn(current, segment)
      ? (current as Record<PropertyKey, unknown>)[segment]
      : undefined;
  }
  return current;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: 'an object',
  record: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
};

/** A field name the client sent that we do not know: echoed only when it looks like one. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * zod issues → `errors[]`. Every message is written here from the rule (zod's `input` is never
 * read, and zod's own messages are not reused), so no submitted value can leak into a response.
 */
export function toFieldErrors(error: z.ZodError, input: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const i of error.issues) {
    const path = dotted(i.path);
    switch (i.code) {
      case 'invalid_type': {
        const missing = valueAt(input, i.path) === undefined;
        errors.push(
          missing
            ? { path, code: 'required', message: 'is required' }
            : { path, code: 'wrong_type', message: `must be ${TYPE_NAMES[i.expected] ?? i.expected}` },
        );
        break;
      }
      case 'invalid_value':
        errors.push({
          path,
          code: 'not_allowed',
          message: `must be one of: ${i.values.map((v) => String(v)).join(', ')}`,
        });
        break;
      case 'too_small':
      case 'too_big': {
        const small = i.code === 'too_small';
        const limit = String(small ? i.minimum : i.maximum);
        const unit = i.origin === 'string' ? 'characters' : 'items';
        errors.push({
          path,
          code: i.origin === 'string' ? (small ? 'too_short' : 'too_long') : small ? 'too_few' : 'too_many',
          message: `must have ${small ? 'at least' : 'at most'} ${limit} ${unit}`,
        });
        break;
      }
      case 'unrecognized_keys':
        for (const key of i.keys) {
          errors.push(
            FIELD_NAME.test(key)
              ? {
                  path: dotted([...i.path, key]),
                  code: 'unknown_field',
                  message: 'is not a field of this request',
                }
              : { path, code: 'unknown_field', message: 'contains a field that is not part of this request' },
          );
        }
        break;
      case 'custom': {
        const code = typeof i.params?.code === 'string' ? i.params.code : 'invalid';
        errors.push({ path, code, message: i.message });
        break;
      }
      default:
        errors.push({ path, code: 'invalid', message: 'is not valid' });
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

export type ParsedNotice =
  | { readonly ok: true; readonly request: NoticeRequest }
  | { readonly ok: false; readonly status: 400 | 422; readonly errors: readonly FieldError[] };

/** Shape (400), then the deadline's meaning (422). Template and variables are the use case's. */
export function parseNoticeRequest(input: unknown): ParsedNotice {
  const parsed = NoticeRequestSchema.safeParse(input);
  const cross = crossFieldErrors(input);
  if (!parsed.success || cross.length > 0) {
    const errors = parsed.success ? [] : toFieldErrors(parsed.error, input);
    const reported = new Set(errors.map((e) => e.path));
    return { ok: false, status: 400, errors: [...errors, ...cross.filter((e) => !reported.has(e.path))] };
  }
  const body = parsed.data;
  let deadline: number | undefined;
  if (typeof body.deadline === 'string') {
    const result = parseDeadline(body.deadline);
    if (!result.ok) return { ok: false, status: 422, errors: [result.error] };
    deadline = result.epochMs;
  }
  const fallback: FallbackRequest | undefined = body.fallback
    ? {
        from: body.fallback.from,
        to: body.fallback.to,
        withinMs: parseIsoDuration(body.fallback.within) as number,
      }
    : undefined;
  const carried = (channel: 'email' | 'sms') =>
    body.channels.includes(channel) || (fallback ? fallback.to === channel : true);
  return {
    ok: true,
    request: {
      eventId: body.eventId,
      eventType: body.eventType,
      recipient: {
        id: body.recipient.id,
        // Only the destinations of requested channels, and of the channel a fallback may reserve
        // (the request's, or without one its template's default), travel on: nothing else is kept.
        email: carried('email') ? (body.recipient.email ?? undefined) : undefined,
        phone: carried('sms') ? (body.recipient.phone ?? undefined) : undefined,
        ...(body.recipient.timeZone ? { timeZone: body.recipient.timeZone } : {}),
      },
      channels: body.channels,
      template: { id: body.template.id, version: body.template.version },
      variables: body.variables ?? {},
      deadline,
      ...(body.priority ? { priority: body.priority } : {}),
      ...(fallback ? { fallback } : {}),
    },
  };
}

export type ParsedBatch =
  | { readonly ok: true; readonly notices: readonly unknown[] }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

/** The batch envelope only; items are parsed one by one so that one bad item fails alone. */
export function parseBatchRequest(input: unknown): ParsedBatch {
  const parsed = BatchRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: toFieldErrors(parsed.error, input) };
  return { ok: true, notices: parsed.data.notices };
}
