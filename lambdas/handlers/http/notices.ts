import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { Metric } from '../../contract/metrics.ts';
import type { Caller } from '../../domain/caller.ts';
import { isNoticeId } from '../../domain/identity.ts';
import { readJsonBody } from '../../edge/http-body.ts';
import { parseBatchRequest, parseNoticeRequest } from '../../edge/notice-request.ts';
import {
  type FieldError,
  invalidRequest,
  jsonResponse,
  notFound,
  type Problem,
  ProblemType,
  problem,
  problemResponse,
  unprocessable,
} from '../../edge/problem.ts';
import { toTimeline } from '../../edge/timeline.ts';
import type { IntakeDependencies } from '../../use-cases/dependencies.ts';
import { readNotice } from '../../use-cases/read-notice.ts';
import { withCoalescedEnqueue, withWatchesAhead } from '../../use-cases/submit-batch.ts';
import {
  type ChannelResult,
  requestedRows,
  submitNotice,
  type Violation,
} from '../../use-cases/submit-notice.ts';
import { logger, metrics } from '../../wiring/observability.ts';
import {
  callerOf,
  type HttpRequest,
  type HttpRuntime,
  loggedFailureAnswer,
  type RouteReply,
} from './route.ts';

/** Batch items are submitted this many at a time: bounded load on the ledger and the KMS. */
export const BATCH_CONCURRENCY = 10;

type Submitted = (
  | { readonly status: 200 | 202; readonly noticeId: string; readonly body: unknown }
  | {
      readonly status: number;
      readonly noticeId?: string | undefined;
      readonly problem: Problem;
      /** Another submitter's id: the answer carries no noticeId (./notices.ts `NOTICE_TAKEN`). */
      readonly taken?: true;
    }
) & {
  /** Channels this request reserved already warned deadline_at_risk (docs/architecture.md §11). */
  readonly warned?: number;
};

/** Created channels reserved with their deadline-risk warning. */
const warnedAtIntake = (channels: readonly ChannelResult[]) =>
  channels.filter((c) => c.outcome === 'created' && c.deadlineAtRisk === true).length;

/**
 * Intake's warnings counted in the same metric as the reconciler's re-check (DeadlineAtRisk), so
 * the sum over a period is every channel warned early, wherever it was caught. The function's
 * handler publishes what a request stored (lambdas/handlers/http-api.ts).
 */
function countWarnings(warned: number): void {
  if (warned > 0) metrics.addMetric(Metric.deadlineAtRisk, MetricUnit.Count, warned);
}

/**
 * Use-case messages name variables, channels and rules, never values; the one that quotes the
 * request (an unknown template id and version) is rewritten, since those came from the client.
 */
function safeViolation(violation: Violation): FieldError {
  if (violation.code === 'unknown_template') {
    return { ...violation, message: 'no template with this id and version in the catalog' };
  }
  return { path: violation.path, code: violation.code, message: violation.message };
}

/**
 * The 409's `errors`: every part that differs on some channel, by path, never with a value; the
 * caller can tell a replay of old data (`variables.firstName` changed) from a bug (`template.id`).
 */
function conflictErrors(channels: readonly ChannelResult[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const part of channels.flatMap((c) => c.differs ?? [])) {
    const known = byPath.get(part.path);
    if (known?.code === 'differs_from_recorded') continue;
    byPath.set(
      part.path,
      part.certainty === 'differs'
        ? { path: part.path, code: 'differs_from_recorded', message: 'differs from the recorded notice' }
        : {
            path: part.path,
            code: 'may_differ_from_recorded',
            message:
              'may differ from the recorded notice (the record cannot tell: recorded before per-variable digests, or its archived row unreadable)',
          },
    );
  }
  return [...byPath.values()];
}

/**
 * Another submitter's notice id: the same answer whatever is recorded under it (no noticeId, no
 * channels, no states), so a replay of someone else's event tells nothing of their notice.
 */
const NOTICE_TAKEN = problem(409, ProblemType.noticeTaken, {
  detail:
    'a notice with this eventType, eventId and recipient.id was submitted by another caller; nothing was ' +
    'recorded. Use event ids of your own (prefix them with your system’s name)',
});

/** One notice, as `POST /v1/notices` and each batch item answer it. */
async function submitOne(input: unknown, deps: IntakeDependencies, caller: Caller): Promise<Submitted> {
  const parsed = parseNoticeRequest(input);
  if (!parsed.ok) {
    return {
      status: parsed.status,
      problem: parsed.status === 400 ? invalidRequest(parsed.errors) : unprocessable(parsed.errors),
    };
  }
  const result = await submitNotice(parsed.request, deps, caller);
  switch (result.kind) {
    case 'taken':
      // The id goes to the request log only (the caller can derive it anyway).
      return { status: 409, noticeId: result.noticeId, problem: NOTICE_TAKEN, taken: true };
    case 'invalid':
      return { status: 422, problem: unprocessable(result.violations.map(safeViolation)) };
    case 'conflict':
      return {
        status: 409,
        noticeId: result.noticeId,
        warned: warnedAtIntake(result.channels),
        problem: problem(409, ProblemType.conflict, {
          detail:
            'this notice is recorded with different content (see errors); the recorded intent is unchanged',
          errors: conflictErrors(result.channels),
          extensions: {
            noticeId: result.noticeId,
            channels: result.channels.map(({ channel, state, outcome, differs }) => ({
              channel,
              state,
              outcome,
              ...(differs ? { differs: differs.map((part) => part.path) } : {}),
            })),
          },
        }),
      };
    case 'recorded':
      return {
        status: result.created ? 202 : 200,
        noticeId: result.noticeId,
        warned: warnedAtIntake(result.channels),
        body: {
          noticeId: result.noticeId,
          created: result.created,
          channels: result.channels.map(({ channel, state, estimatedSendAt, deadlineAtRisk }) => ({
            channel,
            state,
            ...(estimatedSendAt !== undefined
              ? {
                  estimatedSendAt: new Date(estimatedSendAt).toISOString(),
                  deadlineAtRisk: deadlineAtRisk === true,
                }
              : {}),
          })),
        },
      };
  }
}

