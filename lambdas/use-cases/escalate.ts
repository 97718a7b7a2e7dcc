import { type Intent, nextDueAt } from '../domain/intent.ts';
import { escalates } from '../domain/state-machine.ts';
import type { EscalationDependencies } from './dependencies.ts';

/** What became of a row's escalation: published now, still pending (publish failed), or none owed. */
export type EscalationOutcome = 'published' | 'pending' | 'none';

/**
 * Publishes the escalation a row owes (its `escalationPending` marker, written in the same write
 * that failed it, or that held its channel for an operator), then clears the marker. A publish
 * that fails leaves the marker, and the row due in the open index: the reconciler's next run
 * tries again, so an escalation is delivered at least once and never lost. Consumers dedupe on
 * (noticeId, channel, seq).
 */
export async function publishEscalation(
  row: Intent,
  deps: EscalationDependencies,
): Promise<EscalationOutcome> {
  if (!row.escalationPending) return 'none';
  // The record that moved the row into its state (facts may have been appended after it).
  const failure = [...row.transitions].reverse().find((t) => t.from !== t.to);
  if (!failure || failure.to !== row.state || !escalates(failure.to, failure.reason)) return 'none';
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
  // A row still open keeps its place in the open index, due when its own next step is.
  const due =
    row.state === 'failed'
      ? undefined
      : nextDueAt(
          row.state,
          {
            enteredAt: failure.at,
            deadline: row.deadline,
            leaseExpiresAt: row.leaseExpiresAt,
            nextAttemptAt: row.nextAttemptAt,
          },
          deps.timing,
        );
  // A lost race (a fact appended meanwhile) leaves the marker: published once more next run.
  await deps.store.settleEscalation(row.noticeId, row.channel, row.version, due).catch(() => false);
  return 'published';
}
