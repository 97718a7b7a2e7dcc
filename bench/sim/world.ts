/**
 * The simulated world both dispatchers face: the notices, a Twilio-like provider with a token
 * bucket, an SQS standard queue with delays, visibility timeouts and a redrive policy, and the
 * measurements. Only the dispatchers differ (simulate.ts).
 */
import { exponential, type Simulation } from './kernel.ts';

export interface ProviderModel {
  /** Sends per second the provider admits (token bucket of this many tokens, refilled at this rate). */
  readonly ratePerSecond: number;
  /** One-way latency: fixed part + exponential part (ms). */
  readonly oneWayMs: number;
  readonly oneWayJitterMs: number;
}

/** What one call to the provider returned. */
export type ProviderAnswer =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'throttled'; readonly retryAfterMs: number };

/**
 * The provider's cap: at most R tokens, refilled at R/s; a call without a token gets 429 with
 * Retry-After = whole seconds until the next token (at least 1), as the local simulator does.
 * The bucket is checked when the request arrives, one one-way latency after it was sent.
 */
export class Provider {
  private tokens: number;
  private last = 0;
  calls = 0;
  accepted = 0;
  throttled = 0;

  constructor(
    private readonly sim: Simulation,
    private readonly model: ProviderModel,
    private readonly random: () => number,
  ) {
    this.tokens = model.ratePerSecond;
  }

  private oneWay(): number {
    return this.model.oneWayMs + exponential(this.random, this.model.oneWayJitterMs);
  }

  async call(): Promise<ProviderAnswer> {
    await this.sim.sleep(this.oneWay());
    this.calls++;
    const now = this.sim.now;
    const rate = this.model.ratePerSecond;
    this.tokens = Math.min(Math.max(1, rate), this.tokens + ((now - this.last) / 1000) * rate);
    this.last = now;
    let answer: ProviderAnswer;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.accepted++;
      answer = { kind: 'accepted' };
    } else {
      this.throttled++;
      answer = { kind: 'throttled', retryAfterMs: 1000 * Math.max(1, Math.ceil((1 - this.tokens) / rate)) };
    }
    await this.sim.sleep(this.oneWay());
    return answer;
  }
}

export interface Message {
  readonly notice: number;
  receives: number;
}

export interface QueueModel {
  readonly visibilityTimeoutMs: number;
  /** Receives after which a failed message goes to the DLQ; Infinity = no redrive policy. */
  readonly maxReceiveCount: number;
  /** Latency of one SQS request (ms). */
  readonly requestMs: number;
}

/**
 * An SQS standard queue, approximately FIFO. `send` with a delay keeps the message invisible
 * that long (DelaySeconds: whole seconds, at most 900); `receive` long-polls: it answers as soon
 * as at least one message is visible. A message neither deleted nor failed stays in flight.
 */
export class Queue {
  private visible: Message[] = [];
  private head = 0;
  private waiters: (() => void)[] = [];
  sends = 0;
  receives = 0;
  deadLettered = 0;
  onDeadLetter: (message: Message) => void = () => {};

  constructor(
    private readonly sim: Simulation,
    readonly model: QueueModel,
  ) {}

  get depth(): number {
    return this.visible.length - this.head;
  }

  private makeVisible(message: Message): void {
    this.visible.push(message);
    const waiter = this.waiters.shift();
    waiter?.();
  }

  /** Enqueues now (the caller has paid the request already) with an SQS delay. */
  send(notice: number, delayMs = 0): void {
    this.sends++;
    const seconds = Math.min(900, Math.ceil(delayMs / 1000));
    const message: Message = { notice, receives: 0 };
    if (seconds <= 0) this.makeVisible(message);
    else this.sim.at(this.sim.now + seconds * 1000, () => this.makeVisible(message));
  }

  /** Schedules a message to become visible at an absolute time (EventBridge Scheduler's target). */
  sendAt(notice: number, at: number): void {
    this.sim.at(at, () => {
      this.sends++;
      this.makeVisible({ notice, receives: 0 });
    });
  }

  async receive(max: number): Promise<Message[]> {
    await this.sim.sleep(this.model.requestMs);
    while (this.depth === 0) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    this.receives++;
    const batch = this.visible.slice(this.head, this.head + max);
    this.head += batch.length;
    if (this.head > 100_000) {
      this.visible = this.visible.slice(this.head);
      this.head = 0;
    }
    for (const m of batch) m.receives++;
    return batch;
  }

