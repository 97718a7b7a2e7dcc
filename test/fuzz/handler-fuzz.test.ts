/**
 * The fuzz layer, in-process: generated requests (test/fuzz/requests.ts) against the HTTP API
 * function with in-memory adapters, one shared ledger for the whole run so that replays and
 * conflicts happen. Properties per request: no 5xx; every error problem+json with field paths;
 * no canary (destination, variable, free text, header, path or query value) in the answer or in
 * any log line; a refused notice or batch leaves no row, a refused suppression change no record,
 * a refused operator move (list, cancel, resolution) changes no row; rows that were written hold
 * only well-formed masked destinations.
 *
 * FUZZ_RUNS (default 10 000) and FUZZ_SEED (default: random, printed) replay a run:
 *   FUZZ_SEED=<seed> npx vitest run test/fuzz/handler-fuzz.test.ts
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../lambdas/wiring/observability.ts';
import { isTextMediaType } from '../../local/http-gateway.ts';
import { apiEvent } from '../helpers/api-events.ts';
import { T0 } from '../helpers/factories.ts';
import { harness } from '../helpers/http-harness.ts';
import {
  answerViolation,
  batchStatuses,
  describeRequest,
  echoedCanary,
  type FuzzRequest,
  requestArb,
} from './requests.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** The event API Gateway would deliver: a string for text media types (or base64 when asked), base64 otherwise. */
function toEvent(request: FuzzRequest): APIGatewayProxyEventV2 {
  const [path = '/', query = ''] = request.target.split(/\?(.*)/s);
  const asText = isTextMediaType(request.headers['content-type']) && !request.forceBase64;
  const body = request.body && request.body.length > 0 ? request.body : undefined;
  return apiEvent({
    method: request.method,
    path,
    query,
    headers: { ...request.headers, 'content-type': request.headers['content-type'] },
    ...(body
      ? { body: asText ? lossy.decode(body) : body.toString('base64'), isBase64Encoded: !asText }
      : {}),
  });
}

let logs: string[] = [];

beforeAll(() => {
  for (const level of ['info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(logger, level).mockImplementation(((...args: unknown[]) => {
      logs.push(JSON.stringify(args));
    }) as never);
  }
});

afterAll(() => {
  vi.restoreAllMocks();
});

/** The operator route a request aims at, for the per-route counts. */
const operatorRoute = (request: FuzzRequest) =>
  `${request.method} ${request.target
    .split('?')[0]
    ?.replace(/^\/v1\/notices\/[^/]+/, '/v1/notices/{id}')
    .replace(/channels\/[^/]+/, 'channels/{c}')}`;

const suppressionRecords = (h: ReturnType<typeof harness>) =>
  [...h.store.suppressions.values()].reduce((n, entry) => n + entry.records.length, 0);

describe('fuzz: the HTTP API in-process', () => {
  it(`${RUNS} generated requests: no 5xx, problem+json with paths, no echo, no row left by a refusal`, async () => {
    console.log(`fuzz (in-process): seed ${SEED}, ${RUNS} runs — replay with FUZZ_SEED=${SEED}`);
    const h = harness();
    const started = performance.now();
    const statuses: Record<number, number> = {};
    const codes: Record<string, number> = {};
    const operatorStatuses: Record<string, Record<number, number>> = {};
    await fc.assert(
      fc.asyncProperty(requestArb(T0), async (request) => {
        logs = [];
        const rowsBefore = h.store.intents.size;
        const recordsBefore = suppressionRecords(h);
        // Intents are replaced, never mutated, on a transition: identity tells a changed row.
        const intentsBefore = request.kind === 'operator' ? new Map(h.store.intents) : undefined;
        const raw = await h.call(toEvent(request));
        const answer = {
          status: raw.status,
          headers: Object.fromEntries(Object.entries(raw.raw.headers ?? {}).map(([k, v]) => [k, String(v)])),
          body: raw.raw.body ?? '',
        };
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (request.kind === 'operator') {
          const route = operatorRoute(request);
          operatorStatuses[route] ??= {};
          const counts = operatorStatuses[route];
          counts[answer.status] = (counts[answer.status] ?? 0) + 1;
        }
        if (answer.status >= 400 && answer.body) {
          for (const e of (JSON.parse(answer.body) as { errors?: { code: string }[] }).errors ?? []) {
            codes[e.code] = (codes[e.code] ?? 0) + 1;
          }
        }
        const violation = answerViolation(request, answer);
        if (violation)
          throw new Error(`${violation}\n${describeRequest(request)}\n→ ${answer.status} ${answer.body}`);
        const logged = echoedCanary(request.canaries, logs.join('\n'));
        if (logged) throw new Error(`logged ${logged}\n${describeRequest(request)}`);

        const grown = h.store.intents.size - rowsBefore;
        if (request.kind === 'notice' && ![200, 202, 409].includes(answer.status) && grown !== 0) {
          throw new Error(
            `refused with ${answer.status} but left ${grown} rows\n${describeRequest(request)}`,
          );
        }
        if (request.kind === 'batch') {
          const writing = batchStatuses(answer).filter((s) => s === 202 || s === 409).length;
          if (grown > 2 * writing)
            throw new Error(`batch left ${grown} rows for ${writing} items\n${describeRequest(request)}`);
        }
        if (request.kind !== 'notice' && request.kind !== 'batch' && grown !== 0) {
          throw new Error(`${request.kind} request wrote ${grown} rows`);
        }
        if (intentsBefore && answer.status >= 400) {
          for (const [k, intent] of h.store.intents) {
            if (intentsBefore.get(k) !== intent) {
              throw new Error(
                `operator request refused with ${answer.status} but changed ${k}\n${describeRequest(request)}`,
              );
            }
          }
        }
        const appended = suppressionRecords(h) - recordsBefore;
        const changed =
          (request.method === 'PUT' && [200, 201].includes(answer.status)) || answer.status === 204;
        if (request.kind === 'suppression' && !changed && appended !== 0) {
          throw new Error(
            `suppression refused with ${answer.status} but appended ${appended}\n${describeRequest(request)}`,
          );
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `fuzz (in-process): ${RUNS} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(statuses)}; ` +
        `${h.store.intents.size} rows`,
    );
    console.log(`fuzz (in-process): error codes ${JSON.stringify(codes)}`);
    console.log(`fuzz (in-process): operator routes ${JSON.stringify(operatorStatuses)}`);

    // What the ledger kept from all of that: only destinations providers would take, masked.
    for (const row of h.store.intents.values()) {
      const masked = row.destination.masked;
      if (row.channel === 'email') expect(masked).toMatch(/^[!-~]+@[a-z0-9.-]+$/);
      else expect(masked).toMatch(/^\+\d\**\d{0,4}$/);
    }
    // Enough of the run reached the deep rules, and some of it was accepted.
    expect((statuses[202] ?? 0) + (statuses[200] ?? 0)).toBeGreaterThan(RUNS / 50);
    expect(statuses[409] ?? 0).toBeGreaterThan(0);
    expect(statuses[422] ?? 0).toBeGreaterThan(0);
    expect(statuses[400] ?? 0).toBeGreaterThan(RUNS / 10);
    // The operator routes were reached past their validation: pages listed, notices cancelled.
    expect(operatorStatuses['GET /v1/notices']?.[200] ?? 0).toBeGreaterThan(0);
    expect(operatorStatuses['POST /v1/notices/{id}/cancel']?.[200] ?? 0).toBeGreaterThan(0);
  }, 240_000);
});
