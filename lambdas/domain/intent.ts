import type { Channel } from './channel.ts';
import type { Destination } from './destination.ts';
import type { Priority } from './priority.ts';
import { type IntentState, Reason } from './state-machine.ts';

/*
 * The ledger row in domain terms: what it holds, when the reconciler next owes it a look, and
 * how intake creates it. How a row moves is ./transition.ts (`planTransition`, the one place a
 * transition is built); what a send attempt does to it is ./attempt.ts. Dependencies run one
 * way: state-machine.ts ← intent.ts ← transition.ts ← attempt.ts.
 */

/**
 * One entry of a row's history. Appended in the same write as the state change; never rewritten.
 * A *fact* record has `from === to`: something the provider reported after the row was terminal
 * (a complaint after `delivered`, a delivery after `failed`) that changes no state but belongs to
 * the story (see `planFact`). The other `from === to` records keep an open row's state: an
 * `unknown` row's escalation to a person (`unknown → unknown`, reason `unknown_escalated`:
 * `planUnknownEscalation`), a deadline-risk warning (`planDeadlineRisk`) and a wait (`planWait`,
 * ./waits.ts: the channel is held, or the provider's pre-send check was not answered).
 */
export interface TransitionRecord {
  readonly seq: number;
  /** Epoch milliseconds. */
  readonly at: number;
  /** `null` only on the intake record that created the row. */
  readonly from: IntentState | null;
  readonly to: IntentState;
  readonly reason: Reason;
  readonly attempt?: number;
  readonly detail?: string;
  /**
   * Who wrote it, when a person or a business caller did (an operator's resolution, a cancel):
   * the caller's IAM principal ARN in AWS; on the local stack the request's `actor`, else `local`
   * (`operatorActor` in edge/operator-requests.ts, the rule suppression records follow too). Absent on the system's
   * own moves (worker, reconciler, provider events), which are most records: rows stay small.
   */
  readonly actor?: string;
}

/** SMS length facts reported at intake so operators see cost and truncation risk. */
export interface SmsShape {
  readonly encoding: 'GSM-7' | 'UCS-2';
  readonly segments: number;
  readonly characters: number;
}

/** The durable intent for one (noticeId, channel): the ledger row, in domain terms. */
export interface Intent {
  readonly noticeId: string;
  readonly channel: Channel;
  readonly eventId: string;
  readonly eventType: string;
  readonly recipientId: string;
  readonly templateId: string;
  readonly templateVersion: string;
  /** Keyed digest of template, version, variables and destination: equal digest = same intent. */
  readonly contentDigest: string;
  /**
   * Short keyed digest per variable (identity.ts `variableDigests`), so a conflict can name the
   * variables that differ. Absent on rows written before they existed.
   */
  readonly variableDigests?: Readonly<Record<string, string>> | undefined;
  readonly destination: Destination;
  readonly createdAt: number;
  readonly deadline: number;
  readonly sms?: SmsShape | undefined;
  /** The lane it waits in (docs/architecture.md §11); absent on rows written before: `standard`. */
  readonly priority?: Priority | undefined;
  /**
   * The IAM principal whose request reserved the row, in normal form (contract/principals.ts: a
   * role, never a session): a submitter sees and acts on its own rows only (./caller.ts). Absent on
   * rows written before callers were recorded, and on intake without a caller (benchmarks, use-case
   * tests): such rows are operators' and auditors' alone.
   */
  readonly submitter?: string | undefined;

