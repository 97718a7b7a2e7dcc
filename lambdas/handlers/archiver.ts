import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { Metric } from '../contract/metrics.ts';
import { type ArchiverDependencies, archiveChanges } from '../use-cases/archive-changes.ts';
import { archiveBatchOf, getArchiverRuntime } from '../wiring/archive.ts';
import { logger, metrics } from '../wiring/observability.ts';

/**
 * The ledger table's change stream → the write-once archive (docs/archive.md). A batch not
 * archived whole is answered with its first record: the event source hands the whole batch
 * again, and the archiver writes only what the archive does not hold yet.
 */
export function createArchiverHandler(runtime: () => Promise<ArchiverDependencies>) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const batch = archiveBatchOf(event.Records);
    if (!batch) return { batchItemFailures: [] };
    const result = await archiveChanges(batch, await runtime());
    metrics.addMetric(Metric.archivedFacts, MetricUnit.Count, result.factsArchived);
    metrics.addMetric(Metric.archiveObjectsWritten, MetricUnit.Count, result.objectsWritten);
    metrics.addMetric(Metric.archiveDuplicatesSkipped, MetricUnit.Count, result.duplicatesSkipped);
    metrics.addMetric(Metric.archiveLagSeconds, MetricUnit.Seconds, result.lagMs / 1000);
    metrics.publishStoredMetrics();
    if (result.overreaching !== undefined) {
      logger.warn(
        'archive batch handed shorter than an object already written; facts past it may be written twice',
        {
          object: result.overreaching,
          lastSequence: batch.last.sequence,
        },
      );
    }
    if (result.failedAt === undefined) return { batchItemFailures: [] };
    logger.error('archive batch not written whole; the batch is handed again', {
      firstSequence: result.failedAt,
      factsArchived: result.factsArchived,
      error: result.error instanceof Error ? `${result.error.name}: ${result.error.message}` : 'unknown',
    });
    return { batchItemFailures: [{ itemIdentifier: result.failedAt }] };
  };
}

export const handler = createArchiverHandler(getArchiverRuntime);
