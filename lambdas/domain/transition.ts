import {
  dueWithFallback,
  fallbackAfterMove,
  type Intent,
  type LedgerTiming,
  nextDueAt,
  staysWatched,
  type TransitionRecord,
} from './intent.ts';
import {
  assertTransition,
  escalates,
  IllegalTransitionError,
  IncompleteTransitionError,
  type IntentState,
  isTerminal,
  isUnresolved,
  Reason,
} from './state-machine.ts';

/*
 * How a row moves: `planTransition` builds every state change (checked against the state
 * machine, with the fields each state must carry), and `planSameState` every record that keeps
 * the state (facts, the end of a follow-up, an `unknown` row's escalation). Each plan is one
 * conditional write on the state and version it was made from.
 */

export interface TransitionChange {
  readonly to: IntentState;
  readonly reason: Reason;
  readonly at: number;
  readonly attempt?: number | undefined;
  readonly detail?: string | undefined;
  /** See `TransitionRecord.actor`. */
  readonly actor?: string | undefined;
  readonly set?: Partial<
    Pick<
      Intent,
      | 'attempts'
      | 'provider'
      | 'providerReceiptId'
      | 'nextAttemptAt'
      | 'leaseOwner'
      | 'leaseExpiresAt'
      | 'batch'
    >
  >;
}

/** A checked transition, ready for one conditional write on `expected`. */
export interface TransitionPlan {
  readonly expected: { readonly state: IntentState; readonly version: number };
  readonly record: TransitionRecord;
  readonly next: Intent;
}

/**
 * An operator who saw the message in the provider's console may settle an `unknown` row as
 * `accepted` without the provider's id for it (a timeout never returned one); that row, and its
 * later `delivered`, are then defined by the person's confirmation instead of a receipt.
 */
function confirmedByOperator(intent: Intent, change: TransitionChange): boolean {
  return (
    change.reason === Reason.operatorConfirmedAccepted ||
    intent.transitions.some((record) => record.reason === Reason.operatorConfirmedAccepted)
  );
}

/**
 * A pending deadline-risk warning (lambdas/domain/deadline-risk.ts) survives the row's moves
 * while the row stays unresolved, and goes when the row settles (a notice that made it owes no
 * warning). Other pending escalations of open rows (an `unknown`'s, an operator hold's) are not it.
 */
function riskWarningPending(intent: Intent, to: IntentState): boolean {
  if (
    intent.escalationPending !== true ||
    intent.escalatedAt !== undefined ||
    !isUnresolved(intent.state) ||
    !isUnresolved(to)
  )
    return false;
  // A pending operator hold (its own last record escalates) goes with the row's next move, as before.
  // The waits recorded after it (the hold deferring the row) do not change what it is.
  const last = intent.transitions.findLast((t) => !isWaitRecord(t));
  if (last && last.to === intent.state && escalates(last.to, last.reason)) return false;
  return intent.transitions.some((t) => t.reason === Reason.deadlineAtRisk);
}

/**
 * The single place that builds a transition. Rules that hold for every move:
 * lease fields live only in `sending`, `nextAttemptAt` only in `retry_scheduled`, the send
 * envelope only while unresolved, and `dueAt` is recomputed from the new state.
 */
