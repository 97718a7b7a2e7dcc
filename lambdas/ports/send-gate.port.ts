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
  /** The provider needs a person (our account): hold the channel until `untilMs`, pace untouched. */
  hold(channel: Channel, untilMs: number, reason: string): Promise<void>;
  accepted(channel: Channel): void;
}
