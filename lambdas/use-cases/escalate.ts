import { type Intent, isUnknownEscalation, type TransitionRecord } from '../domain/intent.ts';
import { Reason } from '../domain/state-machine.ts';
import type { EscalationDependencies } from './dependencies.ts';

/** What became of a row's escalation: published now, still pending (publish failed), or none owed. */
export type EscalationOutcome = 'published' | 'pending' | 'none';

/**
 * The record a pending escalation is about: the one that failed the row (facts may follow it),
 * or, on a row still `unknown`, its escalation record (UNKNOWN_POLICY=escalate).
 */
function escalatedRecord(row: Intent): TransitionRecord | undefined {
  if (row.state === 'failed')
    return row.transitions.findLast((t) => t.to === 'failed' && t.from !== 'failed');
  if (row.state === 'unknown' && row.escalatedAt !== undefined)
    return row.transitions.findLast(isUnknownEscalation);
  return undefined;
}

/**
 * Publishes the escalation a row owes (its `escalationPending` marker, written in the same write
 * that failed it or escalated its `unknown`), then clears the marker. A publish that fails leaves
 * the marker, and the row due in the open index: the reconciler's next run tries again, so an
 * escalation is delivered at least once and never lost. Consumers dedupe on (noticeId, channel,
 * seq). A row that moved on before its escalation went out (an operator resolved the `unknown`)
 * owes none: the move cleared the marker.
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
  // A lost race (a fact appended meanwhile) leaves the marker: published once more next run.
  // An escalated `unknown` stays in the open index: only the marker goes.
  await deps.store
    .settleEscalation(row.noticeId, row.channel, row.version, { keepOpen: row.state !== 'failed' })
    .catch(() => false);
  return 'published';
}

/**
 * The escalation of an operational hold (docs/architecture.md §4): the provider refused for a
 * reason a person must fix, the channel is held, and this row (the one whose call opened the
 * hold) carries the page. Published once per hold, not once per waiting message; the row is not
 * failed (it waits, retry_scheduled, with its attempt given back), so no durable marker is set:
 * a hold that ends without the fix is met again and escalated again, each hold period.
 */
export async function publishHoldEscalation(
  row: Intent,
  deps: EscalationDependencies,
): Promise<EscalationOutcome> {
  const record = row.transitions[row.transitions.length - 1];
  if (!record) return 'none';
  try {
    await deps.escalations.publish({
      noticeId: row.noticeId,
      channel: row.channel,
      seq: record.seq,
      reason: Reason.providerBlocked,
      state: row.state,
      at: record.at,
      detail: record.detail,
    });
    return 'published';
  } catch {
    return 'pending';
  }
}
