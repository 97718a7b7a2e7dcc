import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface WatchQueueProps {
  /**
   * Timeout of the watch function. The visibility timeout is six times this (Lambda's guidance
   * for SQS event sources); it is also when a watch that found no row yet looks again.
   */
  readonly consumerTimeout: Duration;
}

/**
 * The watches intake sends before it reserves (docs/table-design.md "Watched rows"): one delayed
 * message per row, `{ noticeId, channel }` only (no destination, no content: SQS-managed
 * encryption, TLS by the queue policy), plus its dead-letter queue. Stateful: a watch in flight
 * is the only thing that brings a row on the happy path into the open index after a crash, so the
 * queue outlives compute redeploys.
 */
export class WatchQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: WatchQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * 6),
      // Delays are at most 15 minutes; days leave room for a watch function that was down.
      retentionPeriod: Duration.days(4),
      // A watch fails when its row could not be read or written (retried), and once by design
      // when it found no row yet (it looks again): five receives, as the channel queues.
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
