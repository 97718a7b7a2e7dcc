import type { Channel } from '../domain/channel.ts';
import type { Priority } from '../domain/priority.ts';

export type Admission =
  | { readonly kind: 'go' }
  /**
   * Not before `untilMs`. With `held`, the channel's gate is closed (a 429's advice, an operator
   * hold) for every worker; without, this caller's lane of the rate budget is booked that far ahead.
   */
  | { readonly kind: 'wait'; readonly untilMs: number; readonly held?: { readonly reason: string } };

/**
 * Decides whether a worker may call the channel's provider now. Shared across workers: when
 * the provider says "slow down", every worker of the channel holds until the advised time.
 */
export interface SendGate {
  /**
   * May a call for `channel` go now? With a shared rate budget the answer comes when this
   * caller's token is due; `priority` is the lane it books in (default `standard`).
   */
  admit(channel: Channel, priority?: Priority): Promise<Admission>;
  /** The provider throttled us; hold the channel until `untilMs`. */
  throttled(channel: Channel, untilMs: number): Promise<void>;
  /** The provider needs a person (our account): hold the channel until `untilMs`, pace untouched. */
  hold(channel: Channel, untilMs: number, reason: string): Promise<void>;
}