  /** A batch item failure: the message comes back after the visibility timeout, or goes to the DLQ. */
  fail(message: Message): void {
    this.sim.at(this.sim.now + this.model.visibilityTimeoutMs, () => {
      if (message.receives >= this.model.maxReceiveCount) {
        this.deadLettered++;
        this.onDeadLetter(message);
      } else {
        this.makeVisible(message);
      }
    });
  }
}

/**
 * Arrival times (ms) of `total` notices within `hourMs`: a share uniformly at random over the
 * hour, the rest uniformly within a spike window; sorted.
 */
export function arrivals(
  random: () => number,
  total: number,
  hourMs: number,
  spike: { readonly share: number; readonly startMs: number; readonly lengthMs: number },
): Float64Array {
  const times = new Float64Array(total);
  const inSpike = Math.round(total * spike.share);
  for (let i = 0; i < total; i++) {
    times[i] = i < inSpike ? spike.startMs + random() * spike.lengthMs : random() * hourMs;
  }
  return times.sort();
}

export interface Bin {
  /** Minutes since the start. */
  readonly minute: number;
  readonly providerCallsPerSecond: number;
  readonly acceptedPerSecond: number;
  readonly throttledPerSecond: number;
  /** Oldest notice arrived and not yet accepted, seconds, at the end of the bin. */
  readonly oldestUnresolvedSeconds: number;
  readonly unresolved: number;
}

/** Per-notice state both dispatchers share, and the time series. */
export class Ledger {
  readonly resolvedAt: Float64Array;
  /** 0 open, 1 accepted, 2 failed / lost. */
  readonly outcome: Uint8Array;
  private oldest = 0;
  resolved = 0;
  accepted = 0;
  failed = 0;

  constructor(readonly createdAt: Float64Array) {
    this.resolvedAt = new Float64Array(createdAt.length).fill(Number.NaN);
    this.outcome = new Uint8Array(createdAt.length);
  }

  get size(): number {
    return this.createdAt.length;
  }

  resolve(notice: number, now: number, how: 'accepted' | 'failed'): boolean {
    if (this.outcome[notice] !== 0) return false;
    this.outcome[notice] = how === 'accepted' ? 1 : 2;
    this.resolvedAt[notice] = now;
    this.resolved++;
    if (how === 'accepted') this.accepted++;
    else this.failed++;
    return true;
  }

  /** Oldest unresolved among the notices that have arrived by `now`. */
  oldestUnresolved(now: number): { ageSeconds: number; unresolved: number } {
    while (this.oldest < this.size && this.outcome[this.oldest] !== 0) this.oldest++;
    let arrived = 0;
    // Arrivals are sorted: binary search for the count arrived by now.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.createdAt[mid] as number) <= now) lo = mid + 1;
      else hi = mid;
    }
    arrived = lo;
    const first = this.oldest < arrived ? (this.createdAt[this.oldest] as number) : now;
    return { ageSeconds: (now - first) / 1000, unresolved: arrived - this.resolved };
  }
}

/** Samples the provider counters and the ledger every `binMs` of simulated time. */
export function recordBins(
  sim: Simulation,
  provider: Provider,
  ledger: Ledger,
  binMs: number,
  bins: Bin[],
  done: () => boolean,
): void {
  let last = { calls: 0, accepted: 0, throttled: 0 };
  const tick = () => {
    const { ageSeconds, unresolved } = ledger.oldestUnresolved(sim.now);
    const seconds = binMs / 1000;
    bins.push({
      minute: Math.round((sim.now / 60_000) * 1000) / 1000,
      providerCallsPerSecond: (provider.calls - last.calls) / seconds,
      acceptedPerSecond: (provider.accepted - last.accepted) / seconds,
      throttledPerSecond: (provider.throttled - last.throttled) / seconds,
      oldestUnresolvedSeconds: Math.round(ageSeconds * 10) / 10,
      unresolved,
    });
    last = { calls: provider.calls, accepted: provider.accepted, throttled: provider.throttled };
    if (!done()) sim.at(sim.now + binMs, tick);
  };
  sim.at(binMs, tick);
}
