import type { Channel } from '../domain/channel.ts';

/** A closed gate: until when, and why (`provider_throttled`, or the provider's code of an operator hold). */
export interface GateHold {
  readonly untilMs: number;
  readonly reason: string;
}

/**
 * The channel's throttle gate, shared by every worker (use-cases/shared-send-gate.ts closes and
 * reads it; the reconciler's deadline-risk check reads it).
 */
export interface ThrottleGateStore {
  /** Epoch ms until which no worker should call the channel's provider. */
  readGate(channel: Channel): Promise<number | undefined>;
  /** The same read with the hold's reason (the senders record it on the rows it holds). */
  readHold(channel: Channel): Promise<GateHold | undefined>;
  /**
   * Closes the gate until `untilMs`, unless it is already closed until later; true when this call
   * moved it (the hold it opens is new), false when a later closure was already recorded.
   */
  closeGate(channel: Channel, untilMs: number, reason: string): Promise<boolean>;
}
