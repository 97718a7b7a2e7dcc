import type { Channel } from '../domain/channel.ts';

export type Admission = { readonly kind: 'go' } | { readonly kind: 'wait'; readonly untilMs: number };

/**
 * Decides whether a worker may call the channel's provider now. Shared across workers: when
 * the provider says "slow down", every worker of the channel holds until the advised time.
 */
export interface SendGate {
  admit(channel: Channel): Promise<Admission>;
  /** The provider throttled us; hold the channel until `untilMs`. */
  throttled(channel: Channel, untilMs: number): Promise<void>;
  /**
   * The provider refused for a reason a person must fix (operational): hold the channel until
   * `untilMs` without touching the pace (this is no rate signal). True when this call opened the
   * hold (or moved it later): the caller escalates once per hold, not once per message.
   */
  hold(channel: Channel, untilMs: number, reason: string): Promise<boolean>;
  accepted(channel: Channel): void;
}
