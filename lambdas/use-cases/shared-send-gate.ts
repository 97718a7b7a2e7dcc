import type { Channel } from '../domain/channel.ts';
import { type BucketState, newBucket, onAccepted, onThrottled, reserve } from '../domain/pacing.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { Admission, SendGate } from '../ports/send-gate.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';

export interface SharedSendGateOptions {
  readonly store: ThrottleGateStore;
  readonly clock: Clock;
  /**
   * Known provider rate per channel for THIS process (sends/s); absent = no pacing, only the
   * gate. In AWS each sender instance gets `rate / maximum concurrency`.
   */
  readonly ratePerSecond?: Readonly<Partial<Record<Channel, number>>>;
  /** How long a gate reading is trusted before asking the table again. @default 250 */
  readonly gateCacheMs?: number;
  /** Longest wait for a token spent inside the handler; longer waits defer the message. @default 2000 */
  readonly maxInlineWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The provider-wide "slow down" as shared state (a gate item in the ledger table, read with a
 * short cache) plus an in-process token bucket at the provider's known rate. A 429 closes the
 * gate for everyone until the advised time and halves this process's pace; successes bring
 * the pace back up to the configured rate.
 */
export class SharedSendGate implements SendGate {
  private readonly gateCache = new Map<Channel, { until: number; readAt: number }>();
  private readonly gateReads = new Map<Channel, Promise<number>>();
  private readonly buckets = new Map<Channel, BucketState>();
  /** Per channel: until when the current throttle episode lasts. */
  private readonly episodes = new Map<Channel, number>();
  private readonly options: Required<Omit<SharedSendGateOptions, 'ratePerSecond'>> &
    Pick<SharedSendGateOptions, 'ratePerSecond'>;

  constructor(options: SharedSendGateOptions) {
    this.options = { gateCacheMs: 250, maxInlineWaitMs: 2000, sleep: defaultSleep, ...options };
  }

  private gateUntil(channel: Channel, now: number): Promise<number> {
    const cached = this.gateCache.get(channel);
    if (cached && now - cached.readAt < this.options.gateCacheMs) return Promise.resolve(cached.until);
    // The records of one batch arrive together and would all miss the cache together: they
    // share one read instead of each asking the table.
    const inFlight = this.gateReads.get(channel);
    if (inFlight) return inFlight;
    const read = this.readGate(channel, now).finally(() => this.gateReads.delete(channel));
    this.gateReads.set(channel, read);
    return read;
  }

  private async readGate(channel: Channel, startedAt: number): Promise<number> {
    const stored = (await this.options.store.readGate(channel)) ?? 0;
    // A 429 seen while the read was in flight is newer than what the read returns.
    const meanwhile = this.gateCache.get(channel);
    const until = meanwhile && meanwhile.readAt >= startedAt ? Math.max(stored, meanwhile.until) : stored;
    this.gateCache.set(channel, { until, readAt: startedAt });
    return until;
  }

  async admit(channel: Channel): Promise<Admission> {
    let now = this.options.clock.now();
    let until = await this.gateUntil(channel, now);
    if (until > now && until - now <= this.options.maxInlineWaitMs) {
      // A short closure is cheaper to wait out here than to defer through the queue, whose
      // delay rounds up to whole seconds; then look at the gate again.
      await this.options.sleep(until - now);
      now = this.options.clock.now();
      this.gateCache.delete(channel);
      until = await this.gateUntil(channel, now);
    }
    if (until > now) return { kind: 'wait', untilMs: until };
    const rate = this.options.ratePerSecond?.[channel];
    if (!rate) return { kind: 'go' };
    const bucket = this.buckets.get(channel) ?? newBucket(rate, now);
    const { state, waitMs } = reserve(bucket, now);
    if (waitMs > this.options.maxInlineWaitMs) {
      // Do not hold the token: this message comes back later through the queue.
      this.buckets.set(channel, bucket);
      return { kind: 'wait', untilMs: now + waitMs };
    }
    this.buckets.set(channel, state);
    if (waitMs > 0) await this.options.sleep(waitMs);
    return { kind: 'go' };
  }

  async throttled(channel: Channel, untilMs: number): Promise<void> {
    const now = this.options.clock.now();
    const cached = this.gateCache.get(channel);
    this.gateCache.set(channel, { until: Math.max(untilMs, cached?.until ?? 0), readAt: now });
    // Slow down once per throttle episode: the 429s of sends already in flight when the first
    // one arrived say nothing new, and halving for each would collapse the pace.
    const episodeEnd = this.episodes.get(channel) ?? 0;
    const bucket = this.buckets.get(channel);
    if (bucket && now >= episodeEnd) this.buckets.set(channel, onThrottled(bucket, now));
    this.episodes.set(channel, Math.max(episodeEnd, untilMs));
    await this.options.store.closeGate(channel, untilMs, 'provider_throttled');
  }

  async hold(channel: Channel, untilMs: number, reason: string): Promise<void> {
    const now = this.options.clock.now();
    const cached = this.gateCache.get(channel);
    this.gateCache.set(channel, { until: Math.max(untilMs, cached?.until ?? 0), readAt: now });
    await this.options.store.closeGate(channel, untilMs, reason);
  }

  accepted(channel: Channel): void {
    const bucket = this.buckets.get(channel);
    if (bucket) this.buckets.set(channel, onAccepted(bucket));
  }
}
