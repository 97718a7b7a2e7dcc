import type { Channel } from './channel.ts';
import type { Destination } from './destination.ts';
import type { ProviderOutcome } from './outcome.ts';
import { TIMEOUT_CODE } from './outcome.ts';
import type { Priority } from './priority.ts';
import { decideRetry, type RandomSource, type RetryPolicy } from './retry-policy.ts';
import {
  assertTransition,
  CLAIMABLE_STATES,
  escalates,
  IllegalTransitionError,
  IncompleteTransitionError,
  type IntentState,
  isTerminal,
  isUnresolved,
  Reason,
} from './state-machine.ts';

/**
 * One entry of a row's history. Appended in the same write as the state change; never rewritten.
 * A *fact* record has `from === to`: something the provider reported after the row was terminal
 * (a complaint after `delivered`, a delivery after `failed`) that changes no state but belongs to
 * the story (see `planFact`). The one other `from === to` record is an `unknown` row's escalation
 * to a person (`unknown → unknown`, reason `unknown_escalated`: `planUnknownEscalation`).
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
   * The provider batch call this attempt rides in (docs/architecture.md §4, "Batches"): set by the
   * claim, before the call, and kept while the attempt's outcome is open (`sending`, `unknown`), so
   * a lookup finds the batch's durable record (its members and idempotency key) and replays it.
   */
  readonly batch?: string | undefined;
  /**
   * When the reconciler must next look at this row; present only while unresolved, which
   * is what makes the open-intent index sparse.
   */
  readonly dueAt?: number | undefined;
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
  readonly transitions: readonly TransitionRecord[];
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
  'envelope',
  'escalationPending',
  'escalatedAt',
  'acceptedAt',
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
  },
  timing: LedgerTiming,
): number | undefined {
  let due: number;
  switch (state) {
    case 'reserved':
      due = fields.enteredAt + timing.leaseMs;
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
  const last = intent.transitions[intent.transitions.length - 1];
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
  const next: Intent = {
    ...merged,
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
    // A pending escalation keeps the row due (now; never later than the deadline, like every
    // time in the open index) until it is published.
    dueAt: escalationPending
      ? Math.min(at, intent.deadline)
      : nextDueAt(
          change.to,
          {
            enteredAt: at,
            deadline: intent.deadline,
            leaseExpiresAt,
            nextAttemptAt,
            previousDueAt: intent.dueAt,
          },
          timing,
        ),
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
 * one conditional write on the version read: facts, the end of a follow-up, and the escalations
 * an open row carries without moving (`planUnknownEscalation`, `planDeadlineRisk`).
 */
export function planSameState(
  intent: Intent,
  record: TransitionRecord,
  changes: Partial<Intent> = {},
): TransitionPlan {
  return {
    expected: { state: intent.state, version: intent.version },
    record,
    next: { ...intent, ...changes, version: record.seq, transitions: [...intent.transitions, record] },
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

/** The fact records of a row (records that changed no state). */
export function factsOf(intent: Pick<Intent, 'transitions'>): TransitionRecord[] {
  return intent.transitions.filter((t) => t.from === t.to && !isUnknownEscalation(t));
}

export type ClaimDecision =
  | { readonly kind: 'claim'; readonly plan: TransitionPlan }
  | { readonly kind: 'leave'; readonly why: 'not_claimable' | 'not_due_yet' | 'past_deadline' };

/**
 * Whether a worker holding a queue message for this row may start an attempt. Any state
 * but reserved/retry_scheduled means someone else owns the next step: leave it alone.
 */
export function decideClaim(
  intent: Intent,
  ctx: {
    now: number;
    workerId: string;
    timing: LedgerTiming;
    provider?: string | undefined;
    /** The batch call this attempt will ride in, recorded by the claim itself (before the call). */
    batch?: string | undefined;
    /** On the claim record (e.g. what the provider's suppression check answered). */
    detail?: string | undefined;
  },
): ClaimDecision {
  if (!CLAIMABLE_STATES.includes(intent.state)) return { kind: 'leave', why: 'not_claimable' };
  // Early messages (a duplicate delivery of an old message) must not jump the backoff.
  if (
    intent.state === 'retry_scheduled' &&
    intent.nextAttemptAt !== undefined &&
    intent.nextAttemptAt > ctx.now
  ) {
    return { kind: 'leave', why: 'not_due_yet' };
  }
  if (ctx.now >= intent.deadline) return { kind: 'leave', why: 'past_deadline' };
  const attempt = intent.attempts + 1;
  const plan = planTransition(
    intent,
    {
      to: 'sending',
      reason: Reason.claimed,
      at: ctx.now,
      attempt,
      detail: ctx.detail,
      set: {
        attempts: attempt,
        leaseOwner: ctx.workerId,
        leaseExpiresAt: ctx.now + ctx.timing.leaseMs,
        // The attempt's provider, recorded in the claim itself (no extra write): a lease that
        // expires, and the reconciler's lookup after it, then ask the provider that was called.
        ...(ctx.provider !== undefined ? { provider: ctx.provider } : {}),
        ...(ctx.batch !== undefined ? { batch: ctx.batch } : {}),
      },
    },
    ctx.timing,
  );
  return { kind: 'claim', plan };
}

export interface OutcomeContext {
  readonly now: number;
  readonly provider: string;
  readonly policy: RetryPolicy;
  readonly random: RandomSource;
  readonly timing: LedgerTiming;
  /**
   * `OPERATOR_HOLD_MS`: how long a channel is held after an `operator_action_required` answer
   * that names no time of its own.
   */
  readonly operatorHoldMs?: number | undefined;
}

/** Default of `OPERATOR_HOLD_MS` for callers that give none. */
export const DEFAULT_OPERATOR_HOLD_MS = 15 * 60_000;

export interface RetryChange {
  readonly reason: Reason;
  readonly at: number;
  /** The provider's advice, when it gave one. */
  readonly retryAfterMs?: number | undefined;
  /** Detail of the `retry_scheduled` record, given the chosen delay. */
  readonly retryDetail: (delayMs: number, basis: 'retry_after' | 'backoff') => string | undefined;
  /** Detail of the `failed` record when attempts or time have run out. */
  readonly giveUpDetail: string;
  readonly actor?: string | undefined;
  readonly set?: TransitionChange['set'];
}

/**
 * The one place a row is put back on the retry path: `retry_scheduled` at the time
 * `decideRetry` chooses, or `failed` (`attempts_exhausted` / `deadline_exceeded`) when it says
 * stop. Used for retryable outcomes and for the reconciler's "not sent" conclusions alike.
 */
export function planRetryOrGiveUp(
  intent: Intent,
  change: RetryChange,
  ctx: { readonly policy: RetryPolicy; readonly random: RandomSource; readonly timing: LedgerTiming },
): TransitionPlan {
  const decision = decideRetry({
    attempt: intent.attempts,
    now: change.at,
    deadline: intent.deadline,
    retryAfterMs: change.retryAfterMs,
    policy: ctx.policy,
    random: ctx.random,
  });
  const common = { at: change.at, attempt: intent.attempts, actor: change.actor };
  if (decision.kind === 'give_up') {
    return planTransition(
      intent,
      { ...common, to: 'failed', reason: decision.reason, detail: change.giveUpDetail, set: change.set },
      ctx.timing,
    );
  }
  return planTransition(
    intent,
    {
      ...common,
      to: 'retry_scheduled',
      reason: change.reason,
      detail: change.retryDetail(decision.delayMs, decision.basis),
      set: { ...change.set, nextAttemptAt: decision.at },
    },
    ctx.timing,
  );
}

function retryAfterOutcome(
  intent: Intent,
  ctx: OutcomeContext,
  reason: Reason,
  code: string,
  retryAfterMs: number | undefined,
): TransitionPlan {
  return planRetryOrGiveUp(
    intent,
    {
      reason,
      at: ctx.now,
      retryAfterMs,
      retryDetail: (delayMs, basis) => `${code}; retry in ${delayMs} ms (${basis})`,
      giveUpDetail: `${reason}: ${code}`,
      set: { provider: ctx.provider },
    },
    ctx,
  );
}

/** Maps the typed outcome of the current attempt (row in `sending`) to its one transition. */
export function planOutcome(intent: Intent, outcome: ProviderOutcome, ctx: OutcomeContext): TransitionPlan {
  const attempt = intent.attempts;
  switch (outcome.kind) {
    case 'accepted':
      return planTransition(
        intent,
        {
          to: 'accepted',
          reason: Reason.providerAccepted,
          at: ctx.now,
          attempt,
          set: { provider: ctx.provider, providerReceiptId: outcome.receiptId },
        },
        ctx.timing,
      );
    case 'retryable':
      return retryAfterOutcome(
        intent,
        ctx,
        outcome.throttled ? Reason.providerThrottled : Reason.providerUnavailable,
        outcome.code,
        outcome.retryAfterMs,
      );
    case 'rejected':
      if (!outcome.permanent) {
        return retryAfterOutcome(intent, ctx, Reason.providerRejected, outcome.code, undefined);
      }
      return planTransition(
        intent,
        {
          to: 'failed',
          reason: Reason.providerRejected,
          at: ctx.now,
          attempt,
          detail: outcome.code,
          set: { provider: ctx.provider },
        },
        ctx.timing,
      );
    case 'operator_action_required': {
      // Nothing was sent and the cause is our account: the attempt is given back (a person will
      // fix the account; the notice must not run out of attempts meanwhile), the row waits for
      // the hold, never past its deadline (the reconciler fails it there, escalated), and the
      // record escalates (planTransition sets the durable marker).
      const holdMs = outcome.retryAfterMs ?? ctx.operatorHoldMs ?? DEFAULT_OPERATOR_HOLD_MS;
      return planTransition(
        intent,
        {
          to: 'retry_scheduled',
          reason: Reason.operatorActionRequired,
          at: ctx.now,
          attempt,
          detail: `${outcome.code}; channel held ${holdMs} ms, attempt not counted`,
          set: {
            provider: ctx.provider,
            attempts: Math.max(0, attempt - 1),
            nextAttemptAt: Math.min(ctx.now + holdMs, intent.deadline),
          },
        },
        ctx.timing,
      );
    }
    case 'ambiguous':
      return planTransition(
        intent,
        {
          to: 'unknown',
          reason: outcome.code === TIMEOUT_CODE ? Reason.providerTimeout : Reason.providerAmbiguous,
          at: ctx.now,
          attempt,
          detail: outcome.code,
          set: { provider: ctx.provider },
        },
        ctx.timing,
      );
  }
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
> & { readonly envelope: string };

/** The row as intake records it: `reserved`, version 1, one `intake` record. */
export function createIntent(input: NewIntentInput, timing: LedgerTiming): Intent {
  const record: TransitionRecord = {
    seq: 1,
    at: input.createdAt,
    from: null,
    to: 'reserved',
    reason: Reason.intake,
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
