import { planRetryOrGiveUp } from './attempt.ts';
import type { Intent, LedgerTiming } from './intent.ts';
import type { RandomSource, RetryPolicy } from './retry-policy.ts';
import { Reason } from './state-machine.ts';
import { planTransition, planUnknownEscalation, type TransitionPlan } from './transition.ts';
import { planDeadlineExceeded } from './waits.ts';

/** What a provider lookup concluded about an ambiguous attempt. */
export type LookupVerdict =
  | {
      readonly kind: 'found';
      readonly receiptId: string;
      readonly detail?: string;
      /** The provider that answered, recorded on the row when it had none (older rows). */
      readonly provider?: string;
    }
  /** The provider proves it holds no such message (a complete listing without a match). */
  | { readonly kind: 'absent'; readonly detail?: string }
  /** The provider cannot tell (yet): no lookup API, partial listing, lookup failed. */
  | { readonly kind: 'undecidable'; readonly detail?: string };

/**
 * After `UNKNOWN_GRACE_MS` without an answer:
 *   escalate  hand it to a person and keep it `unknown` (record `unknown_escalated`, an escalation
 *             event): still unresolved, still asked about, until an operator resolves it, the
 *             provider answers, or its deadline passes (then `failed`, `unknown_unresolved`). No
 *             resend: a duplicate is impossible, a miss is possible until someone acts.
 *   fail      fail it at once (`failed`, `unknown_unresolved`, escalated): nothing is owed any more.
 *   resend    a deliberate new attempt with the reason recorded (a miss is impossible, a
 *             duplicate possible).
 */
export const UNKNOWN_POLICIES = ['escalate', 'fail', 'resend'] as const;
export type UnknownPolicy = (typeof UNKNOWN_POLICIES)[number];

export interface ReconcileContext {
  readonly now: number;
  readonly timing: LedgerTiming;
  readonly unknownGraceMs: number;
  readonly unknownPolicy: UnknownPolicy;
  /** How long to wait before asking the provider again about the same unknown row. */
  readonly recheckMs: number;
  readonly policy: RetryPolicy;
  readonly random: RandomSource;
}

export type ReconcileAction =
  | { readonly kind: 'none' }
  | { readonly kind: 'transition'; readonly plan: TransitionPlan; readonly escalate: boolean }
  /** The queue message or schedule was lost (or never sent): send a new one and push dueAt. */
  | { readonly kind: 'reenqueue'; readonly nextDueAt: number }
  | { readonly kind: 'lookup' }
  /** Accepted, still owed a final delivery report (domain/follow-up.ts decides what to do). */
  | { readonly kind: 'follow_up' };

/** The moment the row entered its current state (its last record). */
function enteredAt(row: Intent): number {
  return row.transitions[row.transitions.length - 1]?.at ?? row.createdAt;
}

/**
 * When an `unknown` row's attempt ended in doubt: the record that moved it into `unknown` (an
 * escalation record after it keeps the state, so it does not restart the grace period).
 */
export function unknownSince(row: Intent): number {
  const entered = row.transitions.findLast((t) => t.to === 'unknown' && t.from !== 'unknown');
  return entered?.at ?? enteredAt(row);
}

/**
 * A row a channel fallback just reserved (its one record is the `fallback` intake): its message
 * is owed now, since the process that reserved it may not reach its channel's queue.
 */
function reservedByFallback(row: Intent): boolean {
  return row.transitions.length === 1 && row.transitions[0]?.reason === Reason.fallback;
}

/**
 * The reconciler's decision for one due row, before any provider lookup. Nothing here
 * resends an attempt whose outcome is unknown: `sending` past its lease becomes `unknown`,
 * and `unknown` is only ever asked about.
 */
