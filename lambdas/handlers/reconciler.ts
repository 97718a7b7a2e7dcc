import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { UNRESOLVED_STATES } from '../domain/state-machine.ts';
import { reconcile } from '../use-cases/reconcile.ts';
import { getRuntime } from '../wiring.ts';
import { logger, metrics } from './observability.ts';

/**
 * Scheduled every RECONCILE_INTERVAL_MS (EventBridge Scheduler in AWS, a timer locally).
 * Publishes the gauges on every run, quiet ones included, so a missing datapoint means the
 * reconciler itself is not running (the alarm treats missing data as breaching).
 */
export async function handler(): Promise<unknown> {
  const { reconciler } = await getRuntime();
  const report = await reconcile(reconciler);
  metrics.addMetric('OldestUnresolvedAgeSeconds', MetricUnit.Seconds, report.oldestUnresolvedAgeSeconds);
  for (const state of UNRESOLVED_STATES) {
    metrics.addMetric(`Open_${state}`, MetricUnit.Count, report.openByState[state] ?? 0);
  }
  metrics.addMetric('Escalations', MetricUnit.Count, report.escalations);
  metrics.addMetric('ReconcilerDueRows', MetricUnit.Count, report.due);
  metrics.publishStoredMetrics();
  if (report.due > 0 || report.escalations > 0) logger.info('reconciler run', { ...report });
  return report;
}
