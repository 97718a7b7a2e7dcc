/**
 * The per-process pace the runtime had until issue 20, kept here as the scale simulation's model
 * of it (bench/simulate.ts, the `ours` scenarios): each sender instance paced itself at R / C with
 * a token bucket (one second of burst), halved its pace once per throttle episode and climbed back
 * on success. The runtime replaced it with the shared rate budget (docs/architecture.md §11),
 * which holds the rate whatever the number of instances; this model is what the comparison in
 * docs/benchmarks.md "Scale simulation" measured, unchanged.
 */
import type { Channel } from '../../lambdas/domain/channel.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import type { Clock } from '../../lambdas/ports/clock.port.ts';
import type { Admission, SendGate } from '../../lambdas/ports/send-gate.port.ts';

interface Bucket {
  readonly tokens: number;
  readonly updatedAt: number;
  /** Current pace, tokens per second. */
  readonly rate: number;
  /** The configured rate: the ceiling for `rate`. */
  readonly maxRate: number;
}

/** Never pace below this fraction of the configured rate. */
const MIN_RATE_FRACTION = 0.1;
const DECREASE_FACTOR = 0.5;
/** Additive increase per successful send, as a fraction of the configured rate. */
const INCREASE_FRACTION = 0.02;

const newBucket = (rate: number, now: number): Bucket => ({
  tokens: Math.max(1, rate),
  updatedAt: now,
  rate,
  maxRate: rate,
});

function refill(b: Bucket, now: number): Bucket {
  const elapsed = Math.max(0, now - b.updatedAt) / 1000;
  return {
    ...b,
    tokens: Math.min(Math.max(1, b.rate), b.tokens + elapsed * b.rate),
    updatedAt: Math.max(now, b.updatedAt),
  };
}

/** Reserves the next token even if it lies in the future, so callers queue one behind another. */
function reserve(b: Bucket, now: number): { bucket: Bucket; waitMs: number } {
  const current = refill(b, now);
  const next = { ...current, tokens: current.tokens - 1 };
  return { bucket: next, waitMs: next.tokens >= 0 ? 0 : Math.ceil((-next.tokens / current.rate) * 1000) };
}

function onThrottled(b: Bucket, now: number): Bucket {
  const current = refill(b, now);
  const rate = Math.max(b.maxRate * MIN_RATE_FRACTION, current.rate * DECREASE_FACTOR);
  return { ...current, rate, tokens: Math.min(current.tokens, 0) };
}

const onAccepted = (b: Bucket): Bucket => ({
  ...b,
  rate: Math.min(b.maxRate, b.rate + b.maxRate * INCREASE_FRACTION),
});

/** The shared hold gate first, then this instance's own bucket at `ratePerSecond`. */
export class PerProcessPaceGate implements SendGate {
  private bucket: Bucket | undefined;
  private episodeEnd = 0;

  constructor(
    private readonly options: {
      readonly holds: SendGate;
      readonly clock: Clock;
      readonly ratePerSecond: number;
      /** Longest wait for a token inside the handler; longer ones defer the message. */
      readonly maxInlineWaitMs: number;
      readonly sleep: (ms: number) => Promise<void>;
    },
  ) {}

  async admit(channel: Channel, _priority?: Priority): Promise<Admission> {
    const held = await this.options.holds.admit(channel);
    if (held.kind === 'wait') return held;
    const now = this.options.clock.now();
    const current = this.bucket ?? newBucket(this.options.ratePerSecond, now);
    const { bucket, waitMs } = reserve(current, now);
    if (waitMs > this.options.maxInlineWaitMs) {
      // The token is not held: this message comes back later through the queue.
      this.bucket = current;
      return { kind: 'wait', untilMs: now + waitMs };
    }
    this.bucket = bucket;
    if (waitMs > 0) await this.options.sleep(waitMs);
    return { kind: 'go' };
  }

  async throttled(channel: Channel, untilMs: number): Promise<void> {
    const now = this.options.clock.now();
    // Slow down once per throttle episode: the 429s of sends already in flight say nothing new.
    if (this.bucket && now >= this.episodeEnd) this.bucket = onThrottled(this.bucket, now);
    this.episodeEnd = Math.max(this.episodeEnd, untilMs);
    await this.options.holds.throttled(channel, untilMs);
  }

  hold(channel: Channel, untilMs: number, reason: string): Promise<void> {
    return this.options.holds.hold(channel, untilMs, reason);
  }

  accepted(_channel: Channel): void {
    if (this.bucket) this.bucket = onAccepted(this.bucket);
  }
}
