import type { Channel } from '../domain/channel.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { Admission, SendGate } from '../ports/send-gate.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';

export interface SharedSendGateOptions {
  readonly store: Pick<ThrottleGateStore, 'readHold' | 'closeGate'>;
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
/** A gate reading: until when it is closed (0: open), why, and when it was read. */
interface GateReading {
  readonly until: number;
  readonly reason: string;
  readonly readAt: number;
}

export class SharedSendGate implements SendGate {
  private readonly gateCache = new Map<Channel, GateReading>();
  private readonly gateReads = new Map<Channel, Promise<GateReading>>();
  private readonly options: Required<SharedSendGateOptions>;

  constructor(options: SharedSendGateOptions) {
    this.options = { gateCacheMs: 250, maxInlineWaitMs: 2000, sleep: defaultSleep, ...options };
  }

  private gateUntil(channel: Channel, now: number): Promise<GateReading> {
    const cached = this.gateCache.get(channel);
    if (cached && now - cached.readAt < this.options.gateCacheMs) return Promise.resolve(cached);
    // The records of one batch arrive together and would all miss the cache together: they
    // share one read instead of each asking the table.
    const inFlight = this.gateReads.get(channel);
    if (inFlight) return inFlight;
    const read = this.readGate(channel, now).finally(() => this.gateReads.delete(channel));
    this.gateReads.set(channel, read);
    return read;
  }

  private async readGate(channel: Channel, startedAt: number): Promise<GateReading> {
    const held = await this.options.store.readHold(channel);
    const stored = { until: held?.untilMs ?? 0, reason: held?.reason ?? 'held', readAt: startedAt };
    // A 429 seen while the read was in flight is newer than what the read returns.
    const meanwhile = this.gateCache.get(channel);
    const reading =
      meanwhile && meanwhile.readAt >= startedAt && meanwhile.until > stored.until
        ? { ...meanwhile, readAt: startedAt }
        : stored;
    this.gateCache.set(channel, reading);
    return reading;
  }

  async admit(channel: Channel): Promise<Admission> {
    let now = this.options.clock.now();
    let gate = await this.gateUntil(channel, now);
    if (gate.until > now && gate.until - now <= this.options.maxInlineWaitMs) {
      // A short closure is cheaper to wait out here than to defer through the queue, whose
      // delay rounds up to whole seconds; then look at the gate again.
      await this.options.sleep(gate.until - now);
      now = this.options.clock.now();
      this.gateCache.delete(channel);
      gate = await this.gateUntil(channel, now);
    }
    return gate.until > now
      ? { kind: 'wait', untilMs: gate.until, held: { reason: gate.reason } }
      : { kind: 'go' };
  }

  async throttled(channel: Channel, untilMs: number): Promise<void> {
    await this.hold(channel, untilMs, 'provider_throttled');
  }

  async hold(channel: Channel, untilMs: number, reason: string): Promise<void> {
    const now = this.options.clock.now();
    const cached = this.gateCache.get(channel);
    this.gateCache.set(
      channel,
      cached && cached.until >= untilMs
        ? { ...cached, readAt: now }
        : { until: untilMs, reason, readAt: now },
    );
    await this.options.store.closeGate(channel, untilMs, reason);
  }
}
