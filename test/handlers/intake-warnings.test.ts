import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Metric } from '../../lambdas/contract/metrics.ts';
import type { Backlog } from '../../lambdas/domain/deadline-risk.ts';
import { createHttpHandler } from '../../lambdas/handlers/http-api.ts';
import type { BacklogProbe } from '../../lambdas/ports/backlog.port.ts';
import { logger, metrics } from '../../lambdas/wiring/observability.ts';
import { apiEvent, responseJson } from '../helpers/api-events.ts';
import { harness, TEST_CALLERS } from '../helpers/http-harness.ts';

/** 3 000 references ahead of standard and bulk at 25/s (120 s), none ahead of critical. */
const busyChannel: BacklogProbe = {
  read: async (): Promise<Backlog> => ({
    ratePerSecond: 25,
    ahead: { critical: 0, standard: 3_000, bulk: 3_000 },
  }),
  enqueued: () => undefined,
};

function notice(eventId: string, deadlineInMs: number, extra: Record<string, unknown> = {}) {
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', phone: '+15551234567' },
    channels: ['sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada', portalUrl: 'https://portal.example.org/r/1' },
    ...extra,
    deadline: new Date(Date.now() + deadlineInMs).toISOString(),
  };
}

let published: EmfOutput[];
let requestLines: Record<string, unknown>[];

beforeEach(() => {
  published = [];
  requestLines = [];
  metrics.clearMetrics();
  // What the handler publishes, read as Powertools would write it (EMF), instead of on stdout.
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
    published.push(metrics.serializeMetrics());
    metrics.clearMetrics();
    return metrics;
  });
  vi.spyOn(logger, 'info').mockImplementation(((message: string, line: Record<string, unknown>) => {
    if (message === 'http request') requestLines.push(line);
  }) as never);
});

afterEach(() => {
  vi.restoreAllMocks();
  metrics.clearMetrics();
});

/** DeadlineAtRisk summed over what was published (EMF puts each metric's value at the top level). */
const warningsPublished = () =>
  published.reduce(
    (sum, emf) => sum + Number((emf as unknown as Record<string, unknown>)[Metric.deadlineAtRisk] ?? 0),
    0,
  );

function api() {
  const h = harness();
  h.clock.now = Date.now();
  const handler = createHttpHandler(
    async () => ({ deps: { ...h.deps, backlog: busyChannel } }),
    () => TEST_CALLERS,
  );
  return async (path: string, body: unknown) => {
    const raw = await handler(apiEvent({ method: 'POST', path, body }));
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
    return { status: raw.statusCode ?? 0, json: responseJson(raw) as any };
  };
}

describe('intake counts its deadline-risk warnings (DeadlineAtRisk, docs/architecture.md §11)', () => {
  it('a notice reserved at risk publishes one warning; its replay and a notice in time publish none', async () => {
    const post = api();
    const atRisk = await post('/v1/notices', notice('evt_late', 10_000));
    expect(atRisk.status).toBe(202);
    expect(atRisk.json.channels[0]).toMatchObject({ deadlineAtRisk: true });
    expect(warningsPublished()).toBe(1);
    expect(requestLines.at(-1)).toMatchObject({ deadlineAtRisk: 1 });

    const replay = await post('/v1/notices', notice('evt_late', 10_000));
    expect(replay.status).toBe(200);
    const inTime = await post('/v1/notices', notice('evt_in_time', 3_600_000));
    expect(inTime.json.channels[0]).toMatchObject({ deadlineAtRisk: false });
    const critical = await post('/v1/notices', notice('evt_critical', 10_000, { priority: 'critical' }));
    expect(critical.json.channels[0]).toMatchObject({ deadlineAtRisk: false });
    expect(warningsPublished()).toBe(1);
    expect(requestLines.at(-1)).not.toHaveProperty('deadlineAtRisk');
  });

  it('a batch publishes the sum of its items warned, once for the request', async () => {
    const post = api();
    const answer = await post('/v1/notices/batch', {
      notices: [notice('evt_b1', 10_000), notice('evt_b2', 3_600_000), notice('evt_b3', 5_000)],
    });
    expect(answer.status).toBe(200);
    expect(answer.json.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 202]);
    expect(answer.json.results[0]).not.toHaveProperty('warned');
    expect(published).toHaveLength(1);
    expect(warningsPublished()).toBe(2);
    expect(requestLines.at(-1)).toMatchObject({ deadlineAtRisk: 2 });
  });
});
