// The committed document, generated from the schemas by `npm run openapi` (./openapi.ts) and held
// equal to them by test/edge/openapi.test.ts. Serving it rather than generating it keeps the
// providers' descriptors and the JSON Schema generator out of this function's bundle.
import document from '../../../docs/openapi.json' with { type: 'json' };
import { readJsonBody } from '../../edge/http-body.ts';
import { type ListedPage, toListRequest, toNoticeList } from '../../edge/notice-list.ts';
import {
  iamPrincipal,
  operatorActor,
  type Parsed,
  parseCancelRequest,
  parseListNoticesQuery,
  parseNoticePath,
  parseResolutionRequest,
} from '../../edge/operator-requests.ts';
import {
  type FieldError,
  invalidRequest,
  jsonResponse,
  notFound,
  ProblemType,
  problem,
  problemResponse,
} from '../../edge/problem.ts';
import { toTimelineChannel } from '../../edge/timeline.ts';
import { listRecentFailures } from '../../use-cases/list-failed.ts';
import { listUnresolved, readListed } from '../../use-cases/list-unresolved.ts';
import { cancelNotice, resolveChannel } from '../../use-cases/operator-actions.ts';
import { callerOf, type HttpRequest, type HttpRuntime, type RouteReply } from './route.ts';

/**
 * The operator routes (docs/operators.md): list what is stuck, settle an `unknown` on a person's
 * word, call a notice off, and the API's own description. Every act is recorded with the actor
 * of `operatorActor`: the caller's IAM principal ARN behind API Gateway, `local` (or the body's
 * `actor`) on the local stack.
 */

const badRequest = (errors: readonly FieldError[]): RouteReply => ({
  response: problemResponse(invalidRequest(errors)),
});

function unwrap<T>(parsed: Parsed<T>): { value: T } | RouteReply {
  return parsed.ok ? { value: parsed.value } : badRequest(parsed.errors);
}

/** `GET /v1/notices?state&channel&olderThan&limit&cursor` → one page, oldest first. */
export async function listNoticesRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const filter = unwrap(parseListNoticesQuery(request.event.queryStringParameters));
  if (!('value' in filter)) return filter;
  const now = runtime.deps.clock.now();
  const listRequest = unwrap(toListRequest(filter.value, now));
  if (!('value' in listRequest)) return listRequest;
  const query = listRequest.value;
  const listed: ListedPage =
    query.kind === 'failed'
      ? { kind: 'failed', page: await listRecentFailures(query, runtime.deps) }
      : { kind: 'unresolved', page: await listUnresolved(query, runtime.deps) };
  // Each listed row's last reason and next step, read after the list itself.
  const rows = await readListed(listed.page.items, runtime.deps);
  const context = { now, policy: runtime.deps.nextStepPolicy };
  return {
    response: jsonResponse(200, toNoticeList(listed, rows, filter.value, query, context)),
    log: { items: listed.page.items.length, more: listed.page.next !== undefined },
  };
}

/** The body of an operator's POST, and who sends it. */
function operatorBody<T extends { readonly actor?: string | undefined }>(
  request: HttpRequest,
  parse: (input: unknown) => Parsed<T>,
): { value: T; actor: string } | RouteReply {
  const body = readJsonBody(request.event);
  if (!body.ok) return { response: problemResponse(body.problem) };
  const parsed = unwrap(parse(body.value));
  if (!('value' in parsed)) return parsed;
  const actor = unwrap(operatorActor(iamPrincipal(request.event), parsed.value.actor));
  if (!('value' in actor)) return actor;
  return { value: parsed.value, actor: actor.value };
}

/**
 * `POST /v1/notices/{noticeId}/channels/{channel}/resolution` → 200 the channel as the timeline
 * shows it / 409 when the channel is not `unknown`, or resolved and archived (unchanged) / 404 / 400.
 */
