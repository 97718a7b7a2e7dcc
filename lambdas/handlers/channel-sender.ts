import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { deferralMetric, Metric, outcomeMetric } from '../contract/metrics.ts';
import type { Channel } from '../domain/channel.ts';
import { Reason } from '../domain/state-machine.ts';
import { type ChannelMessage, PoisonMessageError, parseChannelMessage } from '../edge/intent-message.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import { type DeliveryResult, type DeliveryStep, deliver } from '../use-cases/deliver.ts';
import { mirrorSuppression } from '../use-cases/mirror-suppression.ts';
import { logger, metrics } from '../wiring/observability.ts';
import { getSenderRuntime, type SenderRuntime } from '../wiring/sender.ts';

/**
 * A step as logged: a recorded outcome equal to the state it led to is said once, and the attempt
 * only when it is not the first (the ledger's record has both either way).
 */
function compactResult(result: DeliveryResult): DeliveryResult | Record<string, unknown> {
  if (result.kind !== 'recorded') return result;
  const { outcome, attempt, ...rest } = result;
  return {
    ...rest,
    ...(outcome !== undefined && outcome !== result.state ? { outcome } : {}),
    ...(attempt !== 1 ? { attempt } : {}),
  };
}

/** What the handler uses of the sender's runtime. */
export type SenderHandlerRuntime = Pick<SenderRuntime, 'deps' | 'batchMax'>;

/**
 * SQS handler for one channel's lane queues: parse → deliver → log, with partial batch responses
 * (Powertools) so a failed record is retried alone. The invocation's intent references go through
 * the one dispatch path together (`deliver`: as few provider calls as the transport allows, one
 * gate admission per call); each record's handler then answers its own step. A record fails
 * only when the ledger could not be read or written; provider answers are recorded, not thrown.
 */
export function channelSenderHandler(
  channel: Channel,
  /** The function's runtime (lambdas/wiring/sender.ts); injectable for handler tests. */
  runtimeOf: () => Promise<SenderHandlerRuntime> = () => getSenderRuntime(channel),
) {
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

  function report(ref: IntentRef, record: SQSRecord, result: DeliveryResult): void {
    // One line per message (what each worker did with it), short: the receive count only when it
    // was handed again, the provider's outcome only where it is not the state it led to.
    const receiveCount = record.attributes?.ApproximateReceiveCount;
    logger.info('delivery step', {
      ...ref,
      ...(receiveCount !== undefined && receiveCount !== '1' ? { receiveCount } : {}),
      result: compactResult(result),
    });
    // A row sent back without a move: a bounded wait, measured (docs/architecture.md §4 "No silent waits").
    if (result.kind === 'deferred') metrics.addMetric(deferralMetric(result.cause), MetricUnit.Count, 1);
    if (result.kind === 'recorded') {
      metrics.addMetric(outcomeMetric(result.state), MetricUnit.Count, 1);
      if (result.reason === Reason.failover) metrics.addMetric(Metric.providerFailovers, MetricUnit.Count, 1);
      if (result.escalation === 'published') metrics.addMetric(Metric.escalations, MetricUnit.Count, 1);
      if (result.escalation === 'pending')
        metrics.addMetric(Metric.escalationPublishFailures, MetricUnit.Count, 1);
    }
  }

  /** Every intent reference of the event delivered together; each record's step by message id. */
  async function deliverAll(
    parsed: ReadonlyMap<string, ChannelMessage | undefined>,
    runtime: SenderHandlerRuntime,
  ): Promise<Map<string, DeliveryStep>> {
    const taken = [...parsed].flatMap(([messageId, message]) =>
      message?.kind === 'intent' ? [{ messageId, ref: message.ref }] : [],
    );
    const steps = await deliver(
      taken.map((t) => t.ref),
      runtime.deps,
      { maxBatch: runtime.batchMax },
    );
    return new Map(taken.map((t, i) => [t.messageId, steps[i] as DeliveryStep]));
  }

  async function recordHandler(
    record: SQSRecord,
    message: ChannelMessage | undefined,
    delivered: Promise<Map<string, DeliveryStep>>,
    runtime: SenderHandlerRuntime,
  ): Promise<void> {
    if (message?.kind === 'suppression_sync') {
      // Not a send: mirrored on its own, its failure retried alone.
      const mirrored = await mirrorSuppression(message.sync, runtime.deps);
      logger.info('suppression sync', { channel, fingerprint: message.sync.fingerprint, result: mirrored });
      return;
    }
    const step = (await delivered).get(record.messageId);
    if (!message || !step) return;
    if (step.kind === 'error') {
      logger.error('delivery step failed', {
        ...message.ref,
        errorName: step.error instanceof Error ? step.error.name : typeof step.error,
        errorMessage: step.error instanceof Error ? step.error.message : undefined,
      });
      throw step.error;
    }
    report(message.ref, record, step);
  }

  return async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    try {
      const runtime = await runtimeOf();
      const parsed = new Map(event.Records.map((record) => [record.messageId, messageOf(record)]));
      const delivered = deliverAll(parsed, runtime);
      return await processPartialResponse(
        event,
        (record: SQSRecord) => recordHandler(record, parsed.get(record.messageId), delivered, runtime),
        processor,
        { context },
      );
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
