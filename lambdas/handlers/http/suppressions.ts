import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { z } from 'zod';
import { type Channel, isChannel } from '../../domain/channel.ts';
import { InvalidDestinationError } from '../../domain/errors.ts';
import { isSuppressed, type SuppressionRecord } from '../../domain/suppression.ts';
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
import type { SuppressionHistory } from '../../ports/ledger-store.port.ts';
import {
  getSuppression,
  LIFT_REASON,
  lift,
  type OperatorAct,
  suppress,
} from '../../use-cases/manage-suppressions.ts';
import type { HttpRequest, HttpRuntime, RouteReply } from './router.ts';

/**
 * `GET | PUT | DELETE /v1/suppressions/{channel}/{destination}` (README "Suppressions").
 *
 * The destination arrives percent-encoded in the path (`%2B15551234567`); the router decodes it
 * and the use case checks and fingerprints it by the intake rules. It is never logged or
 * returned: responses carry the fingerprint and the masked form.
 *
 * The list is a history: PUT appends an operator `suppress` record, DELETE a `lift` record,
 * providers append their bounces and complaints; GET shows the effective state (the latest
 * record) and the records, oldest first. Bodies (optional, JSON): `{ reason?, actor? }`.
 *  - `reason` is a snake_case code: it is copied into the ledger (the `detail` of an
 *    `on_suppression_list` transition) and read by alarms;
 *  - `actor` names the operator where the request carries no IAM principal (the local stack);
 *    behind API Gateway's IAM auth the principal's ARN is the actor and a body `actor` is refused;
 *  - free text (`detail`) is refused: it is where personal data would end up ("patient phoned
 *    from her new number …"), and it would be shown to every operator who reads the entry.
 *
 * An unknown channel is a 400 (naming `channel`), not a 404: the path is well-formed for this
 * resource, and the caller learns which part to fix.
 */

const CODE = /^[a-z][a-z0-9_]{0,63}$/;
/** An operator name: letters, digits and `._:/-`, no `@` (an address is not a name to keep). */
const ACTOR = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

function customIssue(ctx: z.RefinementCtx, path: string, code: string, message: string) {
  ctx.addIssue({ code: 'custom', path: [path], params: { code }, message });
}

const OperatorBodySchema = z
  .object({ reason: z.string().optional(), actor: z.string().optional() })
  .catchall(z.unknown())
  .superRefine((body, ctx) => {
    if (body.reason !== undefined && !CODE.test(body.reason)) {
      customIssue(
        ctx,
        'reason',
        'invalid_format',
        'must be a snake_case code (a-z, 0-9, _; at most 64 characters)',
      );
    }
    if (body.actor !== undefined && !ACTOR.test(body.actor)) {
      customIssue(ctx, 'actor', 'invalid_format', 'must be 1-128 letters, digits or ._:/- (no @)');
    }
    for (const key of Object.keys(body)) {
      if (key === 'reason' || key === 'actor') continue;
      if (key === 'detail') {
        customIssue(
          ctx,
          'detail',
          'free_text_not_accepted',
          'is not accepted: free text is not kept; use a reason code',
        );
      } else {
        ctx.addIssue({ code: 'unrecognized_keys', keys: [key], path: [], input: undefined, message: '' });
      }
    }
  });

type Target = { readonly ok: true; readonly channel: Channel; readonly destination: string } | RouteReply;

function badRequest(errors: readonly FieldError[]): RouteReply {
  return { response: problemResponse(invalidRequest(errors)) };
}

function target(request: HttpRequest): Target {
  const channel = request.params.channel ?? '';
  if (!isChannel(channel)) {
    return badRequest([{ path: 'channel', code: 'not_allowed', message: 'must be one of: email, sms' }]);
  }
  return { ok: true, channel, destination: request.params.destination ?? '' };
}

/** The use cases throw `InvalidDestinationError` for a destination providers would not take. */
async function orInvalidDestination(run: () => Promise<RouteReply>): Promise<RouteReply> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof InvalidDestinationError)) throw error;
    return badRequest([
      {
        path: 'destination',
        code: error.reason,
        message: `${error.message} (an email address for email, an E.164 number for sms, URL-encoded)`,
      },
    ]);
  }
}

/** The caller's IAM principal, when API Gateway's IAM authorizer vouched for one. */
function iamPrincipal(event: APIGatewayProxyEventV2): string | undefined {
  const context = event.requestContext as { authorizer?: { iam?: { userArn?: unknown } } } | undefined;
  const arn = context?.authorizer?.iam?.userArn;
  return typeof arn === 'string' && arn.length > 0 ? arn : undefined;
}

/** Reads `{ reason?, actor? }` and settles who acts. */
function operatorAct(
  request: HttpRequest,
  defaultReason: string,
): { ok: true; act: OperatorAct } | RouteReply {
  const body = readJsonBody(request.event, { optional: true });
  if (!body.ok) return { response: problemResponse(body.problem) };
  const parsed = OperatorBodySchema.safeParse(body.value ?? {});
  if (!parsed.success) return badRequest(toFieldErrors(parsed.error, body.value));
  const principal = iamPrincipal(request.event);
  if (principal !== undefined && parsed.data.actor !== undefined) {
    return badRequest([
      { path: 'actor', code: 'not_allowed', message: "is taken from the request's IAM credentials" },
    ]);
  }
  return {
    ok: true,
    act: { reason: parsed.data.reason ?? defaultReason, actor: principal ?? parsed.data.actor ?? 'operator' },
  };
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

function recordJson(record: SuppressionRecord) {
  return {
    action: record.action,
    reason: record.reason,
    source: record.source,
    actor: record.actor,
    at: iso(record.at),
    code: record.code ?? null,
  };
}

function toJson(history: SuppressionHistory) {
  const { state } = history;
  return {
    channel: state.channel,
    destination: { fingerprint: state.fingerprint, masked: state.masked },
    suppressed: isSuppressed(state),
    latest: recordJson(state.latest),
    history: history.records.map(recordJson),
    historyTruncated: history.truncated,
  };
}

const NOT_FOUND = notFound('nothing is recorded for this destination on this channel');
const NOT_SUPPRESSED = notFound('this destination is not suppressed on this channel');

/** GET → 200 state + history (also after a lift) / 404 when nothing was ever recorded. */
export async function getSuppressionRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  return orInvalidDestination(async () => {
    const history = await getSuppression(t.channel, t.destination, runtime.deps);
    return { response: history ? jsonResponse(200, toJson(history)) : problemResponse(NOT_FOUND) };
  });
}

/** PUT → 201 when this turned suppression on / 200 when it was on already (a record is appended either way). */
export async function putSuppressionRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  const input = operatorAct(request, 'operator');
  if (!('ok' in input)) return input;
  return orInvalidDestination(async () => {
    const { turnedOn } = await suppress(t.channel, t.destination, input.act, runtime.deps);
    const history = await getSuppression(t.channel, t.destination, runtime.deps);
    return {
      response: history ? jsonResponse(turnedOn ? 201 : 200, toJson(history)) : problemResponse(NOT_FOUND),
    };
  });
}

/** DELETE → 204 after appending a lift record / 404 when the destination is not suppressed. */
export async function deleteSuppressionRoute(
  request: HttpRequest,
  runtime: HttpRuntime,
): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  const input = operatorAct(request, LIFT_REASON);
  if (!('ok' in input)) return input;
  return orInvalidDestination(async () => {
    const lifted = await lift(t.channel, t.destination, input.act, runtime.deps);
    return { response: lifted ? emptyResponse(204) : problemResponse(NOT_SUPPRESSED) };
  });
}
