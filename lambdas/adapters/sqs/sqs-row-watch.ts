import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { IntentRef } from '../../ports/intent-queue.port.ts';
import type { RowWatch } from '../../ports/row-watch.port.ts';
import { MAX_SQS_DELAY_MS } from './sqs-intent-queue.ts';

/** SQS takes at most ten messages per SendMessageBatch. */
const BATCH_LIMIT = 10;

/** A watch's body: the row's key only, as the channel queues' references. */
export function watchMessageBody(ref: IntentRef): string {
  return JSON.stringify({ noticeId: ref.noticeId, channel: ref.channel });
}

/** Watches on one SQS queue, delayed by the message's own DelaySeconds (≤ 15 min). */
export class SqsRowWatch implements RowWatch {
  readonly delayMs: number;

  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
    delayMs: number,
  ) {
    this.delayMs = Math.min(Math.ceil(delayMs / 1000) * 1000, MAX_SQS_DELAY_MS);
  }

  async watch(refs: readonly IntentRef[]): Promise<void> {
    const chunks: IntentRef[][] = [];
    for (let i = 0; i < refs.length; i += BATCH_LIMIT) chunks.push(refs.slice(i, i + BATCH_LIMIT));
    await Promise.all(
      chunks.map(async (chunk) => {
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((ref, j) => ({
              Id: String(j),
              MessageBody: watchMessageBody(ref),
              DelaySeconds: this.delayMs / 1000,
            })),
          }),
        );
        if (out.Failed && out.Failed.length > 0) {
          throw new Error(
            `SQS refused ${out.Failed.length} of ${chunk.length} watches (${out.Failed[0]?.Code})`,
          );
        }
      }),
    );
  }
}
