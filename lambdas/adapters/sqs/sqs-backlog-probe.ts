import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Channel } from '../../domain/channel.ts';
import type { Backlog } from '../../domain/deadline-risk.ts';
import { lanesAhead, PRIORITIES, type Priority } from '../../domain/priority.ts';
import type { BacklogProbe } from '../../ports/backlog.port.ts';
import type { RateClockReading } from '../../ports/rate-budget.port.ts';
import { type LaneQueues, laneTarget } from './sqs-intent-queue.ts';

export interface SqsBacklogProbeOptions {
  readonly sqs: SQSClient;
  readonly queueUrls: Readonly<Partial<Record<Channel, string>>>;
  readonly laneUrls?: LaneQueues;
  /** The channels' whole provider rates (the shared budget's); a channel without one has no estimate. */
  readonly ratePerSecond: Readonly<Partial<Record<Channel, number>>>;
  /** The budget's clock: tokens already booked ahead. */
  readonly clock?: RateClockReading;
  readonly now?: () => number;
  /** How long a reading is used. @default 1000 */
  readonly cacheMs?: number;
}

interface Reading {
  readonly at: number;
  readonly depth: ReadonlyMap<string, number>;
  readonly clockMs: number | undefined;
  /** Enqueued by this process since the reading, per queue URL. */
  readonly local: Map<string, number>;
}

/**
 * The backlog from SQS's approximate counts of each lane queue (visible + in flight + delayed)
 * and the budget's clock, read at most once a second per channel per process (concurrent
 * readers share one reading); what this process enqueues meanwhile is added, so the items of
 * one batch request see each other.
 */
export class SqsBacklogProbe implements BacklogProbe {
  private readonly readings = new Map<Channel, Reading>();
  private readonly pending = new Map<Channel, Promise<Reading>>();
  private readonly now: () => number;

  constructor(private readonly options: SqsBacklogProbeOptions) {
    this.now = options.now ?? Date.now;
  }

  private queueOf(channel: Channel, priority: Priority): string | undefined {
    return laneTarget({ noticeId: '', channel, priority }, this.options.queueUrls, this.options.laneUrls);
  }

  async read(channel: Channel): Promise<Backlog | undefined> {
    const rate = this.options.ratePerSecond[channel];
    if (!rate) return undefined;
    const reading = await this.reading(channel);
    const ahead: Partial<Record<Priority, number>> = {};
    for (const priority of PRIORITIES) {
      // A queue that several lanes share is counted once.
      const queues = new Set(lanesAhead(priority).flatMap((l) => this.queueOf(channel, l) ?? []));
      ahead[priority] = [...queues].reduce(
        (sum, url) => sum + (reading.depth.get(url) ?? 0) + (reading.local.get(url) ?? 0),
        0,
      );
    }
    return { ratePerSecond: rate, ahead, clockMs: reading.clockMs };
  }

  enqueued(channel: Channel, priority: Priority, count: number): void {
    const reading = this.readings.get(channel);
    const url = this.queueOf(channel, priority);
    if (!reading || !url) return;
    reading.local.set(url, (reading.local.get(url) ?? 0) + count);
  }

  private reading(channel: Channel): Promise<Reading> {
    const cached = this.readings.get(channel);
    if (cached && this.now() - cached.at < (this.options.cacheMs ?? 1000)) return Promise.resolve(cached);
    const inFlight = this.pending.get(channel);
    if (inFlight) return inFlight;
    const read = this.fresh(channel).finally(() => this.pending.delete(channel));
    this.pending.set(channel, read);
    return read;
  }

  private async fresh(channel: Channel): Promise<Reading> {
    const at = this.now();
    const urls = [...new Set(PRIORITIES.flatMap((p) => this.queueOf(channel, p) ?? []))];
    const [depths, clockUs] = await Promise.all([
      Promise.all(urls.map(async (url) => [url, await this.depthOf(url)] as const)),
      this.options.clock?.read(channel),
    ]);
    const reading: Reading = {
      at,
      depth: new Map(depths),
      clockMs: clockUs === undefined ? undefined : clockUs / 1000,
      local: new Map(),
    };
    this.readings.set(channel, reading);
    return reading;
  }

  private depthOf(url: string): Promise<number> {
    return queueDepth(this.options.sqs, url);
  }
}

/** A queue's approximate references: visible, in flight and delayed. */
export async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}
