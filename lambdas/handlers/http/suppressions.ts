import { type Channel, isChannel } from '../../domain/channel.ts';
import { InvalidDestinationError } from '../../domain/errors.ts';
import { readJsonBody } from '../../edge/http-body.ts';
import { iamPrincipal, operatorActor, parseSuppressionRequest } from '../../edge/operator-requests.ts';
import {
  emptyResponse,
  type FieldError,
  invalidRequest,
  jsonResponse,
  notFound,
  problemResponse,
} from '../../edge/problem.ts';
import { toSuppressionView } from '../../edge/suppression-view.ts';
import {
  getSuppression,
  LIFT_REASON,
  lift,
  type OperatorAct,
  suppress,
} from '../../use-cases/manage-suppressions.ts';
import type { HttpRequest, HttpRuntime, RouteReply } from './route.ts';

/**
 * `GET | PUT | DELETE /v1/suppressions/{channel}/{destination}` (docs/api.md "Suppressions").
 *
 * The destination arrives percent-encoded in the path (`%2B15551234567`); the router decodes it
 * and the use case checks and fingerprints it by the intake rules. It is never logged or
 * returned: responses carry the fingerprint and the masked form.
 *
 * The list is a history: PUT appends an operator `suppress` record, DELETE a `lift` record,
 * providers append their bounces and complaints; GET shows the effective state (the latest
 * record) and the records, oldest first. Bodies (optional, JSON): `{ reason?, actor? }`, read by
 * `parseSuppressionRequest` (a reason code; free text refused) and `operatorActor` (the IAM
 * principal, else the body's actor, else `local`) in `edge/operator-requests.ts`.
 *
 * An unknown channel is a 400 (naming `channel`), not a 404: the path is well-formed for this
 * resource, and the caller learns which part to fix.
 */

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

/** Reads `{ reason?, actor? }` and settles who acts. */
function operatorAct(
  request: HttpRequest,
  defaultReason: string,
): { ok: true; act: OperatorAct } | RouteReply {
  const body = readJsonBody(request.event, { optional: true });
  if (!body.ok) return { response: problemResponse(body.problem) };
  const parsed = parseSuppressionRequest(body.value);
  if (!parsed.ok) return badRequest(parsed.errors);
  const actor = operatorActor(iamPrincipal(request.event), parsed.value.actor);
  if (!actor.ok) return badRequest(actor.errors);
  return { ok: true, act: { reason: parsed.value.reason ?? defaultReason, actor: actor.value } };
}

const NOT_FOUND = notFound('nothing is recorded for this destination on this channel');
const NOT_SUPPRESSED = notFound('this destination is not suppressed on this channel');

/** GET → 200 state + history (also after a lift) / 404 when nothing was ever recorded. */
export async function getSuppressionRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const t = target(request);
  if (!('ok' in t)) return t;
  return orInvalidDestination(async () => {
    const history = await getSuppression(t.channel, t.destination, runtime.deps);
    return { response: history ? jsonResponse(200, toSuppressionView(history)) : problemResponse(NOT_FOUND) };
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
      response: history
        ? jsonResponse(turnedOn ? 201 : 200, toSuppressionView(history))
        : problemResponse(NOT_FOUND),
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
