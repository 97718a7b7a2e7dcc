import type { Channel } from '../domain/channel.ts';

/** One member of a provider batch call, in the order the call carried them. */
export interface SendBatchMember {
  readonly noticeId: string;
  readonly channel: Channel;
  readonly templateId: string;
  readonly templateVersion: string;
  /** The member's deadline, a fixed field of its row, which its message carries. */
  readonly deadline?: number | undefined;
  /**
   * A copy of the member row's sealed envelope (bound to that row: `noticeId|channel`), so that
   * the exact batch can be rebuilt for a replay even after other members' rows dropped theirs.
   */
  readonly envelope: string;
}

/**
 * A provider batch call, recorded before it is made (docs/architecture.md §4, "One dispatch path"). Kept
 * as long as a replay under its key can be answered by the provider (`expiresAt`, the table's
 * TTL), then removed by DynamoDB at no write cost.
 */
export interface SendBatch {
  /** `bat_…`, named on every member's claim. */
  readonly id: string;
  readonly channel: Channel;
  readonly provider: string;
  /** The idempotency key the call carries (the same on every replay). */
  readonly idempotencyKey: string;
  /** Epoch ms: when the call was about to be made. */
  readonly createdAt: number;
  /** Epoch ms after which the record may be gone (TTL). */
  readonly expiresAt: number;
  readonly members: readonly SendBatchMember[];
}

/** Provider batch calls: the sender records one before the call, the reconciler's lookup reads it. */
export interface BatchRecords {
  /**
   * Records a provider batch call before it is made (conditional: a batch id is written once).
   * Its members are durable with it, so a crash anywhere after this write leaves a batch the
   * reconciler can replay under its key; no record means the call was never made.
   */
  recordBatch(batch: SendBatch): Promise<void>;
  /** The batch record, or undefined when none was written (the call was never made). */
  getBatch(id: string): Promise<SendBatch | undefined>;
}
