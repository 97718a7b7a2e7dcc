import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export type ChannelName = 'email' | 'sms';

/** A lane with a queue of its own (docs/architecture.md §11); `standard` is the channel queue. */
export type LaneName = 'critical' | 'bulk';

export interface ChannelQueueProps {
  readonly channel: ChannelName;
  /** The lane this queue carries; absent: the channel queue (the standard lane). */
  readonly lane?: LaneName;
  /**
   * Timeout of the function that consumes the queue. The visibility timeout is six times this
   * (Lambda's guidance for SQS event sources), so a slow batch is not handed to a second worker.
   */
  readonly consumerTimeout: Duration;
  /**
   * Receives before a message moves to the DLQ. A record fails only when the ledger could not be
   * read or written; the intent row stays open either way and the reconciler re-enqueues it.
   * @default 5
   */
  readonly maxReceiveCount?: number;
}

/**
 * The work queue of one channel plus its dead-letter queue. Messages carry only
 * `{ noticeId, channel, attempt }` (no destination, no content), so SQS-managed encryption is
 * enough and keeps Scheduler and the event source free of KMS grants. TLS is enforced by the
 * queue policy.
 */
export class ChannelQueue extends Construct {
  readonly channel: ChannelName;
  readonly lane: LaneName | undefined;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: ChannelQueueProps) {
    super(scope, id);
    this.channel = props.channel;
    this.lane = props.lane;
    const maxReceiveCount = props.maxReceiveCount ?? 5;
    if (maxReceiveCount < 5) throw new Error('maxReceiveCount must be ≥ 5 (Lambda guidance for SQS sources)');

    const { queue, deadLetterQueue } = queueWithDeadLetters(this, {
      consumerTimeout: props.consumerTimeout,
      maxReceiveCount,
    });
    this.queue = queue;
    this.deadLetterQueue = deadLetterQueue;
  }
}

/**
 * A queue a Lambda event source consumes (the channel and lane queues, the watch queue) and its
 * dead-letter queue, as `Queue` / `DeadLetterQueue` of `scope`: SQS-managed encryption (messages
 * carry only ids), TLS enforced, both kept when the stack goes (stateful). Visibility is six times
 * the consumer's timeout (Lambda's guidance for SQS event sources). Four days of retention: longer
 * than the default notice deadline, so a message that outlives its deadline is still processed
 * (the worker records `deadline_exceeded`) rather than silently expiring, and than a watch's
 * 15-minute delay with room for a consumer that was down.
 */
export function queueWithDeadLetters(
  scope: Construct,
  props: { readonly consumerTimeout: Duration; readonly maxReceiveCount: number },
): { readonly queue: Queue; readonly deadLetterQueue: Queue } {
  const deadLetterQueue = new Queue(scope, 'DeadLetterQueue', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const queue = new Queue(scope, 'Queue', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * 6),
    retentionPeriod: Duration.days(4),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return { queue, deadLetterQueue };
}

/** `Email`, `SmsCritical`, …: a queue's name in alarms, outputs and the dashboard. */
export function queueLabel(q: Pick<ChannelQueue, 'channel' | 'lane'>): string {
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return `${cap(q.channel)}${q.lane ? cap(q.lane) : ''}`;
}
