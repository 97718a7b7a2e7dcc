import { acceptedAt, decideFollowUp, type FollowUpPolicy, nextPullAt } from '../domain/follow-up.ts';
import { deferredDueAt, type Intent } from '../domain/intent.ts';
import type { OpenIndex } from '../ports/open-index.port.ts';
import type { ProviderStatus } from '../ports/provider.port.ts';
import { applyDeliveryReport } from './apply-delivery-report.ts';
import type { ReportDependencies } from './dependencies.ts';

/** What the reconciler needs for the delivery follow-up of accepted rows. */
export interface FollowUpDependencies {
  /** Status facets by provider id: a row is asked about at the provider it records. */
  readonly statuses: Readonly<Record<string, ProviderStatus>>;
  readonly followUp: FollowUpPolicy;
}

/** One run's shared allowance of provider questions (`STATUS_PULLS_PER_RUN`) and what it saw. */
export class PullBudget {
  pulls = 0;
  /** When the oldest question owed (asked or not) became due; the lag gauge. */
  oldestOwedSince: number | undefined;
  constructor(private readonly limit: number) {}
  owed(since: number): void {
    this.oldestOwedSince = Math.min(this.oldestOwedSince ?? since, since);
  }
  take(): boolean {
    if (this.pulls >= this.limit) return false;
    this.pulls += 1;
    return true;
  }
}

export type FollowUpResult =
  | 'follow_up_wait'
  | 'follow_up_unconfirmed'
  | 'follow_up_settled'
  | 'follow_up_pending'
  | 'follow_up_unavailable'
  | 'follow_up_over_budget'
  | 'raced';

/**
 * One accepted row that is due (docs/architecture.md §3 "Delivery follow-up"): wait until its
 * first question, ask the provider's status API (within the run's budget) and apply what it says
 * like any inbound report, or, past DELIVERY_REPORT_DEADLINE_MS, record `delivery_unconfirmed`.
 * A question that could not be asked (over budget, provider unavailable) leaves the row due, so
 * the next run asks first; the lag gauge shows how late that is.
 */
export async function followUpAccepted(
  row: Intent,
  provider: string,
  deps: ReportDependencies & FollowUpDependencies & { readonly store: Pick<OpenIndex, 'defer'> },
  budget: PullBudget,
): Promise<FollowUpResult> {
  const now = deps.clock.now();
  const status = deps.statuses[provider];
  const source = { statusPull: status !== undefined, pollIntervalMs: status?.pollIntervalMs };
  const decision = decideFollowUp(row, now, deps.followUp, source);
  switch (decision.kind) {
    case 'wait':
      await deps.store.defer(row.noticeId, row.channel, row.version, deferredDueAt(row, decision.until));
      return 'follow_up_wait';
    case 'give_up': {
      const result = await deps.store.apply(decision.plan);
      return result.kind === 'applied' ? 'follow_up_unconfirmed' : 'raced';
    }
    case 'pull':
      break;
  }
  budget.owed(decision.owedSince);
  if (!status || row.providerReceiptId === undefined) return 'follow_up_wait';
  if (!budget.take()) return 'follow_up_over_budget';
  const answer = await status
    .pull({
      ref: { noticeId: row.noticeId, channel: row.channel },
      receiptId: row.providerReceiptId,
      acceptedAt: acceptedAt(row),
    })
    .catch((error: unknown) => ({
      kind: 'unavailable' as const,
      code: error instanceof Error ? error.name : 'error',
    }));
  if (answer.kind === 'unavailable') return 'follow_up_unavailable';
  for (const report of answer.reports) await applyDeliveryReport(report, deps);
  const after = await deps.store.get(row.noticeId, row.channel);
  if (after?.state !== 'accepted') return 'follow_up_settled';
  await deps.store.defer(
    after.noticeId,
    after.channel,
    after.version,
    deferredDueAt(after, nextPullAt(after, now, deps.followUp, source)),
  );
  return 'follow_up_pending';
}
