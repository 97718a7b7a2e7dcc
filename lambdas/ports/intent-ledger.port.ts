import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import type { TransitionPlan } from '../domain/transition.ts';

/*
 * The intent rows of the ledger (`N#<noticeId>` / `C#<channel>`, docs/table-design.md), cut to
 * their callers: intake reserves them, every writer of a transition reads one and applies a
 * plan to it, the timeline and a cancel read a whole notice.
 */

export type ReserveResult =
  | { readonly kind: 'created'; readonly intent: Intent }
  /** Same content as the recorded intent: a replay. */
  | { readonly kind: 'duplicate'; readonly existing: Intent }
  /** Same (noticeId, channel), different content: refused, the recorded intent is untouched. */
  | { readonly kind: 'conflict'; readonly existing: Intent }
  /**
   * Not written: another channel of the notice is recorded and not the caller's to see
   * (`reserveNotice`'s `visible`), so nothing of this request is recorded.
   */
  | { readonly kind: 'skipped' };

export type TransitionResult =
  | { readonly kind: 'applied'; readonly intent: Intent }
  /** State or version moved since the plan was made; nothing was written. */
  | { readonly kind: 'stale'; readonly current: Intent | undefined };

/** Intake: records new intents, never overwriting one. */
export interface IntentReservations {
  /** Records a new intent unless one exists for (noticeId, channel); never overwrites. */
  reserve(intent: Intent): Promise<ReserveResult>;
  /**
   * Records every channel of one notice that is not yet recorded in one atomic write, so that
   * among concurrent identical requests exactly one sees `created` (and sees it for every
   * channel it asked for); results are in the order of `intents`.
   *
   * With `visible`: a recorded channel the caller may not see stops the request. Its refusal
   * (duplicate or conflict) comes back, every channel not yet recorded comes back `skipped`, and
   * nothing is written: a caller never adds a channel to another's notice.
   */
  reserveNotice(
    intents: readonly Intent[],
    visible?: (existing: Intent) => boolean,
  ): Promise<ReserveResult[]>;
}

/**
 * Claim and outcome, and every other state change (the reconciler's, an operator's, a provider's
 * report): read the row consistently, then write a `TransitionPlan` conditionally on the plan's
 * expected state and version. Every state change goes through `apply`.
 */
export interface IntentTransitions {
  get(noticeId: string, channel: Channel): Promise<Intent | undefined>;
  /** One conditional write: expected state + version, new fields, one appended record. */
  apply(plan: TransitionPlan): Promise<TransitionResult>;
}

/** A notice's rows together: the timeline, and a cancel (which acts on every channel). */
export interface NoticeReader {
  /** Every channel of a notice, in channel order. */
  getNotice(noticeId: string): Promise<Intent[]>;
  /**
   * The rows a list shows (their last reason and next step beside them), in no particular order;
   * a key without a row is left out. Eventually consistent: a list may lag a transition by a moment.
   */
  getRows(keys: readonly { readonly noticeId: string; readonly channel: Channel }[]): Promise<Intent[]>;
}