export async function resolveChannelRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const path = unwrap(parseNoticePath(request.params, true));
  if (!('value' in path)) return path;
  const { noticeId, channel } = path.value;
  if (!channel) throw new Error('channel parameter missing');
  const input = operatorBody(request, parseResolutionRequest);
  if (!('value' in input)) return { ...input, noticeId };
  const { outcome, reason, evidence } = input.value;
  const result = await resolveChannel(
    noticeId,
    channel,
    { outcome, reason, evidence, actor: input.actor },
    runtime.deps,
  );
  switch (result.kind) {
    case 'resolved':
      return {
        response: jsonResponse(
          200,
          toTimelineChannel(result.row, {
            now: runtime.deps.clock.now(),
            policy: runtime.deps.nextStepPolicy,
          }),
        ),
        noticeId,
        log: { channel, outcome, state: result.row.state, enqueued: result.enqueued },
      };
    case 'not_found':
      return { response: problemResponse(notFound('no such channel of this notice')), noticeId };
    case 'not_unknown':
      return {
        response: problemResponse(
          problem(409, ProblemType.stateConflict, {
            detail: `only an unknown channel is resolved by an operator; this one is ${result.state} (unchanged)`,
            errors: [{ path: 'channel', code: 'not_unknown', message: `is ${result.state}, not unknown` }],
            extensions: { noticeId, channel, state: result.state },
          }),
        ),
        noticeId,
      };
    case 'archived':
      return {
        response: problemResponse(
          problem(409, ProblemType.stateConflict, {
            detail: `this channel resolved as ${result.state} and left the table after the hot window: it is final, kept in the write-once archive (unchanged)`,
            errors: [
              {
                path: 'channel',
                code: 'archived',
                message: `resolved as ${result.state} and archived: final`,
              },
            ],
            extensions: { noticeId, channel, state: result.state, source: 'archive' },
          }),
        ),
        noticeId,
      };
    case 'contended':
      return {
        response: problemResponse(
          problem(409, ProblemType.stateConflict, {
            detail: 'the channel kept changing while this request was applied; read it again and retry',
            errors: [
              { path: 'channel', code: 'contended', message: 'kept changing; read it again and retry' },
            ],
            extensions: { noticeId, channel },
          }),
        ),
        noticeId,
      };
  }
}

/**
 * `POST /v1/notices/{noticeId}/cancel` → 200 per channel: cancelled or why not / 409 when every
 * channel resolved and left the table (archived: final) / 404 / 400. A submitter cancels the
 * channels its principal submitted; another's notice is the 404 of an unknown one.
 */
export async function cancelNoticeRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const path = unwrap(parseNoticePath(request.params, false));
  if (!('value' in path)) return path;
  const { noticeId } = path.value;
  const input = operatorBody(request, parseCancelRequest);
  if (!('value' in input)) return { ...input, noticeId };
  const result = await cancelNotice(
    noticeId,
    { reason: input.value.reason, actor: input.actor },
    callerOf(request),
    runtime.deps,
  );
  if (result.kind === 'not_found') {
    return { response: problemResponse(notFound('no notice with this id')), noticeId };
  }
  const decisions: Record<string, string> = {};
  for (const c of result.channels) decisions[c.channel] = c.decision;
  if (result.kind === 'archived') {
    return {
      response: problemResponse(
        problem(409, ProblemType.stateConflict, {
          detail:
            'every channel of this notice resolved and left the table after the hot window: it is final, kept in the write-once archive (unchanged)',
          errors: [{ path: 'noticeId', code: 'archived', message: 'resolved and archived: final' }],
          extensions: {
            noticeId,
            source: 'archive',
            channels: result.channels.map(({ channel, state, cancelled }) => ({ channel, state, cancelled })),
          },
        }),
      ),
      noticeId,
      log: { decisions },
    };
  }
  return {
    response: jsonResponse(200, {
      noticeId,
      channels: result.channels.map(({ channel, state, cancelled }) => ({ channel, state, cancelled })),
    }),
    noticeId,
    log: { decisions },
  };
}

let served: string | undefined;

/** `GET /v1/openapi.json`: docs/openapi.json, as committed (two-space indent, trailing newline). */
export async function openApiRoute(): Promise<RouteReply> {
  served ??= `${JSON.stringify(document, null, 2)}\n`;
  return {
    response: {
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
      body: served,
    },
  };
}