  readonly state: IntentState;
  /** Equals the seq of the last transition record; every write is conditional on it. */
  readonly version: number;
  readonly attempts: number;
  readonly provider?: string | undefined;
  readonly providerReceiptId?: string | undefined;
  readonly nextAttemptAt?: number | undefined;
  readonly leaseOwner?: string | undefined;
  readonly leaseExpiresAt?: number | undefined;
  /**
   * The provider batch call this attempt rides in (docs/architecture.md §4, "One dispatch path"): set by the
   * claim, before the call, and kept while the attempt's outcome is open (`sending`, `unknown`), so
   * a lookup finds the batch's durable record (its members and idempotency key) and replays it.
   */
  readonly batch?: string | undefined;
  /**
   * When the reconciler must next look at this row; present only while unresolved, which
   * is what makes the open-intent index sparse.
   */
  readonly dueAt?: number | undefined;
  /**
   * Out of the open index although `dueAt` is set (docs/table-design.md "Watched rows"): intake
   * sent a delayed watch message for the row before reserving it, and the row is on the happy path
   * (reserved → sending → accepted, nothing pending). The watch puts it into the index if it still
   * owes something when it fires (`INDEX_WATCH_DELAY_MS` after intake); any move off the happy path
   * puts it in at once (`planTransition`, `planSameState`), and so does every `defer`. Absent: the
   * row is in the index whenever it has a `dueAt` (rows reserved by anything but intake, rows
   * written before watches existed). Stored as the absence of the index's partition key.
   */
  readonly watched?: true | undefined;
  /** Sealed send envelope (destination + variables); kept only while a send may still happen. */
  readonly envelope?: string | undefined;
  /**
   * Set in the same write that fails the row with an escalating reason, cleared once the
   * escalation is published: an escalation lost to a failed publish or a crash is retried by the
   * reconciler (the row stays in the open index, due, until then).
   */
  readonly escalationPending?: boolean | undefined;
  /**
   * When this row's current `unknown` was escalated to a person (UNKNOWN_POLICY=escalate, after
   * UNKNOWN_GRACE_MS without an answer: `planUnknownEscalation`). It stays `unknown`, unresolved,
   * until someone resolves it or its deadline passes; any move out of `unknown` clears this (the
   * `unknown_escalated` record stays in the history).
   */
  readonly escalatedAt?: number | undefined;
  /**
   * When the row entered `accepted` (set by that transition, dropped when it leaves): the start of
   * its delivery follow-up (domain/follow-up.ts), projected into the open index so the
   * awaiting-report gauge is read from the index alone. Older rows have none; their acceptance
   * record says it.
   */
  readonly acceptedAt?: number | undefined;
  /**
   * Send window (./send-window.ts): not claimed before this time (the window's opening). Fixed at
   * intake; the row is due then, so the reconciler sends its message when the window opens.
   */
  readonly notBefore?: number | undefined;
  /** Channel fallback (./fallback.ts): what the fallback reserves, fixed at intake. */
  readonly fallback?: FallbackSpec | undefined;
  /** While the fallback is pending: when it is owed at the latest (intake + `within`). */
  readonly fallbackDueAt?: number | undefined;
  /** While the fallback is pending: the `to` channel's sealed envelope (destination + variables). */
  readonly fallbackEnvelope?: string | undefined;
  readonly transitions: readonly TransitionRecord[];
}

/**
 * Fixed on the `from` row of a channel fallback (./fallback.ts): the `to` row as it will be
 * reserved — its destination's fingerprint and masked form, its content digest, its SMS shape —
 * never the raw destination. The sealed `to` envelope is the row's mutable `fallbackEnvelope`,
 * kept only while the fallback is pending.
 */
export interface FallbackSpec {
  readonly to: Channel;
  readonly withinMs: number;
  readonly destination: Destination;
  readonly contentDigest: string;
  readonly sms?: SmsShape | undefined;
  /** The recipient's zone, when the request named one: the `to` channel's send window is read in it. */
  readonly timeZone?: string | undefined;
}

/** Reasons that end a pending fallback: the first channel arrived, or the notice was called off. */
function endsFallback(to: IntentState, reason: Reason): boolean {
  return to === 'delivered' || reason === Reason.cancelled;
}

/**
 * The fallback fields after a move of the row to `to` for `reason`: kept while pending, dropped
 * (due time and sealed envelope) once the first channel is delivered or cancelled.
 */
export function fallbackAfterMove(
  row: Pick<Intent, 'fallbackDueAt' | 'fallbackEnvelope'>,
  to: IntentState,
  reason: Reason,
): Pick<Intent, 'fallbackDueAt' | 'fallbackEnvelope'> {
  if (row.fallbackDueAt === undefined || endsFallback(to, reason)) {
    return { fallbackDueAt: undefined, fallbackEnvelope: undefined };
  }
  return { fallbackDueAt: row.fallbackDueAt, fallbackEnvelope: row.fallbackEnvelope };
}

