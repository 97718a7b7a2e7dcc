import type { Channel } from '../domain/channel.ts';

/** What a channel queue message carries: a reference to the intent, never its content. */
export interface IntentRef {
  readonly noticeId: string;
  readonly channel: Channel;
}

export interface IntentQueue {
  /** Sends one message per ref to its channel's queue; `delayMs` is rounded up to whole seconds (≤ 15 min). */
  enqueue(refs: readonly IntentRef[], options?: { delayMs?: number }): Promise<void>;
}

/**
 * Wakes an intent at `at` for its next attempt. Implementations: SQS delay for short waits,
 * EventBridge Scheduler one-time schedules for longer ones. Must be idempotent per
 * (intent, attempt): scheduling the same attempt twice results in one wake-up at most.
 */
export interface RetryScheduler {
  scheduleAttempt(ref: IntentRef, attempt: number, at: number): Promise<void>;
}
