import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Metric, outcomeMetric } from '../contract/metrics.ts';
import type { Channel } from '../domain/channel.ts';
import { type ChannelMessage, PoisonMessageError, parseChannelMessage } from '../edge/intent-message.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import { deliverBatch } from '../use-cases/deliver-batch.ts';
import { type DeliveryResult, deliverIntent } from '../use-cases/deliver-intent.ts';
import { mirrorSuppression } from '../use-cases/mirror-suppression.ts';
import { logger, metrics } from '../wiring/observability.ts';
import { getSenderRuntime } from '../wiring/sender.ts';

/**
 * SQS handler for one channel queue: parse → deliver → log, with partial batch responses so a
 * failed record is retried alone. A record fails only when the ledger could not be read or
 * written; provider answers are recorded, not thrown. Where the channel's provider takes many
 * messages per call (and EMAIL_BATCH_MAX > 1), the invocation's records are sent together
 * (deliverBatch), each still with its own result; otherwise one at a time.
 */
export function channelSenderHandler(channel: Channel) {
  const processor = new BatchProcessor(EventType.SQS);

  /** The record's body, or undefined for a poison message (dropped, counted). */
  function messageOf(record: SQSRecord): ChannelMessage | undefined {
    try {
      return parseChannelMessage(record.body, channel);
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      // Redelivery cannot fix a malformed body; acknowledge it and make it visible.
      logger.error('poison message dropped', { channel, messageId: record.messageId, error: error.message });
      metrics.addMetric(Metric.poisonMessages, MetricUnit.Count, 1);
      return undefined;
    }
  }

  async function mirror(message: Extract<ChannelMessage, { kind: 'suppression_sync' }>): Promise<void> {
    const { deps } = await getSenderRuntime(channel);
    const mirrored = await mirrorSuppression(message.sync, deps);
    logger.info('suppression sync', { channel, fingerprint: message.sync.fingerprint, result: mirrored });
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
    const message = messageOf(record);
    if (!message) return;
    if (message.kind === 'suppression_sync') return mirror(message);
    const { deps } = await getSenderRuntime(channel);
    report(message.ref, record, await deliverIntent(message.ref, deps));
  }

  async function batchHandler(event: SQSEvent, maxBatch: number): Promise<SQSBatchResponse> {
    const { deps } = await getSenderRuntime(channel);
    const failures: { itemIdentifier: string }[] = [];
    const taken: { record: SQSRecord; ref: IntentRef }[] = [];
    for (const record of event.Records) {
      const message = messageOf(record);
      if (message?.kind === 'intent') taken.push({ record, ref: message.ref });
      else if (message?.kind === 'suppression_sync') {
        // Not a send: mirrored on its own, its failure retried alone.
        await mirror(message).catch(() => failures.push({ itemIdentifier: record.messageId }));
      }
    }
    const steps = await deliverBatch(
      taken.map((t) => t.ref),
      deps,
      { maxBatch },
    );
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