/** `POST /v1/notices` → 202 created / 200 replay / 409 / 400 / 413 / 415 / 422. */
export async function submitNoticeRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const body = readJsonBody(request.event);
  if (!body.ok) return { response: problemResponse(body.problem) };
  const outcome = await submitOne(body.value, runtime.deps, callerOf(request));
  countWarnings(outcome.warned ?? 0);
  const response =
    'problem' in outcome ? problemResponse(outcome.problem) : jsonResponse(outcome.status, outcome.body);
  return {
    response,
    noticeId: outcome.noticeId,
    ...(outcome.warned ? { log: { deadlineAtRisk: outcome.warned } } : {}),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `POST /v1/notices/batch` → 200 with one result per item, each with the status the item would
 * get alone. Never all-or-nothing: an item that fails on infrastructure gets a 500 result of its
 * own, or 503 when DynamoDB refused it for capacity (the response then carries Retry-After), safe
 * to resubmit either way (intake is idempotent), and the others stand.
 */
export async function submitBatchRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const body = readJsonBody(request.event);
  if (!body.ok) return { response: problemResponse(body.problem) };
  const batch = parseBatchRequest(body.value);
  if (!batch.ok) return { response: problemResponse(invalidRequest(batch.errors)) };

  // The items' watches ahead, ten per request (use-cases/submit-batch.ts); each item's intake then
  // finds its own sent.
  const watchedDeps = await withWatchesAhead(
    runtime.deps,
    batch.notices.flatMap((item) => {
      const parsed = parseNoticeRequest(item);
      return parsed.ok ? requestedRows(parsed.request) : [];
    }),
  );
  const {
    result: results,
    enqueued,
    enqueueFailed,
  } = await withCoalescedEnqueue(watchedDeps, (deps) => submitItems(batch.notices, deps, callerOf(request)));
  if (enqueueFailed) logger.warn('batch enqueue failed; the reconciler re-enqueues the reserved rows');
  const statuses: Record<string, number> = {};
  let warned = 0;
  for (const { status, warned: itemWarned } of results) {
    statuses[status] = (statuses[status] ?? 0) + 1;
    warned += itemWarned;
  }
  countWarnings(warned);
  const answers = results.map(({ warned: _counted, failure: _failure, ...answer }) => answer);
  // Items refused for capacity: the batch says when to send them again, as a lone POST's 503 does.
  const retryAfter = results.find((r) => r.failure?.throttled)?.failure?.headers;
  return {
    response: jsonResponse(200, { results: answers }, retryAfter ?? {}),
    log: { items: results.length, statuses, enqueued, ...(warned > 0 ? { deadlineAtRisk: warned } : {}) },
  };
}

function submitItems(items: readonly unknown[], deps: IntakeDependencies, caller: Caller) {
  return mapConcurrently(items, BATCH_CONCURRENCY, async (item, index) => {
    try {
      const outcome = await submitOne(item, deps, caller);
      return {
        index,
        status: outcome.status,
        warned: outcome.warned ?? 0,
        ...(outcome.noticeId && !('taken' in outcome) ? { noticeId: outcome.noticeId } : {}),
        ...('problem' in outcome ? { error: outcome.problem } : {}),
      };
    } catch (error) {
      // A throttled item (503, DynamoDB over capacity) is the caller's to send again; another, ours (500).
      const failure = loggedFailureAnswer(error, 'batch item', { index });
      return { index, status: failure.problem.status, warned: 0, error: failure.problem, failure };
    }
  });
}

/**
 * `GET /v1/notices/{noticeId}` → 200 timeline / 404 / 400 for an id that cannot be one. A
 * submitter sees the channels its principal submitted; a notice with none of them is the same
 * 404 as one that does not exist. Channels whose rows left the table are read from the archive
 * (`source`, docs/archive.md).
 */
export async function getNoticeRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const noticeId = request.params.noticeId ?? '';
  if (!isNoticeId(noticeId)) {
    const error = {
      path: 'noticeId',
      code: 'invalid_format',
      message: 'must be ntc_ followed by 26 characters a-z or 2-7',
    };
    return { response: problemResponse(invalidRequest([error])) };
  }
  const channels = await readNotice(noticeId, callerOf(request), runtime.deps);
  const [first, ...rest] = channels ?? [];
  if (!first) return { response: problemResponse(notFound('no notice with this id')), noticeId };
  const context = { now: runtime.deps.clock.now(), policy: runtime.deps.nextStepPolicy };
  const timeline = toTimeline([first, ...rest], context);
  return { response: jsonResponse(200, timeline), noticeId, log: { source: timeline.source } };
}
