import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonMessageError } from '../edge/intent-message.ts';
import { parseOutcomeMessage } from '../edge/outcome-message.ts';
import { deliverWebhook } from '../use-cases/deliver-webhook.ts';
import { logger } from '../wiring/observability.ts';
import { getOutcomeWebhooksRuntime, type OutcomeWebhooksRuntime } from '../wiring/outcomes.ts';

/**
 * The signing sender: each queued outcome event POSTed as a Standard Webhook. A 2xx is done (the
 * message deleted, never sent again); anything else is hidden until the schedule's next delay and
 * reported failed, so the queue hands it again; once the schedule is spent it is left to the
 * queue's redrive policy, which moves it to the dead-letter queue (alarm).
 */
export function createOutcomeWebhooksHandler(runtime: () => Promise<OutcomeWebhooksRuntime>) {
  async function one(record: SQSRecord, rt: OutcomeWebhooksRuntime): Promise<boolean> {
    let event: ReturnType<typeof parseOutcomeMessage>;
    try {
      event = parseOutcomeMessage(record.body);
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      logger.error('poison webhook message dropped', { messageId: record.messageId, error: error.message });
      return true;
    }
    const attempt = Number(record.attributes?.ApproximateReceiveCount ?? '1') || 1;
    const verdict = await deliverWebhook(event, attempt, rt.poster, rt.schedule);
    const answer = verdict.answer.kind === 'unreachable' ? verdict.answer.code : verdict.answer.status;
    if (verdict.kind === 'delivered') {
      logger.debug('webhook delivered', { id: event.id, attempt, answer });
      return true;
    }
    logger.warn(verdict.kind === 'retry' ? 'webhook not delivered; retried later' : 'webhook dead-lettered', {
      id: event.id,
      type: event.type,
      attempt,
      answer,
      ...(verdict.kind === 'retry' ? { retryInMs: verdict.delayMs } : {}),
    });
    await rt.queue.hide(record.receiptHandle, verdict.kind === 'retry' ? verdict.delayMs : 0);
    return false;
  }

  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const rt = await runtime();
    const done = await Promise.all(
      event.Records.map((record) => one(record, rt).catch(() => false)),
    );
    return {
      batchItemFailures: event.Records.flatMap((record, i) =>
        done[i] ? [] : [{ itemIdentifier: record.messageId }],
      ),
    };
  };
}

export const handler = createOutcomeWebhooksHandler(getOutcomeWebhooksRuntime);
