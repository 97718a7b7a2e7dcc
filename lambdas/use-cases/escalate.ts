import type { Intent } from '../domain/intent.ts';
import { Reason } from '../domain/state-machine.ts';
import type { EscalationDependencies } from './dependencies.ts';

/** What became of a row's escalation: published now, still pending (publish failed), or none owed. */
export type EscalationOutcome = 'published' | 'pending' | 'none';

/**
 * Publishes the escalation a failed row owes (its `escalationPending` marker, written in the
 * same write that failed it), then clears the marker. A publish that fails leaves the marker,
 * and the row due in the open index: the reconciler's next run tries again, so an escalation is
 * delivered at least once and never lost. Consumers dedupe on (noticeId, channel, seq).
 */
export async function publishEscalation(
  row: Intent,
  deps: EscalationDependencies,
): Promise<EscalationOutcome> {
  if (!row.escalationPending || row.state !== 'failed') return 'none';
  // The record that failed the row (facts may have been appended after it).
  const failure = [...row.transitions].reverse().find((t) => t.to === 'failed' && t.from !== 'failed');
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
  await deps.store.settleEscalation(row.noticeId, row.channel, row.version).catch(() => false);
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