/**
 * A row's due time with its pending fallback: no later than the fallback's due time, and due at
 * once when the first channel has ended without delivery (the fallback is owed now). Every due
 * time a row is given passes through here (transitions, same-state records, deferrals), so a
 * pending fallback is never left unlooked-at.
 */
export function dueWithFallback(
  row: Pick<Intent, 'fallbackDueAt' | 'state'>,
  dueAt: number | undefined,
  at: number,
): number | undefined {
  if (row.fallbackDueAt === undefined) return dueAt;
  const owed = row.state === 'failed' || row.state === 'suppressed' ? at : row.fallbackDueAt;
  return dueAt === undefined ? owed : Math.min(dueAt, owed);
}

/** A deferral's due time (`defer`: no record), no later than a pending fallback is owed. */
export function deferredDueAt(row: Pick<Intent, 'fallbackDueAt' | 'state'>, at: number): number {
  return dueWithFallback(row, at, at) ?? at;
}

/** Whether the row is in the open index: it owes something (`dueAt`) and is not `watched`. */
export function inOpenIndex(row: Pick<Intent, 'dueAt' | 'watched'>): boolean {
  return row.dueAt !== undefined && row.watched !== true;
}

/** The states of the happy path, where a watched row may stay out of the open index. */
const WATCHED_STATES: ReadonlySet<IntentState> = new Set(['reserved', 'sending', 'accepted']);

/**
 * Whether a watched row stays out of the open index after a move (docs/table-design.md "Watched
 * rows"): only while it is on the happy path (reserved → sending → accepted) with nothing pending
 * (no escalation, no channel fallback, no send-window hold). Once in the index a row stays there
 * until it owes nothing; a resolved row owes nothing and is in no index either way.
 */
export function staysWatched(
  row: Pick<Intent, 'watched'>,
  next: Pick<Intent, 'state' | 'escalationPending' | 'fallbackDueAt' | 'notBefore' | 'dueAt'>,
): true | undefined {
  return row.watched === true &&
    next.dueAt !== undefined &&
    WATCHED_STATES.has(next.state) &&
    next.escalationPending !== true &&
    next.fallbackDueAt === undefined &&
    next.notBefore === undefined
    ? true
    : undefined;
}

/**
 * The row intake reserves once its watch message is sent (`INDEX_WATCH_DELAY_MS` = `delayMs`):
 * watched, unless it needs the reconciler before the watch fires — a send-window hold (sent when
 * the window opens), a channel fallback (owed by its `within`), a deadline-risk warning (published
 * by the reconciler when intake could not), or a deadline sooner than the watch (failed and
 * escalated at the deadline if nothing sends it).
 */
export function watchedAtIntake(intent: Intent, delayMs: number): Intent {
  const watched = staysWatched({ watched: true }, intent);
  if (!watched || intent.fallback !== undefined || intent.deadline <= intent.createdAt + delayMs)
    return intent;
  return { ...intent, watched };
}

/** Fields a transition may change; everything else is fixed at intake. */
export const MUTABLE_INTENT_FIELDS = [
  'state',
  'version',
  'attempts',
  'provider',
  'providerReceiptId',
  'nextAttemptAt',
  'leaseOwner',
  'leaseExpiresAt',
  'batch',
  'dueAt',
  'watched',
  'envelope',
  'escalationPending',
  'escalatedAt',
  'acceptedAt',
  'fallbackDueAt',
  'fallbackEnvelope',
] as const satisfies readonly (keyof Intent)[];

export type MutableIntentField = (typeof MUTABLE_INTENT_FIELDS)[number];

export interface LedgerTiming {
  /** `SEND_LEASE_MS`: lease length, and how long a reserved/overdue row may wait before re-enqueue. */
  readonly leaseMs: number;
}

