import type { Duration } from 'aws-cdk-lib';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { queueWithDeadLetters } from './channel-queue.ts';

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
    // A watch fails when its row could not be read or written (retried), and once by design when
    // it found no row yet (it looks again): five receives, as the channel queues.
    const { queue, deadLetterQueue } = queueWithDeadLetters(this, {
      consumerTimeout: props.consumerTimeout,
      maxReceiveCount: 5,
    });
    this.queue = queue;
    this.deadLetterQueue = deadLetterQueue;
  }
}
