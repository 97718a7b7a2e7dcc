import type { Channel } from '../domain/channel.ts';

/*
 * The channels that failed recently (docs/table-design.md "Recent failures"): a failed row
 * leaves the open index, so the operators' list of what failed in the last day is kept apart,
 * one small item per failure, written by the ledger when a row moves into `failed`.
 */

/** A channel that failed, as the recent-failures list holds it (ids, codes and times only). */
export interface FailedRef {
  readonly noticeId: string;
  readonly channel: Channel;
  /** When it failed (the failing record's time). */
  readonly failedAt: number;
  readonly createdAt: number;
  readonly deadline: number;
  readonly attempts: number;
  /** The failing record's reason. */
  readonly reason: string;
}

export interface RecentFailures {
  /**
   * The channels that failed from `since` to `until`, newest first, at most `max` (the newest). A
   * failure is listed once the failing write is done; one whose list item could not be written
   * (the ledger row is the truth) is missing here only.
   */
  listFailed(since: number, until: number, max: number): Promise<FailedRef[]>;
}
