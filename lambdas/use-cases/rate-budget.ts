import type { Channel } from '../domain/channel.ts';
import type { Priority } from '../domain/priority.ts';
import {
  afterAdvance,
  type BudgetRules,
  firstWrite,
  type Grant,
  grant,
  toUs,
} from '../domain/rate-budget.ts';
import type { RateClockBooking } from '../ports/rate-budget.port.ts';

/** How often a booking is tried again when other bookers keep moving a lagging clock. */
const MAX_ROUNDS = 5;

/**
 * Books tokens of a channel's shared rate budget (docs/architecture.md §11): one write per
 * block in the busy steady state (`advance`) and in the idle one (`restart`), two at a
 * transition. Remembers the clock it saw last, which chooses the first write.
 */
export class RateBudget {
  private readonly seen = new Map<Channel, number>();

  constructor(
    private readonly clock: RateClockBooking,
    private readonly rules: Readonly<Partial<Record<Channel, BudgetRules>>>,
  ) {}

  rulesFor(channel: Channel): BudgetRules | undefined {
    return this.rules[channel];
  }

  /** The clock this process saw last (ms), if any. */
  lastSeenMs(channel: Channel): number | undefined {
    const us = this.seen.get(channel);
    return us === undefined ? undefined : us / 1000;
  }

  async book(channel: Channel, lane: Priority, count: number, nowMs: number): Promise<Grant> {
    const rules = this.rules[channel];
    if (!rules) throw new Error(`no rate budget for channel ${channel}`);
    const nowUs = toUs(nowMs);
    const write = firstWrite(this.seen.get(channel), nowUs, count, rules);
    if (write.kind === 'restart' && (await this.clock.restart(channel, write.toUs, write.ifAtOrBeforeUs))) {
      this.seen.set(channel, write.toUs);
      return grant(nowUs, nowUs, count, lane, rules);
    }
    let last: Grant | undefined;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const after = await this.clock.advance(channel, count * rules.spacingUs);
      const result = afterAdvance(after, nowUs, count, rules);
      if (result.kind === 'granted') {
        this.seen.set(channel, after);
        return grant(result.startUs, nowUs, count, lane, rules);
      }
      if (await this.clock.replace(channel, result.toUs, result.ifEqualsUs)) {
        this.seen.set(channel, result.toUs);
        return grant(nowUs, nowUs, count, lane, rules);
      }
      // Someone booked after our advance, from the same lagging clock: those tokens are in
      // the past and unused. Book again from where the clock is now.
      last = grant(after - count * rules.spacingUs, nowUs, count, lane, rules);
    }
    // Still lagging after several rounds (a burst of bookers at an idle→busy edge): take the
    // tokens at now; the overlap is bounded by the bookers of this edge.
    return last ?? grant(nowUs, nowUs, count, lane, rules);
  }
}
