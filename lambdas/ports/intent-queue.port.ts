import type { Channel } from '../domain/channel.ts';

/** What a channel queue message carries: a reference to the intent, never its content. */
export interface IntentRef {
  readonly noticeId: string;
  readonly channel: Channel;
}

/**
 * An operator's suppression to mirror into the channel provider's own list (its suppression-sync
 * facet): the channel's sender holds that provider's credentials, so the request travels on the
 * channel queue. The destination is sealed like a send envelope (bound to the fingerprint).
 */
export interface SuppressionSync {
  readonly channel: Channel;
  readonly fingerprint: string;
  readonly reason: string;
  readonly sealed: string;
}

/** How a suppression sync's destination is sealed: the envelope context it is bound to. */
export function suppressionSyncContext(sync: Pick<SuppressionSync, 'channel' | 'fingerprint'>) {
  return { noticeId: `suppression:${sync.fingerprint}`, channel: sync.channel };
}

export interface IntentQueue {
  /** Sends one message per ref to its channel's queue; `delayMs` is rounded up to whole seconds (≤ 15 min). */
  enqueue(refs: readonly IntentRef[], options?: { delayMs?: number }): Promise<void>;
  /** Sends one suppression sync to its channel's queue (absent: this queue cannot carry them). */
  enqueueSuppressionSync?(sync: SuppressionSync): Promise<void>;
}

/**
 * Wakes an intent at `at` for its next attempt. Implementations: SQS delay for short waits,
 * EventBridge Scheduler one-time schedules for longer ones. Must be idempotent per
 * (intent, attempt): scheduling the same attempt twice results in one wake-up at most.
 */
export interface RetryScheduler {
  scheduleAttempt(ref: IntentRef, attempt: number, at: number): Promise<void>;
}
