import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { Metric, OPEN_STATES, openMetric } from '../contract/metrics.ts';
import { reconcile } from '../use-cases/reconcile.ts';
import { logger, metrics } from '../wiring/observability.ts';
import { getReconcilerRuntime } from '../wiring/reconciler.ts';

/**
 * Scheduled every RECONCILE_INTERVAL_MS (EventBridge Scheduler in AWS, a timer locally).
 * Publishes the gauges on every run, quiet ones included, so a missing datapoint means the
 * reconciler itself is not running (the alarm treats missing data as breaching).
 */
export async function handler(): Promise<unknown> {
  const { deps, skipped } = await getReconcilerRuntime();
  const report = await reconcile(deps);
  metrics.addMetric(Metric.oldestUnresolvedAgeSeconds, MetricUnit.Seconds, report.oldestUnresolvedAgeSeconds);
  metrics.addMetric(
    Metric.oldestAwaitingReportAgeSeconds,
    MetricUnit.Seconds,
    report.oldestAwaitingReportAgeSeconds,
  );
  metrics.addMetric(Metric.awaitingReport, MetricUnit.Count, report.awaitingReport);
  metrics.addMetric(Metric.reconciliationLagSeconds, MetricUnit.Seconds, report.reconciliationLagSeconds);
  metrics.addMetric(Metric.statusPulls, MetricUnit.Count, report.statusPulls);
  for (const state of OPEN_STATES) {
    metrics.addMetric(openMetric(state), MetricUnit.Count, report.openByState[state] ?? 0);
  }
  metrics.addMetric(Metric.escalations, MetricUnit.Count, report.escalations);
  metrics.addMetric(Metric.escalationPublishFailures, MetricUnit.Count, report.escalationFailures);
  metrics.addMetric(Metric.escalationsPending, MetricUnit.Count, report.escalationsPending);
  metrics.addMetric(Metric.deadlineAtRisk, MetricUnit.Count, report.deadlineAtRisk);
  metrics.addMetric(Metric.reconcilerDueRows, MetricUnit.Count, report.due);
  metrics.addMetric(Metric.reconcilerRowErrors, MetricUnit.Count, report.rowErrors);
  metrics.addMetric(Metric.reconcilerReenqueued, MetricUnit.Count, report.reenqueued);
  // Lookups and status facets left out: their provider's secret still holds placeholders.
  metrics.addMetric(Metric.providersNotConfigured, MetricUnit.Count, skipped.length);
  metrics.publishStoredMetrics();
  if (report.due > 0 || report.escalations > 0 || report.rowErrors > 0)
    logger.info('reconciler run', { ...report });
  return report;
}
