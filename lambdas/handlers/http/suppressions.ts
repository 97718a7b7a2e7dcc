import { z } from 'zod';
import { type Channel, isChannel } from '../../domain/channel.ts';
import { InvalidDestinationError } from '../../domain/errors.ts';
import { readJsonBody } from '../../edge/http-body.ts';
import { toFieldErrors } from '../../edge/notice-request.ts';
import {
  emptyResponse,
  type FieldError,
  invalidRequest,
  jsonResponse,
  notFound,
  problemResponse,
} from '../../edge/problem.ts';
import type { SuppressionEntry } from '../../ports/ledger-store.port.ts';
import { deleteSuppression, getSuppression, putSuppression } from '../../use-cases/manage-suppressions.ts';
import type { HttpRequest, HttpRuntime, RouteReply } from './router.ts';

/**
 * `GET | PUT | DELETE /v1/suppressions/{channel}/{destination}`.
 *
 * The destination arrives percent-encoded in the path (`%2B15551234567`); the router decodes it
 * and the use case normalises and fingerprints it. It is never logged or returned: responses
 * carry the fingerprint and the masked form.
 *
 * An unknown channel is a 400 (naming `channel`), not a 404: the path is well-formed for this
 * resource, and the caller learns which part to fix.
 */

/**
 * `reason` is a snake_case code because it is copied into the ledger (the `detail` of an
 * `on_suppression_list` transition) and read by alarms; free text goes in `detail`.
 */
export const PutSuppressionSchema = z
  .strictObject({ reason: z.string().optional(), detail: z.string().optional() })
  .superRefine((body, ctx) => {
    if (body.reason !== undefined && !/^[a-z][a-z0-9_]{0,63}$/.test(body.reason)) {
      ctx.addIssue({
        code: 'custom',
        path: ['reason'],
        params: { code: 'invalid_format' },
        message: 'must be a snake_case code (a-z, 0-9, _; at most 64 characters)',
      });
    }
    if (body.detail !== undefined && (body.detail.length === 0 || body.detail.length > 500)) {
      ctx.addIssue({
        code: 'custom',
        path: ['detail'],
        params: { code: 'too_long' },
        message: 'must be 1 to 500 characters',
      });
    } else if (body.detail !== undefined && /[\p{Cc}\p{Zl}\p{Zp}]/u.test(body.detail)) {
      ctx.addIssue({
        code: 'custom',
        path: ['detail'],
        params: { code: 'invalid_characters' },
        message: 'must not contain control or line-separator characters',
      });
    }
  });

type Target = { readonly ok: true; readonly channel: Channel; readonly destination: string } | RouteReply;

function badRequest(error: FieldError): RouteReply {
  return { response: problemResponse(invalidRequest([error])) };
}

function target(request: HttpRequest): Target {
  const channel = request.params.channel ?? '';
  if (!isChannel(channel)) {
    return badRequest({ path: 'channel', code: 'not_allowed', message: 'must be one of: email, sms' });
  }
  return { ok: true, channel, destination: request.params.destination ?? '' };
}

/** The use cases throw `InvalidDestinationError` for a destination that does not normalise. */
async function orInvalidDestination(run: () => Promise<RouteReply>): Promise<RouteReply> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof InvalidDestinationError)) throw error;
    return badRequest({
      path: 'destination',
      code: 'invalid_destination',
      message: 'must be an email address (email) or an E.164 phone number (sms), URL-encoded',
    });
  }
}

function toJson(entry: SuppressionEntry) {
  return {
    channel: entry.channel,
    destination: { fingerprint: entry.fingerprint, masked: entry.masked },
    reason: entry.reason,
    source: entry.source,
    createdAt: new Date(entry.createdAt).toISOString(),
    detail: entry.detail ?? null,
  };
}

const NOT_FOUND = notFound('this destination is not on the suppression list for this channel');

export async function getSuppressionRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  return orInvalidDestination(async () => {
    const entry = await getSuppression(t.channel, t.destination, runtime.deps);
    return { response: entry ? jsonResponse(200, toJson(entry)) : problemResponse(NOT_FOUND) };
  });
}

/** PUT: optional JSON body `{ reason?, detail? }`, reason defaulting to `operator` → 201 new / 200 replaced. */
export async function putSuppressionRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  const body = readJsonBody(request.event, { optional: true });
  if (!body.ok) return { response: problemResponse(body.problem) };
  const parsed = PutSuppressionSchema.safeParse(body.value ?? {});
  if (!parsed.success) {
    return { response: problemResponse(invalidRequest(toFieldErrors(parsed.error, body.value))) };
  }
  return orInvalidDestination(async () => {
    const { entry, created } = await putSuppression(
      t.channel,
      t.destination,
      { reason: parsed.data.reason ?? 'operator', detail: parsed.data.detail },
      runtime.deps,
    );
    return { response: jsonResponse(created ? 201 : 200, toJson(entry)) };
  });
}

export async function deleteSuppressionRoute(
  request: HttpRequest,
  runtime: HttpRuntime,
): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  return orInvalidDestination(async () => {
    const existed = await deleteSuppression(t.channel, t.destination, runtime.deps);
    return { response: existed ? emptyResponse(204) : problemResponse(NOT_FOUND) };
  });
}
