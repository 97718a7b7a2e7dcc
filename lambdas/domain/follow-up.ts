import type { Intent } from './intent.ts';
import { planFollowUpEnd, type TransitionPlan } from './transition.ts';

/**
 * Delivery follow-up (docs/architecture.md §3 "Delivery follow-up"): `accepted` is not
 * `delivered`. A row the provider accepted stays owed an action until a final report arrives:
 * after `DELIVERY_REPORT_GRACE_MS` the reconciler asks the provider's status API where the module
 * has one, again on a back-off, and at `DELIVERY_REPORT_DEADLINE_MS` records `delivery_unconfirmed`
 * (a fact, not a failure) and stops. Providers whose events are only pulled (the module names its
 * poll interval) are asked every interval from the start. Providers without a status API are
 * settled by their events alone; the row then simply waits in the open index until the deadline,
 * which is what `OldestAwaitingReportAgeSeconds` shows.
 */
export interface FollowUpPolicy {
  /** `DELIVERY_REPORT_GRACE_MS`: how long a report may take before the provider is asked. */
  readonly graceMs: number;
  /** `DELIVERY_REPORT_DEADLINE_MS`: after this, counted from acceptance, the follow-up ends. */
  readonly deadlineMs: number;
}

/** What the row's provider offers for the follow-up. */
export interface FollowUpSource {
  /** The module answers status questions (its `status` facet). */
  readonly statusPull: boolean;
  /** Events reach us only by pulling, this often (the module's own setting); else the grace applies. */
  readonly pollIntervalMs?: number | undefined;
}

export type FollowUpDecision =
  /** Nothing to do before `until`: move the row's due time there. */
  | { readonly kind: 'wait'; readonly until: number }
  /** Ask the provider now; `owedSince` is when the question became due (the lag gauge). */
  | { readonly kind: 'pull'; readonly owedSince: number }
  /** The deadline passed without a final report: record it and stop following up. */
  | { readonly kind: 'give_up'; readonly plan: TransitionPlan };

/** When the row was accepted: its `acceptedAt`, or (older rows) its last record into `accepted`. */
export function acceptedAt(row: Pick<Intent, 'transitions' | 'createdAt' | 'acceptedAt'>): number {
  if (row.acceptedAt !== undefined) return row.acceptedAt;
  for (let i = row.transitions.length - 1; i >= 0; i--) {
    const record = row.transitions[i];
    if (record && record.to === 'accepted' && record.from !== 'accepted') return record.at;
  }
  return row.createdAt;
}

/** The first time the provider is asked about an accepted row. */
export function firstPullAt(row: Intent, policy: FollowUpPolicy, source: FollowUpSource): number {
  return acceptedAt(row) + (source.pollIntervalMs ?? policy.graceMs);
}

/** What the reconciler owes an `accepted` row that is due. */
export function decideFollowUp(
  row: Intent,
  now: number,
  policy: FollowUpPolicy,
  source: FollowUpSource,
): FollowUpDecision {
  const since = acceptedAt(row);
  const end = since + policy.deadlineMs;
  if (now >= end) {
    return {
      kind: 'give_up',
      plan: planFollowUpEnd(
        row,
        now,
        `no final delivery report within ${policy.deadlineMs} ms of acceptance`,
      ),
    };
  }
  // Nothing to ask with: events alone can settle it (no status API), or no receipt was ever recorded
  // (an operator confirmed the acceptance without the provider's id).
  if (!source.statusPull || row.providerReceiptId === undefined) return { kind: 'wait', until: end };
  const first = firstPullAt(row, policy, source);
  if (now < first) return { kind: 'wait', until: first };
  return { kind: 'pull', owedSince: Math.max(first, row.dueAt ?? first) };
}

/**
 * After a pull that brought no final word: the next question. A poll provider is asked every
 * interval; otherwise the wait doubles with the row's age (a question at grace, 2×, 4× … after
 * acceptance: about ten questions in 72 hours with a 15-minute grace), never past the deadline.
 */
export function nextPullAt(row: Intent, now: number, policy: FollowUpPolicy, source: FollowUpSource): number {
  const since = acceptedAt(row);
  const interval = source.pollIntervalMs ?? Math.max(policy.graceMs, now - since);
  return Math.min(now + interval, since + policy.deadlineMs);
}
