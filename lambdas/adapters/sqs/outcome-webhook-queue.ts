import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { OutcomeEvent } from '../../domain/outcome-event.ts';
import type { OutcomeSink, WebhookMessage } from '../../ports/outcome-sink.port.ts';

const ENTRIES_PER_CALL = 10;
/** SQS's longest DelaySeconds: a longer wait is made of several hops (`notBefore` says when). */
const MAX_DELAY_MS = 15 * 60_000;

/**
 * The queue of events owed to the webhook URL: one message per event and try (its body a
 * `WebhookMessage`), consumed by the signing sender. A retry is a new message, delayed (up to 15
 * min per hop) until the schedule's next try; a spent schedule goes to the dead-letter queue (its
 * alarm). The queue's own redrive policy catches what the sender cannot even read.
 */
export class SqsWebhookQueue implements OutcomeSink {
  readonly name = 'webhook-queue';

  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly deadLetterQueueUrl?: string | undefined,
  ) {}

  async publish(events: readonly OutcomeEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
      const chunk = events.slice(i, i + ENTRIES_PER_CALL);
      const out = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((event, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify({ event, tries: 0 } satisfies WebhookMessage),
          })),
        }),
      );
      if (out.Failed && out.Failed.length > 0) {
        throw new Error(`the webhook queue refused ${out.Failed.length} event(s): ${out.Failed[0]?.Code}`);
      }
    }
  }

  /** The message again, visible at `notBefore` (or after the longest delay SQS has, then again). */
  async later(message: WebhookMessage, now: number): Promise<void> {
    const waitMs = Math.max(0, (message.notBefore ?? now) - now);
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        DelaySeconds: Math.ceil(Math.min(waitMs, MAX_DELAY_MS) / 1000),
      }),
    );
  }

  /** A webhook no try of the schedule delivered, kept for a person (and the redrive). */
  async deadLetter(message: WebhookMessage): Promise<void> {
    if (!this.deadLetterQueueUrl) throw new Error('the webhook sender has no dead-letter queue');
    await this.client.send(
      new SendMessageCommand({ QueueUrl: this.deadLetterQueueUrl, MessageBody: JSON.stringify(message) }),
    );
  }
}
