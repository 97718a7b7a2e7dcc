import { ReportContendedError } from '../domain/errors.ts';
import type { Intent } from '../domain/intent.ts';
import { isTerminal, Reason } from '../domain/state-machine.ts';
import { SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import {
  type Fact,
  factsOf,
  MAX_FACTS_PER_ROW,
  planFact,
  planTransition,
  type TransitionPlan,
} from '../domain/transition.ts';
import type { DeliveryReport } from '../ports/provider.port.ts';
import type { ReportDependencies } from './dependencies.ts';
import { followFallback } from './fallback.ts';

export type { DeliveryReport };

export type ReportResult =
  | { readonly kind: 'applied'; readonly state: string; readonly records: number }
  | {
      readonly kind: 'ignored';
      readonly why:
        | 'unknown_intent'
        | 'already_final'
        | 'receipt_mismatch'
        | 'not_accepted_yet'
        | 'no_change'
        | 'duplicate_event';
    };

/** Other writers a report may lose to (the worker's outcome, a watch, a reconciler) before it is retried. */
const MAX_RACES = 5;

/**
 * Records what the provider reported, tolerating duplicates and any arrival order:
 *  - a report for a row still in `sending`/`unknown` (or wrongly `retry_scheduled`) proves
 *    acceptance: record `accepted` first (the worker or the reconciler then finds it settled);
 *  - `delivered` / `failed` move `accepted` on;
 *  - on a terminal row a report that adds something (a complaint after `delivered`, a delivery
 *    after `failed`) is appended as a fact record, the state unchanged; one that adds nothing
 *    (a duplicate, a Send event after delivery) is ignored;
 *  - hard bounces, complaints and opt-outs add the destination to the suppression list.
 */
export async function applyDeliveryReport(
  report: DeliveryReport,
  deps: ReportDependencies,
): Promise<ReportResult> {
  let suppressionDone = false;
  for (let race = 0; race < MAX_RACES; race++) {
    const row = await deps.store.get(report.ref.noticeId, report.ref.channel);
    if (!row) return { kind: 'ignored', why: 'unknown_intent' };
    if (report.suppress && !suppressionDone) {
      await deps.store.appendSuppression(
        { channel: row.channel, fingerprint: row.destination.fingerprint, masked: row.destination.masked },
        {
          action: SuppressionAction.suppress,
          reason: report.failure ?? 'delivery_failed',
          source: SuppressionSource.provider,
          actor: report.provider,
          at: report.at,
          code: report.code,
        },
      );
      suppressionDone = true;
    }
    if (row.providerReceiptId !== undefined && row.providerReceiptId !== report.receiptId) {
      return { kind: 'ignored', why: 'receipt_mismatch' };
    }
    const plans = isTerminal(row.state) ? factPlans(row, report) : planReport(row, report, deps);
    if (plans === 'final') return { kind: 'ignored', why: 'already_final' };
    if (plans === 'not_accepted') return { kind: 'ignored', why: 'not_accepted_yet' };
    if (plans.length === 0) return { kind: 'ignored', why: 'no_change' };
    let current: Intent = row;
    let applied = 0;
    for (const plan of plans) {
      const result = await deps.store.apply(plan);
      if (result.kind === 'stale') break;
      current = result.intent;
      applied += 1;
    }
    if (applied === plans.length) {
      // A bounce that ends the first channel of a channel fallback reserves the other at once
      // (./fallback.ts); a failure here leaves the row due, and the reconciler fires it.
      await followFallback(current, deps).catch(() => undefined);
      return { kind: 'applied', state: current.state, records: applied };
    }
    // Someone moved the row meanwhile (the worker recording its own outcome): look again.
  }
  // Never dropped as "ignored": a lost delivery report would leave the row `accepted` until the
  // reconciler's deadline. Thrown, the report comes again (the webhook answers 5xx, EventBridge
  // retries the invocation, the local feed its next poll).
  throw new ReportContendedError(
    `report for ${report.ref.noticeId} ${report.ref.channel} lost ${MAX_RACES} races to other writers`,
  );
}

function failureReason(report: DeliveryReport): Reason {
  return report.failure === 'hard_bounce'
    ? Reason.hardBounce
    : report.failure === 'complaint'
      ? Reason.complaint
      : Reason.deliveryFailed;
}

/** What a report says that a terminal row does not record yet, as a fact; undefined: nothing new. */
function factOf(row: Intent, report: DeliveryReport): Fact | undefined {
  const detail = report.code ?? `reported by ${report.provider}`;
  switch (report.kind) {
    case 'accepted':
      // The provider had it after all (a row failed as unknown_unresolved, say).
      return row.state === 'failed' && row.providerReceiptId === undefined
        ? { reason: Reason.reconciledAccepted, at: report.at, detail: `reported by ${report.provider}` }
        : undefined;
    case 'delivered':
      return row.state === 'failed' ? { reason: Reason.deliveryReported, at: report.at, detail } : undefined;
    case 'failed':
      return row.state === 'delivered' || row.state === 'failed'
        ? { reason: failureReason(report), at: report.at, detail }
        : undefined;
  }
}

/**
 * A terminal row's history from the record that finished it on: a fact already told (by that
 * record or a later fact) is not told again, and a row takes at most MAX_FACTS_PER_ROW facts.
 */
function factPlans(row: Intent, report: DeliveryReport): TransitionPlan[] | 'final' {
  const fact = factOf(row, report);
  if (!fact) return 'final';
  const finishedAt = row.transitions.findLastIndex((t) => t.from !== t.to);
  const told = row.transitions.slice(Math.max(0, finishedAt)).some((t) => t.reason === fact.reason);
  if (told || factsOf(row).length >= MAX_FACTS_PER_ROW) return 'final';
  return [planFact(row, fact)];
}

function planReport(
  row: Intent,
  report: DeliveryReport,
  deps: ReportDependencies,
): TransitionPlan[] | 'not_accepted' {
  // The provider's clock says when it acted, which can precede what the ledger already wrote
  // (a provider may stamp its acceptance event with the time it took the message, before our
  // timeout recorded `unknown`).
  // Records are appended in order, so their times must not go backwards: never before the last.
  const at = Math.max(report.at, row.transitions[row.transitions.length - 1]?.at ?? row.createdAt);
  const plans: TransitionPlan[] = [];
  let current = row;
  if (current.state === 'retry_scheduled') {
    // We concluded "not accepted" (e.g. a 5xx taken for a refusal) but the provider says it
    // has the message. Take the row off the retry path through the only legal door, a claim,
    // so that the scheduled attempt finds it settled instead of sending a duplicate.
    const claim = planTransition(
      current,
      {
        to: 'sending',
        reason: Reason.claimed,
        at,
        attempt: current.attempts,
        detail: `settling a ${report.provider} report; no send`,
        set: { leaseOwner: `report:${report.provider}`, leaseExpiresAt: at + deps.timing.leaseMs },
      },
      deps.timing,
    );
    plans.push(claim);
    current = claim.next;
  }
  if (current.state === 'sending' || current.state === 'unknown') {
    const accepted = planTransition(
      current,
      {
        to: 'accepted',
        reason:
          current.state === 'sending' && plans.length === 0
            ? Reason.providerAccepted
            : Reason.reconciledAccepted,
        at,
        attempt: current.attempts,
        detail: `reported by ${report.provider}`,
        set: { provider: report.provider, providerReceiptId: report.receiptId },
      },
      deps.timing,
    );
    plans.push(accepted);
    current = accepted.next;
  }
  if (current.state !== 'accepted') return 'not_accepted';
  if (report.kind === 'delivered') {
    plans.push(
      planTransition(
        current,
        { to: 'delivered', reason: Reason.deliveryReported, at, detail: report.code },
        deps.timing,
      ),
    );
  } else if (report.kind === 'failed') {
    plans.push(
      planTransition(
        current,
        { to: 'failed', reason: failureReason(report), at, detail: report.code },
        deps.timing,
      ),
    );
  }
  return plans;
}
