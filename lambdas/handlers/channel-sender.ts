import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Metric, outcomeMetric } from '../contract/metrics.ts';
import type { Channel } from '../domain/channel.ts';
import { PoisonMessageError, parseIntentMessage } from '../edge/intent-message.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import { deliverBatch } from '../use-cases/deliver-batch.ts';
import { type DeliveryResult, deliverIntent } from '../use-cases/deliver-intent.ts';
import { getSenderRuntime } from '../wiring/sender.ts';
import { logger, metrics } from './observability.ts';

/**
 * SQS handler for one channel queue: parse → deliver → log, with partial batch responses so a
 * failed record is retried alone. A record fails only when the ledger could not be read or
 * written; provider answers are recorded, not thrown. Where the channel's provider takes many
 * messages per call (and EMAIL_BATCH_MAX > 1), the invocation's records are sent together
 * (deliverBatch), each still with its own result; otherwise one at a time.
 */
export function channelSenderHandler(channel: Channel) {
  const processor = new BatchProcessor(EventType.SQS);

  /** The record's body as an intent, or undefined for a poison message (dropped, counted). */
  function refOf(record: SQSRecord): IntentRef | undefined {
    try {
      return parseIntentMessage(record.body, channel);
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      // Redelivery cannot fix a malformed body; acknowledge it and make it visible.
      logger.error('poison message dropped', { channel, messageId: record.messageId, error: error.message });
      metrics.addMetric(Metric.poisonMessages, MetricUnit.Count, 1);
      return undefined;
    }
  }

  function report(ref: IntentRef, record: SQSRecord, result: DeliveryResult): void {
    logger.info('delivery step', {
      ...ref,
      receiveCount: record.attributes?.ApproximateReceiveCount,
      result,
    });
    if (result.kind === 'recorded') {
      metrics.addMetric(outcomeMetric(result.state), MetricUnit.Count, 1);
      if (result.escalation === 'published') metrics.addMetric(Metric.escalations, MetricUnit.Count, 1);
      if (result.escalation === 'pending')
        metrics.addMetric(Metric.escalationPublishFailures, MetricUnit.Count, 1);
    }
  }

  async function recordHandler(record: SQSRecord): Promise<void> {
    const ref = refOf(record);
    if (!ref) return;
    const { deps } = await getSenderRuntime(channel);
    report(ref, record, await deliverIntent(ref, deps));
  }

  async function batchHandler(event: SQSEvent, maxBatch: number): Promise<SQSBatchResponse> {
    const { deps } = await getSenderRuntime(channel);
    const taken = event.Records.flatMap((record) => {
      const ref = refOf(record);
      return ref ? [{ record, ref }] : [];
    });
    const steps = await deliverBatch(
      taken.map((t) => t.ref),
      deps,
      { maxBatch },
    );
    const failures: { itemIdentifier: string }[] = [];
    steps.forEach((step, i) => {
      const { record, ref } = taken[i] as (typeof taken)[number];
      if (step.kind === 'error') {
        logger.error('delivery step failed', {
          ...ref,
          errorName: step.error instanceof Error ? step.error.name : typeof step.error,
          errorMessage: step.error instanceof Error ? step.error.message : undefined,
        });
        failures.push({ itemIdentifier: record.messageId });
      } else {
        report(ref, record, step);
      }
    });
    return { batchItemFailures: failures };
  }

  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    try {
      const { batchMax } = await getSenderRuntime(channel);
      if (batchMax > 1 && event.Records.length > 1) return await batchHandler(event, batchMax);
      return await processPartialResponse(event, recordHandler, processor, { context });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
