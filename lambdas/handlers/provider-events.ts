import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, EventBridgeEvent } from 'aws-lambda';
import { Metric } from '../contract/metrics.ts';
import { header, readTextBody } from '../edge/http-body.ts';
import {
  emptyResponse,
  invalidRequest,
  notFound,
  ProblemType,
  problem,
  problemResponse,
} from '../edge/problem.ts';
import type { DeliveryReport, InboundVerdict } from '../ports/provider.port.ts';
import { applyDeliveryReport, type ReportResult } from '../use-cases/apply-delivery-report.ts';
import type { ReportDependencies } from '../use-cases/dependencies.ts';
import { RecentEvents } from '../use-cases/recent-events.ts';
import { logger, metrics } from '../wiring/observability.ts';
import { getProviderEventsRuntime, type ProviderEventsRuntime } from '../wiring/provider-events.ts';
import { type HttpRequest, type RouteReply, withRuntime } from './http/route.ts';
import { createRouter } from './http/router.ts';

/**
 * Inbound provider events, one function for every provider and both ways they arrive:
 *  - webhooks at `POST /v1/provider-events/{provider}` (the function's own URL, auth NONE, or an
 *    open API Gateway route where Lambda has no function URLs: lib/providers/webhook-ingress.ts;
 *    any other path or method → 404/405 problem+json): the provider's module verifies the request; forged or unsigned → 401/403 and nothing changes; verified but
 *    for no intent of ours → 200 (counted); unreadable → 400; never a 5xx for what was sent;
 *  - EventBridge events (a provider publishing to the default bus), routed by their `source`.
 * Duplicates and any order are fine: applying a report is idempotent. An error reaching the
 * ledger is thrown, so the provider (or EventBridge) retries it.
 */

/** Event ids applied by this instance (lambdas/use-cases/recent-events.ts). */
const recent = new RecentEvents();

/**
 * Applies the reports in order; a report whose event id this instance already applied (a
 * provider's redelivery, or the same event twice in one delivery) is skipped. An id is
 * remembered only once its report is applied, so a ledger error leaves the provider's retry
 * welcome.
 */
async function applyAll(
  reports: readonly DeliveryReport[],
  deps: ReportDependencies,
): Promise<ReportResult[]> {
  const results: ReportResult[] = [];
  for (const report of reports) {
    const key = report.eventId === undefined ? undefined : `${report.provider}:${report.eventId}`;
    if (key !== undefined && recent.has(key)) {
      results.push({ kind: 'ignored', why: 'duplicate_event' });
      continue;
    }
    results.push(await applyDeliveryReport(report, deps));
    if (key !== undefined) recent.remember(key);
  }
  return results;
}

function count(verdict: Extract<InboundVerdict, { kind: 'accepted' }>): void {
  if (verdict.unmatched > 0)
    metrics.addMetric(Metric.unmatchedProviderEvents, MetricUnit.Count, verdict.unmatched);
}

function summary(results: readonly ReportResult[]): string[] {
  return results.map((r) => (r.kind === 'applied' ? `applied:${r.state}` : `ignored:${r.why}`));
}

/**
 * The URL the provider called, which its signature may cover (an SMS provider's does): PUBLIC_BASE_URL's
 * origin when the deployment names one (the API's endpoint, a domain of the operator's, the local
 * gateway), else the host AWS reports the request reached (`requestContext.domainName`): behind
 * the function's own URL, that URL's host, the one the senders gave the provider. A request
 * reaches the function only at a host routed to it, so a caller cannot choose another.
 */
function calledUrl(event: HttpRequest['event'], publicBaseUrl: string | undefined): string {
  const origin = publicBaseUrl ?? `https://${event.requestContext.domainName}`;
  const query = event.rawQueryString ?? '';
  return `${origin}${event.rawPath}${query ? `?${query}` : ''}`;
}

