import { CHANNELS, type Channel } from '../domain/channel.ts';
import { correlationId } from '../domain/identity.ts';
import { deferredDueAt, type Intent } from '../domain/intent.ts';
import {
  decideAfterLookup,
  decideReconcile,
  type LookupVerdict,
  type ReconcileContext,
  type UnknownPolicy,
  unknownSince,
} from '../domain/reconcile.ts';
import { laneRef } from '../ports/intent-queue.port.ts';
import type { OpenIntentRef } from '../ports/open-index.port.ts';
import type { ProviderLookup } from '../ports/provider-lookup.port.ts';
import { batchContextOf } from './batch-lookup.ts';
import { type DeadlineRiskDependencies, warnRowsAtRisk } from './deadline-risk.ts';
import type { ReconcilerLedger, WorkerDependencies } from './dependencies.ts';
import { type EscalationOutcome, publishEscalation } from './escalate.ts';
import { followFallback } from './fallback.ts';
import { type FollowUpDependencies, followUpAccepted, PullBudget } from './follow-up.ts';
import { forEachLimited } from './limited.ts';
import { matchableContent, renderMessage } from './messages.ts';
import { applyAndFollowUp } from './record-step.ts';

export type ReconcilerDependencies = WorkerDependencies &
  FollowUpDependencies &
  DeadlineRiskDependencies & {
    readonly store: ReconcilerLedger;
    /** Lookups by provider id: a row is asked about at the provider it records. */
    readonly lookups: Readonly<Record<string, ProviderLookup>>;
    /** Each channel's selected provider: the one to ask about older rows that record none. */
    readonly channelProviders: Readonly<Record<Channel, string>>;
    readonly unknownGraceMs: number;
    readonly unknownPolicy: UnknownPolicy;
    /** How soon an undecided `unknown` row is asked about again (`RECONCILE_INTERVAL_MS`). */
    readonly recheckMs: number;
    /** Upper bound of due rows handled per run, so one run stays within a Lambda timeout. */
    readonly maxRowsPerRun?: number;
    /** `STATUS_PULLS_PER_RUN`: provider status questions per run; the rest wait for the next. */
    readonly statusPullsPerRun?: number;
    /** Told about a row whose handling failed (the run goes on with the others). */
    readonly onRowError?: (ref: OpenIntentRef, error: unknown) => void;
  };

export interface ReconcileReport {
  readonly due: number;
  readonly actions: Record<string, number>;
  /** Gauges over every open row, read from the sparse index only. */
  readonly openByState: Record<string, number>;
  readonly oldestUnresolvedAgeSeconds: number;
  /** Accepted rows still owed a final delivery report, and the age of the oldest (since acceptance). */
  readonly awaitingReport: number;
  readonly oldestAwaitingReportAgeSeconds: number;
  /** How late the oldest provider question owed was (status pulls, lookups of unknown rows). */
  readonly reconciliationLagSeconds: number;
  /** Provider status questions asked in this run. */
  readonly statusPulls: number;
  /** Escalations published in this run. */
  readonly escalations: number;
  /** Escalation publishes that failed in this run (retried next run). */
  readonly escalationFailures: number;
  /** Rows whose escalation is not published yet, failed or escalated `unknown` (after this run). */
  readonly escalationsPending: number;
  /** Rows warned in this run that their deadline is at risk (docs/architecture.md §11). */
  readonly deadlineAtRisk: number;
  /** Due rows whose handling failed (ledger or queue error); retried next run. */
  readonly rowErrors: number;
  /** Claimable rows whose queue message or retry schedule was lost, sent again in this run. */
  readonly reenqueued: number;
}

/** Rows handled at once in one run (ledger and provider requests in flight). */
const CONCURRENCY = 8;

/** The provider a row answers to: the one it records; for older rows, its channel's current one. */
export function providerOf(row: Intent, deps: Pick<ReconcilerDependencies, 'channelProviders'>): string {
  return row.provider ?? deps.channelProviders[row.channel];
}

async function lookupUnknown(row: Intent, deps: ReconcilerDependencies): Promise<LookupVerdict> {
  const provider = providerOf(row, deps);
  const lookup = deps.lookups[provider];
  if (!lookup) {
    return {
      kind: 'undecidable',
      detail: `${provider} offers no lookup here; settled by its events or by policy`,
    };
  }
  if (!row.envelope) return { kind: 'undecidable', detail: 'envelope gone' };
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template) return { kind: 'undecidable', detail: 'template missing' };
  try {
    const envelope = await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel });
    const message = renderMessage(row, template, envelope);
    // An attempt that rode in a batch call is asked about as that call (./batch-lookup.ts).
    const batch =
      row.batch !== undefined ? await batchContextOf({ ...row, batch: row.batch }, deps) : undefined;
    if (batch?.kind === 'never_sent') return { kind: 'absent', detail: batch.detail };
    if (batch?.kind === 'unreadable') return { kind: 'undecidable', detail: batch.detail };
    const claims = row.transitions.filter((t) => t.to === 'sending');
    const verdict = await lookup.lookup({
      correlationId: correlationId(row),
      destination: envelope.destination,
      content: matchableContent(message),
      attemptStartedAt: claims.at(-1)?.at ?? row.createdAt,
      attemptEndedAt: unknownSince(row),
      receiptId: row.providerReceiptId,
      replay: message,
      deadline: row.deadline,
      keyFirstUsedAt: claims[0]?.at ?? row.createdAt,
      ...(batch?.kind === 'batch' ? { batch: batch.batch } : {}),
    });
    return verdict.kind === 'found' ? { ...verdict, provider } : verdict;
  } catch (error) {
    return { kind: 'undecidable', detail: `lookup failed: ${error instanceof Error ? error.name : 'error'}` };
  }
}

