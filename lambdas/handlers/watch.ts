import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { Metric } from '../contract/metrics.ts';
import { PoisonMessageError, parseWatchMessage } from '../edge/intent-message.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import { type WatchDependencies, watchRows } from '../use-cases/watch-rows.ts';
import { logger, metrics } from '../wiring/observability.ts';
import { getWatchRuntime } from '../wiring/watch.ts';

/**
 * The watch queue (docs/table-design.md "Watched rows"): each fired watch looks at its row once
 * (`watchRows`); a row still owed something enters the open index. A record fails when its row
 * could not be read or written, or when there was no row yet at its first look: SQS hands it
 * again after the visibility timeout. One line per invocation, not per row.
 */
export function createWatchHandler(runtime: () => Promise<WatchDependencies>) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const deps = await runtime();
    const refs: (IntentRef & { look: number; messageId: string })[] = [];
    for (const record of event.Records) {
      try {
        refs.push({
          ...parseWatchMessage(record.body),
          look: Number(record.attributes?.ApproximateReceiveCount ?? 1),
          messageId: record.messageId,
        });
      } catch (error) {
        if (!(error instanceof PoisonMessageError)) throw error;
        logger.error('poison watch message dropped', { messageId: record.messageId, error: error.message });
        metrics.addMetric(Metric.poisonMessages, MetricUnit.Count, 1);
      }
    }
    const outcomes = await watchRows(refs, deps);
    const counts: Record<string, number> = {};
    const failed: { itemIdentifier: string }[] = [];
    outcomes.forEach((outcome, i) => {
      counts[outcome.kind] = (counts[outcome.kind] ?? 0) + 1;
      if (outcome.kind === 'error' || outcome.kind === 'look_again')
        failed.push({ itemIdentifier: (refs[i] as { messageId: string }).messageId });
      if (outcome.kind === 'error') {
        const error = outcome.error;
        logger.error('watch failed', {
          noticeId: refs[i]?.noticeId,
          channel: refs[i]?.channel,
          errorName: error instanceof Error ? error.name : typeof error,
        });
      }
    });
    if (counts.indexed) metrics.addMetric(Metric.watchIndexed, MetricUnit.Count, counts.indexed);
    logger.info('watches', counts);
    metrics.publishStoredMetrics();
    return { batchItemFailures: failed };
  };
}

export const handler = createWatchHandler(getWatchRuntime);
