import type { Channel } from '../domain/channel.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { Admission, SendGate } from '../ports/send-gate.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';

export interface SharedSendGateOptions {
  readonly store: ThrottleGateStore;
  readonly clock: Clock;
  /** How long a gate reading is trusted before asking the table again. @default 250 */
  readonly gateCacheMs?: number;
  /** Longest closure waited out inside the handler; longer ones defer the message. @default 2000 */
  readonly maxInlineWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The provider-wide "slow down" as shared state: a gate item in the ledger table, read with a
 * short cache. A 429 closes the gate for every worker of the channel until the advised time; an
 * operational refusal holds it. Pacing to a known rate is the shared rate budget's job
 * (./budget-send-gate.ts), which looks at this gate first.
 */
export class SharedSendGate implements SendGate {
  private readonly gateCache = new Map<Channel, { until: number; readAt: number }>();
  private readonly gateReads = new Map<Channel, Promise<number>>();
  private readonly options: Required<SharedSendGateOptions>;

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
    return until > now ? { kind: 'wait', untilMs: until } : { kind: 'go' };
  }

  async throttled(channel: Channel, untilMs: number): Promise<void> {
    await this.hold(channel, untilMs, 'provider_throttled');
  }

  async hold(channel: Channel, untilMs: number, reason: string): Promise<void> {
    const now = this.options.clock.now();
    const cached = this.gateCache.get(channel);
    this.gateCache.set(channel, { until: Math.max(untilMs, cached?.until ?? 0), readAt: now });
    await this.options.store.closeGate(channel, untilMs, reason);
  }
}
