import { dueWithFallback, type Intent, nextDueAt, type TransitionRecord } from '../domain/intent.ts';
import { escalates, isUnresolved, Reason } from '../domain/state-machine.ts';
import { isUnknownEscalation, isWaitRecord } from '../domain/transition.ts';
import type { EscalationDependencies } from './dependencies.ts';

/** What became of a row's escalation: published now, still pending (publish failed), or none owed. */
export type EscalationOutcome = 'published' | 'pending' | 'none';

/**
 * The record a pending escalation is about: the one that failed the row (facts may follow it),
 * on a row still `unknown` its escalation record (UNKNOWN_POLICY=escalate), on a row whose
 * channel is held for an operator the hold (`operator_action_required`), on another open row its
 * deadline-risk warning (docs/architecture.md §11).
 */
function escalatedRecord(row: Intent): TransitionRecord | undefined {
  if (row.state === 'failed')
    return row.transitions.findLast((t) => t.to === 'failed' && t.from !== 'failed');
  if (row.state === 'unknown' && row.escalatedAt !== undefined)
    return row.transitions.findLast(isUnknownEscalation);
  // A held row's waits (recorded after its hold) are not what it escalated.
  const last = row.transitions.findLast((t) => !isWaitRecord(t));
  if (last && last.to === row.state && escalates(last.to, last.reason)) return last;
  // The warning survives the row's moves while it is unresolved (planTransition).
  if (isUnresolved(row.state)) return row.transitions.findLast((t) => t.reason === Reason.deadlineAtRisk);
  return undefined;
}

/**
 * Publishes the escalation a row owes (its `escalationPending` marker, written in the same write
 * that failed it, escalated its `unknown` or held its channel), then clears the marker. A publish
 * that fails leaves the marker, and the row due in the open index: the reconciler's next run
 * tries again, so an escalation is delivered at least once and never lost. Consumers dedupe on
 * (noticeId, channel, seq). A row that moved on before its escalation went out (an operator
 * resolved the `unknown`) owes none: the move cleared the marker.
 */
export async function publishEscalation(
  row: Intent,
  deps: EscalationDependencies,
): Promise<EscalationOutcome> {
  if (!row.escalationPending) return 'none';
  const failure = escalatedRecord(row);
  if (!failure) return 'none';
  try {
    await deps.escalations.publish({
      noticeId: row.noticeId,
      channel: row.channel,
      seq: failure.seq,
      reason: failure.reason,
      state: row.state,
      at: failure.at,
      detail: failure.detail,
    });
  } catch {
    return 'pending';
  }
  const due =
    row.state === 'failed' || row.state === 'unknown'
      ? undefined
      : nextDueAt(
          row.state,
          {
            enteredAt: failure.at,
            deadline: row.deadline,
            leaseExpiresAt: row.leaseExpiresAt,
            nextAttemptAt: row.nextAttemptAt,
            notBefore: row.notBefore,
          },
          deps.timing,
        );
  // A pending channel fallback keeps the row in the open index, due when it is owed.
  const owed = row.state === 'unknown' ? undefined : dueWithFallback(row, due, deps.clock.now());
  // A lost race (a fact appended meanwhile) leaves the marker: published once more next run.
  // An escalated `unknown` stays in the open index as it is; a held row stays, due when its own
  // next step is (the marker had made it due at once).
  await deps.store
    .settleEscalation(row.noticeId, row.channel, row.version, {
      keepOpen: row.state !== 'failed' || owed !== undefined,
      dueAt: owed,
    })
    .catch(() => false);
  return 'published';
}
