import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Channel } from '../../domain/channel.ts';
import type { IntentQueue, IntentRef, SuppressionSync } from '../../ports/intent-queue.port.ts';

/** SQS caps a message delay at 15 minutes. */
export const MAX_SQS_DELAY_MS = 900_000;
const BATCH_LIMIT = 10;

/** The message body: a reference only. Destinations and variables never travel through SQS. */
export function intentMessageBody(ref: IntentRef, attempt?: number): string {
  return JSON.stringify({ noticeId: ref.noticeId, channel: ref.channel, ...(attempt ? { attempt } : {}) });
}

/** A suppression sync's body: ids, a reason code and the sealed destination (never in clear). */
export function suppressionSyncBody(sync: SuppressionSync): string {
  return JSON.stringify({ kind: 'suppression_sync', ...sync });
}

export class SqsIntentQueue implements IntentQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrls: Readonly<Partial<Record<Channel, string>>>,
  ) {}

  async enqueue(refs: readonly IntentRef[], options: { delayMs?: number } = {}): Promise<void> {
    const delaySeconds = Math.min(Math.ceil((options.delayMs ?? 0) / 1000), MAX_SQS_DELAY_MS / 1000);
    const byQueue = new Map<string, IntentRef[]>();
    for (const ref of refs) {
      const url = this.queueUrls[ref.channel];
      if (!url) throw new Error(`no queue configured for channel ${ref.channel}`);
      byQueue.set(url, [...(byQueue.get(url) ?? []), ref]);
    }
    for (const [url, queued] of byQueue) {
      for (let i = 0; i < queued.length; i += BATCH_LIMIT) {
        const chunk = queued.slice(i, i + BATCH_LIMIT);
        const out = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((ref, j) => ({
              Id: String(j),
              MessageBody: intentMessageBody(ref),
              ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
            })),
          }),
        );
        if (out.Failed && out.Failed.length > 0) {
          throw new Error(
            `SQS refused ${out.Failed.length} of ${chunk.length} messages (${out.Failed[0]?.Code})`,
          );
        }
      }
    }
  }

  async enqueueSuppressionSync(sync: SuppressionSync): Promise<void> {
    const url = this.queueUrls[sync.channel];
    if (!url) throw new Error(`no queue configured for channel ${sync.channel}`);
    await this.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: suppressionSyncBody(sync) }));
  }
}