async function webhookRoute(request: HttpRequest, runtime: ProviderEventsRuntime): Promise<RouteReply> {
  const provider = request.params.provider ?? '';
  const webhook = runtime.webhooks.get(provider);
  if (!webhook) return { response: problemResponse(notFound('no inbound events for this provider here')) };
  const { event } = request;
  const body = readTextBody(event, webhook.contentType);
  if (!body.ok) return { response: problemResponse(body.problem) };
  const verdict = webhook.handle({
    url: calledUrl(event, runtime.publicBaseUrl),
    header: (name) => header(event, name),
    body: body.value,
    contentType: header(event, 'content-type'),
  });
  switch (verdict.kind) {
    case 'refused':
      metrics.addMetric(Metric.refusedProviderEvents, MetricUnit.Count, 1);
      return {
        response: problemResponse(
          problem(verdict.status, ProblemType.invalidSignature, { detail: verdict.detail }),
        ),
        log: { provider, signature: 'invalid' },
      };
    case 'malformed':
      return { response: problemResponse(invalidRequest(verdict.errors)), log: { provider } };
    case 'accepted': {
      count(verdict);
      const results = await applyAll(verdict.reports, runtime.deps);
      return {
        // A non-2xx would only make the provider retry something that cannot succeed.
        response: emptyResponse(200),
        noticeId: verdict.reports[0]?.ref.noticeId,
        // Short: a provider may report twice per SMS (sent, then delivered). Counts only when unusual.
        log: {
          provider,
          ...(verdict.reports.length !== 1 ? { reports: verdict.reports.length } : {}),
          ...(verdict.unmatched > 0 ? { unmatched: verdict.unmatched } : {}),
          ...(verdict.ignored.length > 0 ? { ignored: verdict.ignored } : {}),
          results: summary(results),
        },
      };
    }
  }
}

async function onEvent(
  event: EventBridgeEvent<string, unknown>,
  runtime: ProviderEventsRuntime,
): Promise<{ result: string }> {
  const reader = runtime.eventReaders.get(event.source);
  const verdict = reader?.handle({
    source: event.source,
    detailType: event['detail-type'],
    time: event.time,
    detail: event.detail,
  });
  if (!reader || !verdict || verdict.kind !== 'accepted') {
    logger.warn('unrecognised provider event dropped', {
      source: event.source,
      detailType: event['detail-type'],
      id: event.id,
    });
    metrics.addMetric(Metric.unparsedProviderEvents, MetricUnit.Count, 1);
    return { result: 'unparsed' };
  }
  count(verdict);
  const results = await applyAll(verdict.reports, runtime.deps);
  // One line per event, short like a webhook's: codes and counts only when there are some.
  const codes = verdict.reports.map((r) => r.code).filter(Boolean);
  logger.info('provider event', {
    provider: reader.provider,
    detailType: event['detail-type'],
    ...(verdict.reports[0] ? verdict.reports[0].ref : {}),
    ...(codes.length > 0 ? { codes } : {}),
    ...(verdict.unmatched > 0 ? { unmatched: verdict.unmatched } : {}),
    results: summary(results),
  });
  if (results.length === 0)
    return { result: verdict.unmatched > 0 ? 'unmatched' : (verdict.ignored[0] ?? 'ignored') };
  return { result: summary(results).join(',') };
}

function isApiEvent(event: unknown): event is APIGatewayProxyEventV2 {
  return typeof event === 'object' && event !== null && 'requestContext' in event && 'rawPath' in event;
}

export type ProviderEventsHandler = {
  (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2>;
  (event: EventBridgeEvent<string, unknown>): Promise<{ result: string }>;
};

/** The function: webhooks through the router, EventBridge events by their source. */
export function createProviderEventsHandler(
  runtime: () => Promise<ProviderEventsRuntime>,
): ProviderEventsHandler {
  const api = createRouter(
    'providerEvents',
    { 'POST /v1/provider-events/{provider}': withRuntime(webhookRoute) },
    runtime,
  );
  return (async (event: APIGatewayProxyEventV2 | EventBridgeEvent<string, unknown>) => {
    try {
      return isApiEvent(event) ? await api(event) : await onEvent(event, await runtime());
    } finally {
      // Most events add no metric; publishing an empty set only makes Powertools complain.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  }) as ProviderEventsHandler;
}

export const handler = createProviderEventsHandler(getProviderEventsRuntime);
