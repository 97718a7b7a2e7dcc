import type { Channel } from '../domain/channel.ts';
import type { SuppressionRecord, SuppressionState, SuppressionTarget } from '../domain/suppression.ts';

export interface SuppressionHistory {
  readonly state: SuppressionState;
  /** Oldest first; at most the newest `limit` records. */
  readonly records: readonly SuppressionRecord[];
  /** Whether older records exist beyond `records`. */
  readonly truncated: boolean;
}

export interface SuppressionAppend {
  /** The effective state after the append. */
  readonly state: SuppressionState;
  /** False when the same fact was already recorded (nothing written). */
  readonly appended: boolean;
}

/**
 * The suppression list per destination fingerprint (domain/suppression.ts): the sender checks it
 * before every claim and records what providers refuse, provider events record bounces and
 * complaints, operators add, lift and read the history.
 */
export interface Suppressions {
  /**
   * The effective suppression state (the latest record), one cheap read: the sender asks this
   * before every claim. Undefined when nothing was ever recorded for the destination.
   */
  getSuppression(channel: Channel, fingerprint: string): Promise<SuppressionState | undefined>;
  /**
   * Appends one record (domain/suppression.ts), atomically with the effective state it implies;
   * a fact already recorded is not recorded again.
   */
  appendSuppression(target: SuppressionTarget, record: SuppressionRecord): Promise<SuppressionAppend>;
  /** The effective state and the newest `limit` records (default 100), oldest first. */
  getSuppressionHistory(
    channel: Channel,
    fingerprint: string,
    options?: { limit?: number },
  ): Promise<SuppressionHistory | undefined>;
}
