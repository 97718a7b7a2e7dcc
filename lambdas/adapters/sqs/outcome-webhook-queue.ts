import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { MAX_WEBHOOK_RETRY_DELAY_MS } from '../../contract/outcome-settings.ts';
import type { OutcomeEvent } from '../../domain/outcome-event.ts';
import type { OutcomeSink } from '../../ports/outcome-sink.port.ts';

const ENTRIES_PER_CALL = 10;

/**
 * The queue of events owed to the webhook URL: one message per event (its body the event, id
 * included), consumed by the signing sender, which retries by hiding a message for the schedule's
 * next delay (`hide`) and lets the queue's redrive policy dead-letter it once the schedule is spent.
 */
export class SqsWebhookQueue implements OutcomeSink {
  readonly name = 'webhook-queue';

  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async publish(events: readonly OutcomeEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
      const chunk = events.slice(i, i + ENTRIES_PER_CALL);
      const out = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((event, index) => ({ Id: String(index), MessageBody: JSON.stringify(event) })),
        }),
      );
      if (out.Failed && out.Failed.length > 0) {
        throw new Error(`the webhook queue refused ${out.Failed.length} event(s): ${out.Failed[0]?.Code}`);
      }
    }
  }

  /** The next try of a received message in `delayMs` (at most SQS's 12 h). */
  async hide(receiptHandle: string, delayMs: number): Promise<void> {
    await this.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.ceil(Math.min(delayMs, MAX_WEBHOOK_RETRY_DELAY_MS) / 1000),
      }),
    );
  }
}