/**
 * The next time the reconciler owes this row a look, or undefined once nothing is owed.
 *
 *   reserved         entered + lease    (message lost? re-enqueue)
 *   sending          lease expiry, or its earlier due time (worker died? → unknown)
 *   retry_scheduled  next attempt + lease (schedule lost? re-enqueue)
 *   unknown          now                (ask the provider)
 *   accepted         the due time it already had (owed a final delivery report: follow-up)
 *
 * Capped by the deadline (but for `unknown` and `accepted`), so an expiring row is found even if
 * nothing else is due.
 */
export function nextDueAt(
  state: IntentState,
  fields: {
    enteredAt: number;
    deadline: number;
    leaseExpiresAt?: number | undefined;
    nextAttemptAt?: number | undefined;
    previousDueAt?: number | undefined;
    /** A held row's send-window opening: a reserved row is due then, not a lease after intake. */
    notBefore?: number | undefined;
  },
  timing: LedgerTiming,
): number | undefined {
  let due: number;
  switch (state) {
    case 'reserved':
      due =
        fields.notBefore !== undefined && fields.notBefore > fields.enteredAt
          ? fields.notBefore
          : fields.enteredAt + timing.leaseMs;
      break;
    case 'sending': {
      const leaseEnd = fields.leaseExpiresAt ?? fields.enteredAt + timing.leaseMs;
      // Keep the earlier due time when there is one: the index key then does not move on
      // the claim, which spares two index writes per channel on the hot path. The reconciler
      // may look at the row before its lease ends; it leaves a live lease alone.
      due =
        fields.previousDueAt !== undefined && fields.previousDueAt <= leaseEnd
          ? fields.previousDueAt
          : leaseEnd;
      break;
    }
    case 'retry_scheduled':
      due = (fields.nextAttemptAt ?? fields.enteredAt) + timing.leaseMs;
      break;
    case 'unknown':
      // Not capped by the deadline: an unknown outcome is settled (or escalated) within the
      // grace period; the deadline only stops resends.
      return fields.enteredAt;
    case 'accepted':
      // Still owed something: a final delivery report (docs/architecture.md §3 "Delivery
      // follow-up"). The due time it had is kept, so the outcome write moves no index key (the
      // report that usually follows within seconds takes the row out); the reconciler, finding
      // the row due, computes its follow-up time from the acceptance record (domain/follow-up.ts).
      return fields.previousDueAt ?? fields.enteredAt + timing.leaseMs;
    default:
      return undefined;
  }
  return Math.min(due, fields.deadline);
}

/** What intake knows about a new intent: every fixed field, plus the sealed envelope. */
export type NewIntentInput = Pick<
  Intent,
  | 'noticeId'
  | 'channel'
  | 'eventId'
  | 'eventType'
  | 'recipientId'
  | 'templateId'
  | 'templateVersion'
  | 'contentDigest'
  | 'variableDigests'
  | 'destination'
  | 'createdAt'
  | 'deadline'
  | 'sms'
  | 'priority'
  | 'submitter'
> & { readonly envelope: string };

/**
 * The row as intake records it: `reserved`, version 1, one `intake` record (`fallback` for a row a
 * channel fallback reserves, its evidence in `detail`).
 */
export function createIntent(
  input: NewIntentInput,
  timing: LedgerTiming,
  origin: { readonly reason: Reason; readonly detail?: string } = { reason: Reason.intake },
): Intent {
  const record: TransitionRecord = {
    seq: 1,
    at: input.createdAt,
    from: null,
    to: 'reserved',
    reason: origin.reason,
    ...(origin.detail !== undefined ? { detail: origin.detail } : {}),
  };
  return {
    ...input,
    state: 'reserved',
    version: 1,
    attempts: 0,
    dueAt: nextDueAt('reserved', { enteredAt: input.createdAt, deadline: input.deadline }, timing),
    transitions: [record],
  };
}

/** Two requests describe the same intent when their content digests match (see `contentDigest`). */
export function isSameContent(a: Pick<Intent, 'contentDigest'>, b: Pick<Intent, 'contentDigest'>): boolean {
  return a.contentDigest === b.contentDigest;
}
