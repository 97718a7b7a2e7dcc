import type { DeferralCause } from '../contract/metrics.ts';
import { planOutcome } from '../domain/attempt.ts';
import type { Intent } from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import { Reason } from '../domain/state-machine.ts';
import { SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import { planTransition, type TransitionPlan } from '../domain/transition.ts';
import { EnvelopeUnreadableError } from '../ports/envelope-sealer.port.ts';
import type { SenderDependencies, WorkerDependencies } from './dependencies.ts';
import { type EscalationOutcome, publishEscalation } from './escalate.ts';
import { type FallbackDependencies, followFallback } from './fallback.ts';

/** What one queue message led to; safe to log (no destination, no content). */
export type DeliveryResult =
  | { readonly kind: 'missing' }
  | { readonly kind: 'left'; readonly why: string; readonly state: string }
  /**
   * Sent back through its queue until `untilMs` without a move: the channel is held, its budget is
   * booked ahead, or the provider's pre-send check was not answered (counted per cause).
   */
  | { readonly kind: 'deferred'; readonly untilMs: number; readonly cause: DeferralCause }
  | {
      readonly kind: 'recorded';
      readonly state: string;
      readonly reason: string;
      readonly attempt: number;
      readonly outcome?: string;
      /** Set when the step failed the row with an escalating reason. */
      readonly escalation?: Exclude<EscalationOutcome, 'none'>;
    };

/**
 * What recording a step needs: the ledger, the retry wake-up, the escalation publisher, and (the
 * reconciler) a queue for the channel a fallback reserves.
 */
export type StepDependencies = Pick<
  WorkerDependencies,
  'store' | 'scheduler' | 'escalations' | 'clock' | 'timing' | 'sendWindows'
> &
  Pick<FallbackDependencies, 'fallbackQueue'>;

export interface FollowedUp {
  readonly row: Intent;
  readonly escalation: EscalationOutcome;
}

/**
 * The one step every path records a transition with (senders, provider calls of any size, the
 * reconciler): one conditional write, then what the new state owes — a retry wake-up at
 * `nextAttemptAt`, an escalation published durably. Undefined when the row moved meanwhile
 * (nothing was written). A lost wake-up costs a delay, not the send: the row is due at
 * nextAttemptAt + lease in the open index and the reconciler re-enqueues it; a failed publish
 * leaves the row's marker for the reconciler's next run.
 */
export async function applyAndFollowUp(
  plan: TransitionPlan,
  deps: StepDependencies,
): Promise<FollowedUp | undefined> {
  const result = await deps.store.apply(plan);
  if (result.kind === 'stale') return undefined;
  let row = result.intent;
  if (row.state === 'retry_scheduled' && row.nextAttemptAt !== undefined) {
    await deps.scheduler.scheduleAttempt(row, row.attempts + 1, row.nextAttemptAt).catch(() => undefined);
  }
  // A move that ends the first channel of a channel fallback reserves the other (./fallback.ts);
  // a failure here leaves the row due, and the reconciler fires it.
  row = (await followFallback(row, deps).catch(() => undefined))?.row ?? row;
  return { row, escalation: await publishEscalation(row, deps) };
}

export function recorded(
  plan: TransitionPlan,
  followed: FollowedUp,
  outcome?: ProviderOutcome,
): DeliveryResult {
  return {
    kind: 'recorded',
    state: plan.next.state,
    reason: plan.record.reason,
    attempt: plan.next.attempts,
    ...(outcome ? { outcome: outcome.kind } : {}),
    ...(followed.escalation !== 'none' ? { escalation: followed.escalation } : {}),
  };
}

/** Applies `plan` to `row` and follows up; a row that moved meanwhile is left as it is. */
export async function applyOrLeave(
  plan: TransitionPlan,
  row: Intent,
  deps: StepDependencies,
): Promise<DeliveryResult> {
  const followed = await applyAndFollowUp(plan, deps);
  return followed ? recorded(plan, followed) : { kind: 'left', why: 'raced', state: row.state };
}

/** What recording a provider's answer needs beyond the step: the retry policy and the hold. */
export type OutcomeDependencies = Pick<
  SenderDependencies,
  'store' | 'scheduler' | 'escalations' | 'clock' | 'timing' | 'retryPolicy' | 'random' | 'operatorHoldMs'
>;

/** Who an attempt went to, and the fallback it may fail over to (lambdas/domain/failover.ts). */
export interface AttemptProvider {
  readonly provider: string;
  readonly failoverTo?: string | undefined;
}

function outcomeContext({ provider, failoverTo }: AttemptProvider, deps: OutcomeDependencies) {
  return {
    now: deps.clock.now(),
    provider,
    failoverTo,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
    operatorHoldMs: deps.operatorHoldMs,
  };
}

/**
 * If our lease expired while we waited on the provider, the reconciler may have moved the
 * row to `unknown` for this very attempt. What we learned still counts: record it from there
 * (`unknown → accepted / retry_scheduled / failed`), so the reconciler need not ask.
 */
function planLateOutcome(
  current: Intent,
  attempt: number,
  outcome: ProviderOutcome,
  provider: AttemptProvider,
  deps: OutcomeDependencies,
) {
  if (current.state !== 'unknown' || current.attempts !== attempt || outcome.kind === 'ambiguous')
    return undefined;
  // planOutcome is written for rows in `sending`; from `unknown` the same targets are legal.
  return planOutcome({ ...current, state: 'unknown' }, outcome, outcomeContext(provider, deps));
}

/**
 * A provider's answer for one claimed row as one conditional write, then its follow-up. If our
 * lease expired meanwhile and the reconciler turned the row into `unknown` for this very
 * attempt, what we learned still counts (`planLateOutcome`).
 */
export async function recordOutcome(
  sending: Intent,
  outcome: ProviderOutcome,
  attempt: AttemptProvider,
  deps: OutcomeDependencies,
): Promise<DeliveryResult> {
  const { provider } = attempt;
  if (outcome.kind === 'rejected' && outcome.suppress) {
    // The provider's own opt-out list holds the destination: ours records it too, with the
    // provider as the source, so no later notice is even tried. Best effort: the next send to
    // the destination meets the same refusal and records it then.
    await deps.store
      .appendSuppression(
        {
          channel: sending.channel,
          fingerprint: sending.destination.fingerprint,
          masked: sending.destination.masked,
        },
        {
          action: SuppressionAction.suppress,
          reason: outcome.suppress.reason,
          source: SuppressionSource.provider,
          actor: provider,
          at: deps.clock.now(),
          code: outcome.code,
        },
      )
      .catch(() => undefined);
  }
  const plan = planOutcome(sending, outcome, outcomeContext(attempt, deps));
  const followed = await applyAndFollowUp(plan, deps);
  if (followed) return recorded(plan, followed, outcome);

  const current = await deps.store.get(sending.noticeId, sending.channel);
  const late = current && planLateOutcome(current, sending.attempts, outcome, attempt, deps);
  const lateFollowed = late && (await applyAndFollowUp(late, deps));
  if (late && lateFollowed) return recorded(late, lateFollowed, outcome);
  return { kind: 'left', why: 'outcome_raced', state: current?.state ?? 'missing' };
}

/** A claimed row whose envelope or rendering failed: `failed` without a provider call. */
export async function failPreparation(
  sending: Intent,
  error: unknown,
  deps: StepDependencies,
): Promise<DeliveryResult> {
  const reason = error instanceof EnvelopeUnreadableError ? Reason.envelopeUnreadable : Reason.renderFailed;
  const plan = planTransition(
    sending,
    {
      to: 'failed',
      reason,
      at: deps.clock.now(),
      attempt: sending.attempts,
      detail: error instanceof Error ? error.name : 'error',
    },
    deps.timing,
  );
  const followed = await applyAndFollowUp(plan, deps);
  return followed ? recorded(plan, followed) : { kind: 'left', why: 'outcome_raced', state: sending.state };
}
