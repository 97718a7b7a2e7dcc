import type { Channel } from '../domain/channel.ts';
import { type IntentState, isUnresolved } from '../domain/state-machine.ts';

/*
 * The open-intent index (docs/table-design.md): the rows that still owe something, by due time.
 * The reconciler sweeps it, the operators' list reads it, and two writes move a row in it
 * without a transition: `defer`, and clearing an escalation marker once it is published.
 */

/** An open-index item: keys and what the index projects (docs/table-design.md). */
export interface OpenIntentRef {
  readonly noticeId: string;
  readonly channel: Channel;
  readonly dueAt: number;
  readonly createdAt: number;
  readonly deadline: number;
  readonly state: IntentState;
  readonly attempts: number;
  /** When the row's current `unknown` was escalated to a person (UNKNOWN_POLICY=escalate). */
  readonly escalatedAt?: number | undefined;
  /** An escalation owed and not yet published. */
  readonly escalationPending?: boolean | undefined;
  /** When an `accepted` row (awaiting its final delivery report) was accepted. */
  readonly acceptedAt?: number | undefined;
}

export interface OpenIntentPage {
  readonly items: readonly OpenIntentRef[];
  /** Opaque; pass back to continue. Absent on the last page. */
  readonly cursor?: string | undefined;
}

export interface OpenIntentCounts {
  /**
   * Rows in the open index per state: the unresolved ones, `accepted` rows still owed a final
   * delivery report, and `failed` rows whose escalation is still pending.
   */
  readonly byState: Readonly<Partial<Record<IntentState, number>>>;
  /** Creation time of the oldest unresolved row (awaiting reports and pending escalations excluded). */
  readonly oldestCreatedAt: number | undefined;
  /** Acceptance time of the oldest `accepted` row still owed a final delivery report. */
  readonly oldestAwaitingSince: number | undefined;
  /** Rows whose escalation is not published yet (failed ones and escalated `unknown` ones). */
  readonly escalationsPending: number;
}

/** The gauges of `countOpen` over open-index items: one definition for every store. */
export function countRefs(refs: Iterable<OpenIntentRef>): OpenIntentCounts {
  const byState: Partial<Record<IntentState, number>> = {};
  let oldestCreatedAt: number | undefined;
  let oldestAwaitingSince: number | undefined;
  let escalationsPending = 0;
  for (const ref of refs) {
    byState[ref.state] = (byState[ref.state] ?? 0) + 1;
    if (ref.escalationPending) escalationsPending += 1;
    // A failed row waiting for its escalation is counted, but is no unresolved intent; an
    // accepted one is owed a final delivery report, gauged apart (since its acceptance).
    if (isUnresolved(ref.state)) oldestCreatedAt = Math.min(oldestCreatedAt ?? ref.createdAt, ref.createdAt);
    else if (ref.state === 'accepted') {
      const since = ref.acceptedAt ?? ref.createdAt;
      oldestAwaitingSince = Math.min(oldestAwaitingSince ?? since, since);
    }
  }
  return { byState, oldestCreatedAt, oldestAwaitingSince, escalationsPending };
}

/** The reconciler's queries over the open index, and the list of open rows operators read. */
export interface OpenIndex {
  /** Open rows whose next action is due at or before `now`, oldest due first within a shard. */
  listDue(now: number, options?: { limit?: number; cursor?: string }): Promise<OpenIntentPage>;
  /**
   * Every row in the open index, read from the index alone (keys and projected attributes, no
   * base-table read), in no particular order: unresolved ones, accepted rows awaiting a final
   * report, failed rows with a pending escalation (callers that list unresolved rows filter by
   * the projected state). Cost follows the index only.
   */
  listOpen(options?: { limit?: number; cursor?: string }): Promise<OpenIntentPage>;
  /** Gauges over every open row (the open index alone): how many per state, the oldest, pending escalations. */
  countOpen(): Promise<OpenIntentCounts>;
  /**
   * Moves `dueAt` without a transition (e.g. an `unknown` row the provider could not answer
   * for yet). Conditional on the version, so it never races a transition.
   */
  defer(noticeId: string, channel: Channel, expectedVersion: number, dueAt: number): Promise<boolean>;
}

/** Publishing an escalation (senders, reconciler, intake's warnings): the marker it clears. */
export interface EscalationMarkers {
  /**
   * Clears a row's pending-escalation marker once the escalation is published. A failed row then
   * leaves the open index; with `keepOpen` (an escalated `unknown`, still owed an action) only the
   * marker goes; with `dueAt` (a channel held for an operator) the row stays, due then.
   * Conditional on the version; false when the row moved meanwhile.
   */
  settleEscalation(
    noticeId: string,
    channel: Channel,
    expectedVersion: number,
    options?: { readonly keepOpen?: boolean; readonly dueAt?: number | undefined },
  ): Promise<boolean>;
}
