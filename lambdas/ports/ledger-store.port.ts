import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import { type IntentState, isUnresolved } from '../domain/state-machine.ts';
import type { SuppressionRecord, SuppressionState, SuppressionTarget } from '../domain/suppression.ts';
import type { TransitionPlan } from '../domain/transition.ts';

export type ReserveResult =
  | { readonly kind: 'created'; readonly intent: Intent }
  /** Same content as the recorded intent: a replay. */
  | { readonly kind: 'duplicate'; readonly existing: Intent }
  /** Same (noticeId, channel), different content: refused, the recorded intent is untouched. */
  | { readonly kind: 'conflict'; readonly existing: Intent };

export type TransitionResult =
  | { readonly kind: 'applied'; readonly intent: Intent }
  /** State or version moved since the plan was made; nothing was written. */
  | { readonly kind: 'stale'; readonly current: Intent | undefined };

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

/**
 * Key check values (lambdas/domain/identity.ts `keyCheckValue`) the table records of the keys
 * it was first used with, and where those keys came from (a hint for people, never a key).
 */
export interface KeyChecks {
  readonly fingerprint?: string | undefined;
  readonly envelope?: string | undefined;
  readonly keysFrom?: string | undefined;
}

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
 * A provider batch call, recorded before it is made (docs/architecture.md §4, "Batches"). Kept
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
 * The delivery ledger, shaped by what the use cases need rather than by DynamoDB's API.
 * Every state change goes through `apply`, which writes a `TransitionPlan` conditionally on
 * the plan's expected state and version.
 */
export interface LedgerStore {
  /** Records a new intent unless one exists for (noticeId, channel); never overwrites. */
  reserve(intent: Intent): Promise<ReserveResult>;
  /**
   * Records every channel of one notice that is not yet recorded in one atomic write, so that
   * among concurrent identical requests exactly one sees `created` (and sees it for every
   * channel it asked for); results are in the order of `intents`.
   */
  reserveNotice(intents: readonly Intent[]): Promise<ReserveResult[]>;
  get(noticeId: string, channel: Channel): Promise<Intent | undefined>;
  /** Every channel of a notice, in channel order. */
  getNotice(noticeId: string): Promise<Intent[]>;
  /** One conditional write: expected state + version, new fields, one appended record. */
  apply(plan: TransitionPlan): Promise<TransitionResult>;
  /**
   * Moves `dueAt` without a transition (e.g. an `unknown` row the provider could not answer
   * for yet). Conditional on the version, so it never races a transition.
   */
  defer(noticeId: string, channel: Channel, expectedVersion: number, dueAt: number): Promise<boolean>;
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

  /** The channel's throttle gate: epoch ms until which no worker should call the provider. */
  readGate(channel: Channel): Promise<number | undefined>;
  /**
   * Closes the gate until `untilMs`, unless it is already closed until later; true when this call
   * moved it (the hold it opens is new), false when a later closure was already recorded.
   */
  closeGate(channel: Channel, untilMs: number, reason: string): Promise<boolean>;

  /**
   * Records a provider batch call before it is made (conditional: a batch id is written once).
   * Its members are durable with it, so a crash anywhere after this write leaves a batch the
   * reconciler can replay under its key; no record means the call was never made.
   */
  recordBatch(batch: SendBatch): Promise<void>;
  /** The batch record, or undefined when none was written (the call was never made). */
  getBatch(id: string): Promise<SendBatch | undefined>;

  /**
   * Records the check values this process holds where the table has none yet (the first user of
   * the table sets them), and returns what is recorded and which of `mine` differ from it.
   */
  checkKeys(
    mine: KeyChecks,
  ): Promise<{ readonly recorded: KeyChecks; readonly mismatched: readonly ('fingerprint' | 'envelope')[] }>;

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
