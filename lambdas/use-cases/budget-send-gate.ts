import type { Channel } from '../domain/channel.ts';
import { DEFAULT_PRIORITY, type Priority } from '../domain/priority.ts';
import { tokenTimes } from '../domain/rate-budget.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { Admission, SendGate } from '../ports/send-gate.port.ts';
import type { RateBudget } from './rate-budget.ts';

export interface BudgetSendGateOptions {
  /** The shared hold gate (a 429's "slow down", an operational hold), looked at first. */
  readonly holds: SendGate;
  readonly budget: RateBudget;
  readonly clock: Clock;
  /**
   * Longest wait for a token spent inside the invocation (the claim, and the lease, come after
   * it); a caller whose lane is booked further ahead is deferred through its queue. @default 10000
   */
  readonly maxInlineWaitMs?: number;
  /** Most tokens booked in one write. @default 25 */
  readonly maxBlock?: number;
  /**
   * How long the first caller of an idle (channel, lane) waits for others before booking, so
   * the records of one batch, whose reads end a few ms apart, share one write. @default 0
   */
  readonly lingerMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Waiter {
  readonly resolve: (at: number) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A SendGate over the channel's shared rate budget (docs/architecture.md §11): the hold gate
 * first, then a token booked in the caller's lane, then the wait until the token is due. The
 * callers of one (channel, lane) that wait together share one booking: while a booking is in
 * flight, the next callers gather into the next block (one write per block).
 */
export class BudgetSendGate implements SendGate {
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly booking = new Set<string>();
  private readonly options: Required<Omit<BudgetSendGateOptions, 'holds' | 'budget' | 'clock'>> &
    Pick<BudgetSendGateOptions, 'holds' | 'budget' | 'clock'>;
  /** Callers sent back through their queue because the lane was booked beyond the inline wait. */
  deferrals = 0;

  constructor(options: BudgetSendGateOptions) {
    this.options = { maxInlineWaitMs: 10_000, maxBlock: 25, lingerMs: 0, sleep: defaultSleep, ...options };
  }

  async admit(channel: Channel, priority: Priority = DEFAULT_PRIORITY): Promise<Admission> {
    const held = await this.options.holds.admit(channel);
    if (held.kind === 'wait') return held;
    const rules = this.options.budget.rulesFor(channel);
    if (!rules) return held;
    const now = this.options.clock.now();
    const leadMs = rules.leadUs[priority] / 1000;
    const seen = this.options.budget.lastSeenMs(channel);
    const bookedAhead = seen === undefined ? 0 : seen - leadMs - now;
    if (bookedAhead > this.options.maxInlineWaitMs) {
      // Come back when the clock is within reach, with half the inline wait to spare.
      this.deferrals++;
      return { kind: 'wait', untilMs: now + bookedAhead - this.options.maxInlineWaitMs / 2 };
    }
    const at = await this.token(channel, priority);
    const wait = at - this.options.clock.now();
    if (wait > 0) await this.options.sleep(wait);
    return { kind: 'go' };
  }

  private token(channel: Channel, priority: Priority): Promise<number> {
    const key = `${channel}|${priority}`;
    return new Promise<number>((resolve, reject) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push({ resolve, reject });
      this.waiting.set(key, queue);
      if (!this.booking.has(key)) void this.drain(key, channel, priority);
    });
  }

  private async drain(key: string, channel: Channel, priority: Priority): Promise<void> {
    this.booking.add(key);
    try {
      if (this.options.lingerMs > 0) await this.options.sleep(this.options.lingerMs);
      for (;;) {
        const queue = this.waiting.get(key) ?? [];
        if (queue.length === 0) return;
        const block = queue.splice(0, this.options.maxBlock);
        try {
          const grant = await this.options.budget.book(
            channel,
            priority,
            block.length,
            this.options.clock.now(),
          );
          const times = tokenTimes(grant);
          block.forEach((w, i) => {
            w.resolve(times[i] as number);
          });
        } catch (error) {
          for (const w of block) w.reject(error);
        }
      }
    } finally {
      this.booking.delete(key);
    }
  }

  throttled(channel: Channel, untilMs: number): Promise<void> {
    return this.options.holds.throttled(channel, untilMs);
  }

  hold(channel: Channel, untilMs: number, reason: string): Promise<void> {
    return this.options.holds.hold(channel, untilMs, reason);
  }
}
