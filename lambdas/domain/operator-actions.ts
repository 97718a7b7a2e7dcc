import { planRetryOrGiveUp } from './attempt.ts';
import type { Intent, LedgerTiming } from './intent.ts';
import type { RandomSource, RetryPolicy } from './retry-policy.ts';
import { type IntentState, isTerminal, Reason } from './state-machine.ts';
import { planTransition, type TransitionPlan } from './transition.ts';

/**
 * What people may do to a ledger row, as pure decisions (docs/operators.md).
 * Both actions are recorded like any other move: one transition record, stamped with the
 * person's `actor` and their free-text reason in `detail`; nothing is rewritten.
 */

/** What an operator learned about an ambiguous attempt, from outside the ledger. */
export type ResolutionOutcome = 'accepted' | 'not_sent';

export interface ResolutionRequest {
  readonly outcome: ResolutionOutcome;
  /** Why the operator concluded this (1–500 characters, checked at the edge). */
  readonly reason: string;
  /** What they saw (a console screenshot id, a support ticket); optional. */
  readonly evidence?: string | undefined;
  readonly actor: string;
  readonly now: number;
}

export interface OperatorContext {
  readonly timing: LedgerTiming;
  readonly policy: RetryPolicy;
  readonly random: RandomSource;
}

export type ResolutionDecision =
  | { readonly kind: 'transition'; readonly plan: TransitionPlan }
  /** Only `unknown` rows are resolved by people; any other state answers 409, row unchanged. */
  | { readonly kind: 'not_unknown'; readonly state: IntentState };

/** The record's `detail`: the person's words, then their evidence. */
export function operatorDetail(reason: string, evidence?: string): string {
  return evidence === undefined ? reason : `${reason} | evidence: ${evidence}`;
}

/**
 * Settles an `unknown` row on an operator's word:
 *   accepted → `accepted`, reason `operator_confirmed_accepted` (no receipt id needed: a timeout
 *              never returned one; the confirmation is the fact instead);
 *   not_sent → a deliberate resend: `retry_scheduled` due now, reason `operator_confirmed_not_sent`,
 *              its attempt counted like any other (the next claim increments `attempts`), when the
 *              attempt budget and the deadline allow; otherwise `failed` with `attempts_exhausted`
 *              / `deadline_exceeded`, the operator's words in the detail.
 */
export function planResolution(
  intent: Intent,
  request: ResolutionRequest,
  ctx: OperatorContext,
): ResolutionDecision {
  if (intent.state !== 'unknown') return { kind: 'not_unknown', state: intent.state };
  const detail = operatorDetail(request.reason, request.evidence);
  if (request.outcome === 'accepted') {
    return {
      kind: 'transition',
      plan: planTransition(
        intent,
        {
          to: 'accepted',
          reason: Reason.operatorConfirmedAccepted,
          at: request.now,
          attempt: intent.attempts,
          detail,
          actor: request.actor,
        },
        ctx.timing,
      ),
    };
  }
  return {
    kind: 'transition',
    plan: planRetryOrGiveUp(
      intent,
      {
        reason: Reason.operatorConfirmedNotSent,
        at: request.now,
        // The person has decided: send again now, not after a backoff.
        retryAfterMs: 0,
        retryDetail: () => detail,
        giveUpDetail: `${Reason.operatorConfirmedNotSent}: ${detail}`,
        actor: request.actor,
      },
      ctx,
    ),
  };
}

export interface CancelRequest {
  readonly reason: string;
  readonly actor: string;
  readonly now: number;
}

/**
 * Per channel:
 *   cancel            reserved / retry_scheduled → `failed`, reason `cancelled` (no send can follow:
 *                     a worker's claim is conditional on the state it read);
 *   already_cancelled ended by an earlier cancel: the answer a replay gets (idempotent);
 *   in_flight         sending / unknown: the provider may hold it, it cannot be called back;
 *   settled           accepted or terminal for another reason: left as it is.
 */
export type CancelDecision =
  | { readonly kind: 'cancel'; readonly plan: TransitionPlan }
  | { readonly kind: 'already_cancelled' }
  | { readonly kind: 'in_flight'; readonly state: IntentState }
  | { readonly kind: 'settled'; readonly state: IntentState };

export function planCancel(intent: Intent, request: CancelRequest, timing: LedgerTiming): CancelDecision {
  switch (intent.state) {
    case 'reserved':
    case 'retry_scheduled':
      return {
        kind: 'cancel',
        plan: planTransition(
          intent,
          {
            to: 'failed',
            reason: Reason.cancelled,
            at: request.now,
            ...(intent.attempts > 0 ? { attempt: intent.attempts } : {}),
            detail: request.reason,
            actor: request.actor,
          },
          timing,
        ),
      };
    case 'sending':
    case 'unknown':
      return { kind: 'in_flight', state: intent.state };
    default: {
      const last = intent.transitions[intent.transitions.length - 1];
      if (isTerminal(intent.state) && last?.reason === Reason.cancelled) return { kind: 'already_cancelled' };
      return { kind: 'settled', state: intent.state };
    }
  }
}

/** Whether a cancel decision leaves the channel called off (the `cancelled` flag of the answer). */
export function isCancelled(decision: CancelDecision): boolean {
  return decision.kind === 'cancel' || decision.kind === 'already_cancelled';
}
