import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Channel } from '../../domain/channel.ts';
import { DEFAULT_PRIORITY, type Priority } from '../../domain/priority.ts';
import type { IntentQueue, IntentRef, SuppressionSync } from '../../ports/intent-queue.port.ts';

/** SQS caps a message delay at 15 minutes. */
export const MAX_SQS_DELAY_MS = 900_000;
const BATCH_LIMIT = 10;

/** The message body: a reference only. Destinations and variables never travel through SQS. */
export function intentMessageBody(ref: IntentRef, attempt?: number): string {
  return JSON.stringify({
    noticeId: ref.noticeId,
    channel: ref.channel,
    ...(attempt ? { attempt } : {}),
    // The lane travels with the reference, so a deferral or a retry goes back to the same lane.
    ...(ref.priority !== undefined && ref.priority !== DEFAULT_PRIORITY ? { priority: ref.priority } : {}),
  });
}

/** Per channel, the queue of each lane that has its own (docs/architecture.md §11). */
export type LaneQueues = Readonly<Partial<Record<Channel, Readonly<Partial<Record<Priority, string>>>>>>;

/** The lane's own queue, else the channel's (one lane: every priority rides on it). */
export function laneTarget(
  ref: IntentRef,
  channelTargets: Readonly<Partial<Record<Channel, string>>>,
  laneTargets: LaneQueues = {},
): string | undefined {
  return laneTargets[ref.channel]?.[ref.priority ?? DEFAULT_PRIORITY] ?? channelTargets[ref.channel];
}

/** A suppression sync's body: ids, a reason code and the sealed destination (never in clear). */
export function suppressionSyncBody(sync: SuppressionSync): string {
  return JSON.stringify({ kind: 'suppression_sync', ...sync });
}

export class SqsIntentQueue implements IntentQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrls: Readonly<Partial<Record<Channel, string>>>,
    private readonly laneUrls: LaneQueues = {},
  ) {}

  async enqueue(refs: readonly IntentRef[], options: { delayMs?: number } = {}): Promise<void> {
    const delaySeconds = Math.min(Math.ceil((options.delayMs ?? 0) / 1000), MAX_SQS_DELAY_MS / 1000);
    const byQueue = new Map<string, IntentRef[]>();
    for (const ref of refs) {
      const url = laneTarget(ref, this.queueUrls, this.laneUrls);
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
