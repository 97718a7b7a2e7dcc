/**
 * Metric names, written once (plain data): the functions publish them (Powertools EMF,
 * lambdas/wiring/observability.ts) and the CDK alarms and graphs them
 * (lib/constructs/monitoring.ts). A renamed metric is then a compile error on both sides, not an
 * alarm that silently watches nothing.
 */

/** CloudWatch namespace and the `service` dimension of every metric. */
export const METRIC_NAMESPACE = 'NoticeLedger';
export const SERVICE_NAME = 'notice-ledger';

/** Unresolved states (the reconciler publishes `Open_<state>` for each, every run). */
export const OPEN_STATES = ['reserved', 'sending', 'retry_scheduled', 'unknown'] as const;
/** States a delivery step can record (`Outcome_<state>` from the senders). */
export const OUTCOME_STATES = ['accepted', 'retry_scheduled', 'unknown', 'failed', 'suppressed'] as const;

export const Metric = {
  /** Reconciler gauge, every run: age of the oldest unresolved intent. Missing data = reconciler down. */
  oldestUnresolvedAgeSeconds: 'OldestUnresolvedAgeSeconds',
  /**
   * Reconciler gauge, every run: age of the oldest row accepted and still waiting for a final
   * delivery report (0 when none). Events-only providers settle these by their events alone.
   */
  oldestAwaitingReportAgeSeconds: 'OldestAwaitingReportAgeSeconds',
  /** Reconciler gauge: accepted rows waiting for a final delivery report. */
  awaitingReport: 'AwaitingReport',
  /**
   * Reconciler gauge: how late the oldest provider question owed is (a status pull, or pulled
   * events of a provider that pushes none) when the run starts; grows while pulls fail or stop.
   */
  reconciliationLagSeconds: 'ReconciliationLagSeconds',
  /** Reconciler: provider status questions asked in the run (delivery follow-up, pulled events). */
  statusPulls: 'StatusPulls',
  /** Reconciler gauge: due rows handled in the run. */
  reconcilerDueRows: 'ReconcilerDueRows',
  /** Reconciler: rows whose handling failed in the run (the run went on with the others). */
  reconcilerRowErrors: 'ReconcilerRowErrors',
  /** Escalations published (deadline exceeded, attempts exhausted, unknown past grace, …). */
  escalations: 'Escalations',
  /** Escalation publishes that failed; the row keeps its marker and the reconciler retries. */
  escalationPublishFailures: 'EscalationPublishFailures',
  /** Reconciler gauge: failed rows whose escalation is not published yet. */
  escalationsPending: 'EscalationsPending',
  /** Rows warned that their deadline is at risk (intake and reconciler; docs/architecture.md §11). */
  deadlineAtRisk: 'DeadlineAtRisk',
  /**
   * Reconciler: claimable rows whose queue message or retry schedule was lost, sent again (each
   * then due a lease later; docs/architecture.md §4 "No silent waits").
   */
  reconcilerReenqueued: 'ReconcilerReenqueued',
  /**
   * Senders: attempts whose primary provider proved it does not hold the message (never reached,
   * or our account refused) and whose next attempt goes to the channel's fallback
   * (docs/architecture.md §"Provider failover"); alarmed: the primary needs a look.
   */
  providerFailovers: 'ProviderFailovers',
  /**
   * The watch: rows on the happy path still owed something when their watch fired (a crash, a
   * backlog, a delivery report slower than INDEX_WATCH_DELAY_MS), put into the open index
   * (docs/table-design.md "Watched rows").
   */
  watchIndexed: 'WatchIndexed',
  /** A sender dropped a queue message that can never be processed. */
  poisonMessages: 'PoisonMessages',
  /** An inbound provider event that could not be parsed (acknowledged and dropped). */
  unparsedProviderEvents: 'UnparsedProviderEvents',
  /** A verified inbound provider event that names no intent of ours (acknowledged, nothing changed). */
  unmatchedProviderEvents: 'UnmatchedProviderEvents',
  /** An inbound provider request whose signature did not verify (refused, nothing changed). */
  refusedProviderEvents: 'RefusedProviderEvents',
  /**
   * Provider facets a function left out because the provider's secret still holds placeholders
   * (counted at each cold start; the reconciler also every run, as a gauge): the channel's sends
   * fail as provider_not_configured until a person fills the secret in.
   */
  providersNotConfigured: 'ProvidersNotConfigured',
  /**
   * A request the HTTP router answered 500 (an infrastructure failure: the ledger, KMS, secrets,
   * an access denied): the function itself succeeds, so its Errors metric never sees these.
   */
  httpInternalErrors: 'HttpInternalErrors',
  /** Archiver (docs/archive.md): fact lines written to the archive (each fact once). */
  archivedFacts: 'ArchivedFacts',
  /** Archiver: objects written (`facts/` and `rows/`). */
  archiveObjectsWritten: 'ArchiveObjectsWritten',
  /** Archiver: lines of a batch handed again that the archive already held (not written twice). */
  archiveDuplicatesSkipped: 'ArchiveDuplicatesSkipped',
  /**
   * Archiver, per batch: now − the batch's first change; the archive's bound (15 minutes) is at
   * risk when it grows (the event source's IteratorAge says the same from the other side).
   */
  archiveLagSeconds: 'ArchiveLagSeconds',
} as const;

export type MetricName = (typeof Metric)[keyof typeof Metric];

export const openMetric = (state: (typeof OPEN_STATES)[number]) => `Open_${state}` as const;
export const outcomeMetric = (state: string) => `Outcome_${state}` as const;

/**
 * Why a sender sent a row back through its queue without moving it (docs/architecture.md §4 "No
 * silent waits"); each deferral counts 1 in `Deferred_<cause>`:
 *   channel_held                the channel's gate is closed (a 429's advice, an operator hold)
 *   rate_budget                 the channel's rate budget is booked beyond the inline wait
 *   provider_check_unavailable  a check the provider must answer before the send was not answered
 */
export const DEFERRAL_CAUSES = ['channel_held', 'rate_budget', 'provider_check_unavailable'] as const;
export type DeferralCause = (typeof DEFERRAL_CAUSES)[number];
export const deferralMetric = (cause: DeferralCause) => `Deferred_${cause}` as const;