export function planTransition(
  intent: Intent,
  change: TransitionChange,
  timing: LedgerTiming,
): TransitionPlan {
  assertTransition(intent.state, change.to);
  const merged = { ...intent, ...change.set };
  // Each state's defining facts must come with it, or the row's next action is undefined.
  if (change.to === 'sending' && (merged.leaseOwner === undefined || merged.leaseExpiresAt === undefined)) {
    throw new IncompleteTransitionError(change.to, 'a lease (owner and expiry)');
  }
  if (change.to === 'retry_scheduled' && merged.nextAttemptAt === undefined) {
    throw new IncompleteTransitionError(change.to, 'nextAttemptAt');
  }
  if (
    (change.to === 'accepted' || change.to === 'delivered') &&
    merged.providerReceiptId === undefined &&
    !confirmedByOperator(intent, change)
  ) {
    throw new IncompleteTransitionError(change.to, 'a provider receipt id (or an operator confirmation)');
  }
  const record = nextRecord(intent, change.to, change);
  const { at } = record;
  const leaseOwner = change.to === 'sending' ? merged.leaseOwner : undefined;
  const leaseExpiresAt = change.to === 'sending' ? merged.leaseExpiresAt : undefined;
  const nextAttemptAt = change.to === 'retry_scheduled' ? merged.nextAttemptAt : undefined;
  // A batch is the attempt's: it stays while the attempt's outcome is open, and goes with it.
  const batch = change.to === 'sending' || change.to === 'unknown' ? merged.batch : undefined;
  const escalationPending =
    escalates(change.to, change.reason) || riskWarningPending(intent, change.to) ? true : undefined;
  const fallback = fallbackAfterMove(intent, change.to, change.reason);
  // A pending escalation keeps the row due (now; never later than the deadline, like every
  // time in the open index) until it is published.
  const dueAt = escalationPending
    ? Math.min(at, intent.deadline)
    : dueWithFallback(
        { ...fallback, state: change.to },
        nextDueAt(
          change.to,
          {
            enteredAt: at,
            deadline: intent.deadline,
            leaseExpiresAt,
            nextAttemptAt,
            previousDueAt: intent.dueAt,
            notBefore: intent.notBefore,
          },
          timing,
        ),
        at,
      );
  const next: Intent = {
    ...merged,
    ...fallback,
    state: change.to,
    version: record.seq,
    leaseOwner,
    leaseExpiresAt,
    nextAttemptAt,
    batch,
    envelope: isUnresolved(change.to) ? intent.envelope : undefined,
    escalationPending,
    // Every transition leaves the current `unknown` (or enters a new one): an escalation is over.
    escalatedAt: undefined,
    acceptedAt: change.to === 'accepted' ? at : undefined,
    dueAt,
    // Off the happy path a watched row enters the open index with this very write.
    watched: staysWatched(intent, {
      state: change.to,
      escalationPending,
      fallbackDueAt: fallback.fallbackDueAt,
      notBefore: intent.notBefore,
      dueAt,
    }),
    transitions: [...intent.transitions, record],
  };
  return { expected: { state: intent.state, version: intent.version }, record, next };
}

/** A row keeps at most this many fact records: rows stay small (every write pays per started KB). */
export const MAX_FACTS_PER_ROW = 4;

export interface Fact {
  readonly reason: Reason;
  readonly at: number;
  readonly detail?: string | undefined;
}

/**
 * The record after the row's last one: the next seq, from the current state. A caller's clock
 * reading may predate the last record (a long reconciler run, a provider's own timestamp);
 * history is ordered by seq, so its times must not go backwards either.
 */
export function nextRecord(
  intent: Intent,
  to: IntentState,
  what: {
    readonly at: number;
    readonly reason: Reason;
    readonly attempt?: number;
    readonly detail?: string | undefined;
    readonly actor?: string | undefined;
  },
): TransitionRecord {
  return {
    seq: intent.version + 1,
    at: Math.max(what.at, intent.transitions[intent.transitions.length - 1]?.at ?? what.at),
    from: intent.state,
    to,
    reason: what.reason,
    ...(what.attempt !== undefined ? { attempt: what.attempt } : {}),
    ...(what.detail !== undefined ? { detail: what.detail } : {}),
    ...(what.actor !== undefined ? { actor: what.actor } : {}),
  };
}

/**
 * A record that keeps the row's state (`from === to`), with `changes` to its other fields, as
 * one conditional write on the version read: facts, the end of a follow-up, the escalations an
 * open row carries without moving (`planUnknownEscalation`, `planDeadlineRisk`) and its waits
 * (`planWait`, ./waits.ts).
 */
export function planSameState(
  intent: Intent,
  record: TransitionRecord,
  changes: Partial<Intent> = {},
): TransitionPlan {
  const next = { ...intent, ...changes };
  return {
    expected: { state: intent.state, version: intent.version },
    record,
    next: {
      ...next,
      // A pending fallback keeps the row due by its own time (./intent.ts `dueWithFallback`).
      dueAt: dueWithFallback(next, next.dueAt, record.at),
      // A record that keeps an open row's state (a wait, a warning, an escalation) takes it off
      // the happy path: a watched row enters the open index with it.
      watched: undefined,
      version: record.seq,
      transitions: [...intent.transitions, record],
    },
  };
}

