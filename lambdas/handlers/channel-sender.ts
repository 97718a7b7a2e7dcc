import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Metric, outcomeMetric } from '../contract/metrics.ts';
import type { Channel } from '../domain/channel.ts';
import { type ChannelMessage, PoisonMessageError, parseChannelMessage } from '../edge/intent-message.ts';
import { deliverIntent } from '../use-cases/deliver-intent.ts';
import { mirrorSuppression } from '../use-cases/mirror-suppression.ts';
import { getSenderRuntime } from '../wiring/sender.ts';
import { logger, metrics } from './observability.ts';

/**
 * SQS handler for one channel queue: parse → deliver → log, one record at a time, with
 * partial batch responses so a failed record is retried alone. A record fails only when the
 * ledger could not be read or written; provider answers are recorded, not thrown.
 */
export function channelSenderHandler(channel: Channel) {
  const processor = new BatchProcessor(EventType.SQS);

  async function recordHandler(record: SQSRecord): Promise<void> {
    let message: ChannelMessage;
    try {
      message = parseChannelMessage(record.body, channel);
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      // Redelivery cannot fix a malformed body; acknowledge it and make it visible.
      logger.error('poison message dropped', { channel, messageId: record.messageId, error: error.message });
      metrics.addMetric(Metric.poisonMessages, MetricUnit.Count, 1);
      return;
    }
    const { deps } = await getSenderRuntime(channel);
    if (message.kind === 'suppression_sync') {
      const mirrored = await mirrorSuppression(message.sync, deps);
      logger.info('suppression sync', { channel, fingerprint: message.sync.fingerprint, result: mirrored });
      return;
    }
    const { ref } = message;
    const result = await deliverIntent(ref, deps);
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

  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    try {
      return await processPartialResponse(event, recordHandler, processor, { context });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