export function decideReconcile(row: Intent, ctx: ReconcileContext): ReconcileAction {
  const { now } = ctx;
  switch (row.state) {
    case 'sending':
      if (row.leaseExpiresAt !== undefined && row.leaseExpiresAt > now) return { kind: 'none' };
      return {
        kind: 'transition',
        escalate: false,
        plan: planTransition(
          row,
          {
            to: 'unknown',
            reason: Reason.leaseExpired,
            at: now,
            attempt: row.attempts,
            detail: row.leaseOwner,
          },
          ctx.timing,
        ),
      };
    case 'unknown':
      return { kind: 'lookup' };
    case 'accepted':
      return { kind: 'follow_up' };
    case 'reserved':
    case 'retry_scheduled': {
      if (now >= row.deadline) {
        return {
          kind: 'transition',
          escalate: true,
          // Says why: the hold or check it last waited on, or that no attempt was made.
          plan: planDeadlineExceeded(row, now, ctx.timing),
        };
      }
      // A row held for its send window is owed its message when the window opens.
      const due =
        row.state === 'reserved'
          ? row.notBefore !== undefined && row.notBefore > row.createdAt
            ? row.notBefore
            : reservedByFallback(row)
              ? row.createdAt
              : enteredAt(row) + ctx.timing.leaseMs
          : (row.nextAttemptAt ?? now) + ctx.timing.leaseMs;
      if (due > now) return { kind: 'none' };
      return { kind: 'reenqueue', nextDueAt: Math.min(now + ctx.timing.leaseMs, row.deadline) };
    }
    default:
      return { kind: 'none' };
  }
}

/** Turns a lookup verdict on an `unknown` row into its transition, or a later recheck. */
export function decideAfterLookup(
  row: Intent,
  verdict: LookupVerdict,
  ctx: ReconcileContext,
):
  | { readonly kind: 'transition'; readonly plan: TransitionPlan; readonly escalate: boolean }
  | { readonly kind: 'recheck'; readonly at: number } {
  const { now } = ctx;
  if (verdict.kind === 'found') {
    return {
      kind: 'transition',
      escalate: false,
      plan: planTransition(
        row,
        {
          to: 'accepted',
          reason: Reason.reconciledAccepted,
          at: now,
          attempt: row.attempts,
          detail: verdict.detail,
          set: {
            providerReceiptId: verdict.receiptId,
            ...(row.provider === undefined && verdict.provider !== undefined
              ? { provider: verdict.provider }
              : {}),
          },
        },
        ctx.timing,
      ),
    };
  }
  const since = unknownSince(row);
  const graceOver = now - since >= ctx.unknownGraceMs;
  // A "not found" right after the call may only mean the provider has not indexed it yet.
  const provablyNotSent = verdict.kind === 'absent' && graceOver;
  if (provablyNotSent || (graceOver && ctx.unknownPolicy === 'resend')) {
    const reason = provablyNotSent ? Reason.reconciledNotSent : Reason.unknownUnresolved;
    const detail = provablyNotSent
      ? verdict.detail
      : `resent by policy after ${ctx.unknownGraceMs} ms without an answer`;
    const plan = planRetryOrGiveUp(
      row,
      { reason, at: now, retryDetail: () => detail, giveUpDetail: reason },
      ctx,
    );
    return { kind: 'transition', escalate: plan.next.state === 'failed', plan };
  }
  if (graceOver) {
    const still = `outcome still unknown${verdict.detail ? `: ${verdict.detail}` : ''}`;
    if (ctx.unknownPolicy === 'escalate' && now < row.deadline) {
      // Handed to a person once; afterwards asked about less often (the grace period), until
      // the deadline ends it. A pending escalation's row is due at the next run.
      if (row.escalatedAt !== undefined) {
        return { kind: 'recheck', at: Math.min(now + ctx.unknownGraceMs, row.deadline) };
      }
      return {
        kind: 'transition',
        escalate: true,
        plan: planUnknownEscalation(row, {
          at: now,
          detail: `${still}; waiting for an operator's resolution`,
          dueAt: Math.min(now + ctx.recheckMs, row.deadline),
        }),
      };
    }
    return {
      kind: 'transition',
      escalate: true,
      plan: planTransition(
        row,
        {
          to: 'failed',
          reason: Reason.unknownUnresolved,
          at: now,
          attempt: row.attempts,
          detail: row.escalatedAt !== undefined ? `${still}; unresolved by the deadline` : still,
        },
        ctx.timing,
      ),
    };
  }
  // The deadline stops resends, not learning: a row past its deadline is still asked about until
  // the grace period ends, so a late provider answer is recorded rather than contradicted.
  return { kind: 'recheck', at: Math.min(now + ctx.recheckMs, since + ctx.unknownGraceMs) };
}
