import type { Channel } from '../domain/channel.ts';

/*
 * The shared rate budget's clock per channel (docs/architecture.md §11): one integer, in
 * microseconds, changed only by atomic operations, so that any number of instances can book
 * tokens without reading first. The booking rule is lambdas/domain/rate-budget.ts; the booking
 * loop is lambdas/use-cases/rate-budget.ts.
 */

/** What the booking loop writes. */
export interface RateClockBooking {
  /** Moves the clock by `byUs` (from 0 when absent) and answers the clock after the move. */
  advance(channel: Channel, byUs: number): Promise<number>;
  /** Sets the clock to `toUs` if it is absent or at or before `ifAtOrBeforeUs`; whether it did. */
  restart(channel: Channel, toUs: number, ifAtOrBeforeUs: number): Promise<boolean>;
  /** Sets the clock to `toUs` if it is exactly `ifEqualsUs` (nobody booked since); whether it did. */
  replace(channel: Channel, toUs: number, ifEqualsUs: number): Promise<boolean>;
}

/** What intake's estimates read (the backlog probe). */
export interface RateClockReading {
  /** The clock as last written (eventually consistent: for estimates, not for booking). */
  read(channel: Channel): Promise<number | undefined>;
}

/** The clock as its adapters implement it. */
export interface RateClockStore extends RateClockBooking, RateClockReading {}
