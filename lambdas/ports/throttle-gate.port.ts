import type { Channel } from '../domain/channel.ts';

/**
 * The channel's throttle gate, shared by every worker (use-cases/shared-send-gate.ts closes and
 * reads it; the reconciler's deadline-risk check reads it).
 */
export interface ThrottleGateStore {
  /** Epoch ms until which no worker should call the channel's provider. */
  readGate(channel: Channel): Promise<number | undefined>;
  /**
   * Closes the gate until `untilMs`, unless it is already closed until later; true when this call
   * moved it (the hold it opens is new), false when a later closure was already recorded.
   */
  closeGate(channel: Channel, untilMs: number, reason: string): Promise<boolean>;
}
