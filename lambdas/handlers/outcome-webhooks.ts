import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { PoisonMessageError } from '../edge/intent-message.ts';
import { parseWebhookMessage } from '../edge/outcome-message.ts';
import type { WebhookMessage } from '../ports/outcome-sink.port.ts';
import { deliverWebhook } from '../use-cases/deliver-webhook.ts';
import { logger } from '../wiring/observability.ts';
import { getOutcomeWebhooksRuntime, type OutcomeWebhooksRuntime } from '../wiring/outcomes.ts';

/**
 * The signing sender: each queued outcome event POSTed as a Standard Webhook, side by side. A 2xx
 * is done (the message deleted, never sent again); anything else is queued again for the
 * schedule's next try, then dead-lettered (lambdas/use-cases/deliver-webhook.ts). A record fails
 * only when the queue could not take its next try: SQS hands it again.
 */
export function createOutcomeWebhooksHandler(runtime: () => Promise<OutcomeWebhooksRuntime>) {
  async function one(record: SQSRecord, rt: OutcomeWebhooksRuntime): Promise<void> {
    let message: WebhookMessage;
    try {
      message = parseWebhookMessage(record.body);
    } catch (error) {
      if (!(error instanceof PoisonMessageError)) throw error;
      logger.error('poison webhook message dropped', { messageId: record.messageId, error: error.message });
      return;
    }
    const verdict = await deliverWebhook(message, { ...rt, now: Date.now });
    const { id, type } = message.event;
    switch (verdict.kind) {
      case 'delivered':
      case 'not_due':
        return;
      case 'retry':
      case 'dead_letter': {
        const { answer } = verdict;
        logger.warn(
          verdict.kind === 'retry' ? 'webhook not delivered; tried again later' : 'webhook dead-lettered',
          {
            id,
            type,
            tries: verdict.next.tries,
            answer: answer.kind === 'unreachable' ? answer.code : answer.status,
            ...(verdict.kind === 'retry'
              ? { nextTryAt: new Date(verdict.next.notBefore ?? 0).toISOString() }
              : {}),
          },
        );
      }
    }
  }

  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const rt = await runtime();
    const results = await Promise.allSettled(event.Records.map((record) => one(record, rt)));
    return {
      batchItemFailures: event.Records.flatMap((record, i) =>
        results[i]?.status === 'rejected' ? [{ itemIdentifier: record.messageId }] : [],
      ),
    };
  };
}

export const handler = createOutcomeWebhooksHandler(getOutcomeWebhooksRuntime);