/**
 * One reconciler run. Primary course, over the open-intent index only (never a Scan):
 *  1. list due rows; per row read it (consistent) and decide:
 *     sending past lease → unknown; unknown → ask the provider the row records (found →
 *     accepted, provably absent after grace → retry, undecidable → recheck or policy);
 *     reserved / retry overdue → re-enqueue; past deadline → failed + escalation; a pending
 *     escalation → publish it; accepted → delivery follow-up (wait, ask the provider's status
 *     API within the run's budget, or record delivery_unconfirmed: use-cases/follow-up.ts);
 *  2. list every open row for the gauges: counts per state and the oldest unresolved age.
 * Each change is the same conditional write the workers use, so a race with a worker or a
 * second reconciler costs one refused write, never a wrong state. A row whose handling fails
 * (a queue or ledger error) is counted and left for the next run; the others go on, and the
 * gauges are published whatever happened to single rows.
 */
export async function reconcile(deps: ReconcilerDependencies): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const ctx: ReconcileContext = {
    now,
    timing: deps.timing,
    unknownGraceMs: deps.unknownGraceMs,
    unknownPolicy: deps.unknownPolicy,
    recheckMs: deps.recheckMs,
    policy: deps.retryPolicy,
    random: deps.random,
  };
  const actions: Record<string, number> = {};
  const count = (name: string) => {
    actions[name] = (actions[name] ?? 0) + 1;
  };
  let escalations = 0;
  let escalationFailures = 0;
  let rowErrors = 0;
  let reenqueued = 0;
  const tally = (outcome: EscalationOutcome) => {
    if (outcome === 'published') escalations += 1;
    if (outcome === 'pending') escalationFailures += 1;
  };

  const due: OpenIntentRef[] = [];
  const maxRows = deps.maxRowsPerRun ?? 1000;
  let cursor: string | undefined;
  do {
    const page = await deps.store.listDue(now, {
      limit: Math.min(200, maxRows - due.length),
      ...(cursor ? { cursor } : {}),
    });
    due.push(...page.items);
    cursor = page.cursor;
  } while (cursor && due.length < maxRows);

  const budget = new PullBudget(deps.statusPullsPerRun ?? 200);
  // The reconciler reaches every channel's queue: a row a fallback reserves is enqueued at once.
  const stepDeps = { ...deps, fallbackQueue: deps.queue };
  const handle = async (ref: OpenIntentRef): Promise<void> => {
    const read = await deps.store.get(ref.noticeId, ref.channel);
    if (!read) return;
    // A channel fallback owed now (its first channel ended, or `within` passed): fired first.
    const fallback = await followFallback(read, stepDeps);
    if (fallback.kind !== 'none') count(`fallback_${fallback.kind}`);
    const row = fallback.row;
    if (row.escalationPending) {
      count('escalation_retry');
      tally(await publishEscalation(row, deps));
      return;
    }
    let action = decideReconcile(row, ctx);
    if (action.kind === 'follow_up') {
      count(await followUpAccepted(row, providerOf(row, deps), deps, budget));
      return;
    }
    if (action.kind === 'lookup') {
      if (deps.lookups[providerOf(row, deps)]) budget.owed(ref.dueAt);
      const verdict = await lookupUnknown(row, deps);
      count(`lookup_${verdict.kind}`);
      const after = decideAfterLookup(row, verdict, ctx);
      if (after.kind === 'recheck') {
        await deps.store.defer(row.noticeId, row.channel, row.version, deferredDueAt(row, after.at));
        count('recheck');
        return;
      }
      action = after;
    }
    switch (action.kind) {
      case 'none':
        count('none');
        return;
      case 'reenqueue':
        await deps.queue.enqueue([laneRef(row)]);
        await deps.store.defer(row.noticeId, row.channel, row.version, deferredDueAt(row, action.nextDueAt));
        count(`reenqueue_${row.state}`);
        reenqueued += 1;
        return;
      case 'transition': {
        // The same step the senders record with: the write, the retry wake-up, the escalation.
        const followed = await applyAndFollowUp(action.plan, stepDeps);
        if (!followed) {
          count('raced');
          return;
        }
        count(`${action.plan.record.from}_to_${action.plan.record.to}`);
        tally(followed.escalation);
        return;
      }
    }
  };

  const errors = await forEachLimited(due, (ref) => handle(ref), CONCURRENCY);
  for (const [index, error] of errors) {
    // The row stays due: the next run looks at it again.
    rowErrors += 1;
    count('row_error');
    deps.onRowError?.(due[index] as OpenIntentRef, error);
  }

  // Deadline risk (docs/architecture.md §11): rows the channel can no longer reach in time.
  const deadlineAtRisk = await warnRowsAtRisk(deps, CHANNELS).catch(() => 0);

  const counts = await deps.store.countOpen();
  const oldest = counts.oldestCreatedAt ?? now;
  const { failed: _failedPending, accepted: awaitingReport = 0, ...unresolved } = counts.byState;
  const ageSeconds = (since: number | undefined) => Math.max(0, Math.floor((now - (since ?? now)) / 1000));
  return {
    due: due.length,
    actions,
    openByState: { ...unresolved },
    oldestUnresolvedAgeSeconds: Math.max(0, Math.floor((now - oldest) / 1000)),
    awaitingReport,
    oldestAwaitingReportAgeSeconds: ageSeconds(counts.oldestAwaitingSince),
    reconciliationLagSeconds: ageSeconds(budget.oldestOwedSince),
    statusPulls: budget.pulls,
    escalations,
    escalationFailures,
    escalationsPending: counts.escalationsPending,
    deadlineAtRisk,
    rowErrors,
    reenqueued,
  };
}
