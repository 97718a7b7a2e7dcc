import type { Channel } from '../../domain/channel.ts';
import type { RateClockStore } from '../../ports/rate-budget.port.ts';

/** The rate budget's clock in memory: the DynamoDB item's operations on a map (tests, simulation). */
export class MemoryRateClock implements RateClockStore {
  private readonly clocks = new Map<Channel, number>();
  /** Writes made, conditional failures included (what DynamoDB would bill). */
  writes = 0;

  async advance(channel: Channel, byUs: number): Promise<number> {
    this.writes++;
    const next = (this.clocks.get(channel) ?? 0) + byUs;
    this.clocks.set(channel, next);
    return next;
  }

  async restart(channel: Channel, toUs: number, ifAtOrBeforeUs: number): Promise<boolean> {
    this.writes++;
    const current = this.clocks.get(channel);
    if (current !== undefined && current > ifAtOrBeforeUs) return false;
    this.clocks.set(channel, toUs);
    return true;
  }

  async replace(channel: Channel, toUs: number, ifEqualsUs: number): Promise<boolean> {
    this.writes++;
    if (this.clocks.get(channel) !== ifEqualsUs) return false;
    this.clocks.set(channel, toUs);
    return true;
  }

  async read(channel: Channel): Promise<number | undefined> {
    return this.clocks.get(channel);
  }
}