/**
 * Appends a fact to a terminal row: a record with `from === to` (the current state), in the
 * same append-only, seq-ordered history, changing no other field. The timeline stays the whole
 * story (a complaint after `delivered` is there) without reopening a finished row.
 */
export function planFact(intent: Intent, fact: Fact): TransitionPlan {
  if (!isTerminal(intent.state)) {
    // Facts are for finished rows; an open row records what it learns as a transition.
    throw new IllegalTransitionError(intent.state, intent.state);
  }
  return planSameState(intent, nextRecord(intent, intent.state, fact));
}

/**
 * Ends the follow-up of an accepted row that never got a final report: a `delivery_unconfirmed`
 * record (`accepted → accepted`), and the row leaves the open index. It stays `accepted` (the
 * provider took the message; nothing says it failed), so a late report can still move it on.
 */
export function planFollowUpEnd(intent: Intent, at: number, detail: string): TransitionPlan {
  if (intent.state !== 'accepted') throw new IllegalTransitionError(intent.state, intent.state);
  const record = nextRecord(intent, intent.state, { reason: Reason.deliveryUnconfirmed, at, detail });
  return planSameState(intent, record, { dueAt: undefined });
}

/**
 * Escalates an `unknown` row to a person without ending it (UNKNOWN_POLICY=escalate): one record
 * `unknown → unknown`, reason `unknown_escalated`, in the same conditional write that sets
 * `escalatedAt` and the durable `escalationPending` marker (the reconciler publishes the event
 * and clears the marker, as for a failed row) and moves `dueAt`. The row stays unresolved — in
 * the open index, the list of `GET /v1/notices` and the oldest-unresolved gauge — until an
 * operator resolves it, the provider answers, or its deadline passes. It is the one record that
 * keeps an open row's state, and is written at most once per `unknown` stretch.
 */
export function planUnknownEscalation(
  intent: Intent,
  change: { readonly at: number; readonly detail?: string | undefined; readonly dueAt: number },
): TransitionPlan {
  if (intent.state !== 'unknown' || intent.escalatedAt !== undefined) {
    throw new IllegalTransitionError(intent.state, 'unknown');
  }
  const record = nextRecord(intent, 'unknown', {
    at: change.at,
    reason: Reason.unknownEscalated,
    attempt: intent.attempts,
    detail: change.detail,
  });
  return planSameState(intent, record, {
    escalatedAt: record.at,
    escalationPending: true,
    dueAt: change.dueAt,
  });
}

/** Whether a record is an `unknown` row's escalation (`planUnknownEscalation`). */
export function isUnknownEscalation(record: Pick<TransitionRecord, 'from' | 'to' | 'reason'>): boolean {
  return record.from === 'unknown' && record.to === 'unknown' && record.reason === Reason.unknownEscalated;
}

/**
 * Records that keep an open row's state without being a fact (docs/architecture.md §4 "No silent
 * waits"): the row waits on its channel's hold or on a check the provider did not answer.
 */
export const WAIT_REASONS: ReadonlySet<Reason> = new Set([
  Reason.channelHeld,
  Reason.providerCheckUnavailable,
]);

/** Whether a record is a wait (lambdas/domain/waits.ts `planWait`). */
export function isWaitRecord(record: Pick<TransitionRecord, 'from' | 'to' | 'reason'>): boolean {
  return record.from === record.to && WAIT_REASONS.has(record.reason);
}

/**
 * The fact records of a row: records that changed no state on a row past its send (accepted or
 * finished). An open row's same-state records (an `unknown`'s escalation, a deadline-risk
 * warning, a wait) are not facts and do not count against MAX_FACTS_PER_ROW.
 */
export function factsOf(intent: Pick<Intent, 'transitions'>): TransitionRecord[] {
  return intent.transitions.filter((t) => t.from === t.to && !isUnresolved(t.to));
}
