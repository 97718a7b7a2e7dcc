import type { Channel } from '../domain/channel.ts';
import type { LedgerTiming } from '../domain/intent.ts';
import type { RandomSource, RetryPolicy } from '../domain/retry-policy.ts';
import type { SendWindows } from '../domain/send-window.ts';
import type { TemplateCatalog } from '../domain/template.ts';
import type { BatchRecords } from '../ports/batch-records.port.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { EnvelopeSealer } from '../ports/envelope-sealer.port.ts';
import type { EscalationPublisher } from '../ports/escalation.port.ts';
import type { IntentReservations, IntentTransitions, NoticeReader } from '../ports/intent-ledger.port.ts';
import type { IntentQueue, RetryScheduler } from '../ports/intent-queue.port.ts';
import type { LedgerStore } from '../ports/ledger-store.port.ts';
import type { ArchivedRowReader, KeyRecordReader } from '../ports/notice-archive.port.ts';
import type { EscalationMarkers, OpenIndex } from '../ports/open-index.port.ts';
import type { RecentFailures } from '../ports/recent-failures.port.ts';
import type { RowWatch } from '../ports/row-watch.port.ts';
import type { SendGate } from '../ports/send-gate.port.ts';
import type { Suppressions } from '../ports/suppressions.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';
import type { EmailTransport, SmsTransport } from '../ports/transport.port.ts';

/**
 * Everything a use case may touch, as ports. No function holds all of it: each is composed from
 * the part its use cases declare (lambdas/wiring/), and tests may build the whole. The ledger is
 * whole here only for them: every dependency type below names the ledger ports its callers use.
 */
export interface Dependencies {
  readonly store: LedgerStore;
  /**
   * The key records of resolved rows (the key table, kept for the archive's retention): intake
   * answers a replay from them once the row left the table (docs/archive.md).
   */
  readonly keyRecords: KeyRecordReader;
  /**
   * The archive's resolved rows: the timeline of a notice past the hot window, and what differs
   * when a replay past it conflicts.
   */
  readonly archivedRows: ArchivedRowReader;
  readonly queue: IntentQueue;
  readonly scheduler: RetryScheduler;
  readonly escalations: EscalationPublisher;
  readonly sealer: EnvelopeSealer;
  readonly catalog: TemplateCatalog;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** HMAC key for destination fingerprints and content digests. */
  readonly fingerprintKey: Uint8Array;
  readonly timing: LedgerTiming;
  readonly retryPolicy: RetryPolicy;
  readonly defaultDeadlineMs: number;
  readonly transports: { readonly email?: EmailTransport; readonly sms?: SmsTransport };
  /**
   * Each channel's fallback provider's transport (`<CHANNEL>_FALLBACK_PROVIDER`), where there is
   * one: attempts fail over to it only after the primary proved it does not hold the message
   * (lambdas/domain/failover.ts).
   */
  readonly fallbackTransports?:
    | { readonly email?: EmailTransport | undefined; readonly sms?: SmsTransport | undefined }
    | undefined;
  /**
   * The channels this deployment sends: a channel whose provider is `none` is not among them,
   * and intake refuses a notice that asks for it (422 `channel_not_configured`).
   */
  readonly configuredChannels: readonly Channel[];
  /**
   * Channels whose provider's credentials are still placeholders (lambdas/wiring/providers.ts):
   * their rows fail as `provider_not_configured` before any claim, escalated.
   */
  readonly unconfiguredProviders?: { readonly [C in Channel]?: UnconfiguredProvider } | undefined;
  /** Shared provider throttle gate and rate budget; absent = call providers whenever a message arrives. */
  readonly gate?: SendGate | undefined;
  /** Identifies this process in lease records. */
  readonly workerId: string;
  /** `OPERATOR_HOLD_MS`: how long a channel is held when the provider needs a person. */
  readonly operatorHoldMs?: number | undefined;
  /** Send windows per channel and the default zone (docs/architecture.md §12); absent: none. */
  readonly sendWindows?: SendWindows | undefined;
  /**
   * Intake's watch (docs/table-design.md "Watched rows"): sent before the reserve, it lets rows on
   * the happy path stay out of the open index. Absent: every row enters the index at intake.
   */
  readonly watch?: RowWatch | undefined;
}

/** A channel's provider that cannot send yet: which one, and what it lacks (names, never values). */
export interface UnconfiguredProvider {
  readonly provider: string;
  readonly detail: string;
}

/** Dependencies `K` besides the ledger, and the ledger ports `L`. */
type WithLedger<K extends Exclude<keyof Dependencies, 'store'>, L> = Pick<Dependencies, K> & {
  readonly store: L;
};

// The ledger as each caller uses it (lambdas/ports/: one table, one item layout).

/** Intake: reserve a notice's channels; a deadline-risk warning published at once clears its marker. */
export type IntakeLedger = IntentReservations & EscalationMarkers;
/**
 * Operators' acts on rows (resolution, cancel), the timeline they read, the list of open rows
 * and of recent failures (with the rows they show).
 */
export type OperatorLedger = IntentTransitions & NoticeReader & Pick<OpenIndex, 'listOpen'> & RecentFailures;
/**
 * Inbound provider reports: the row they settle, the suppression a bounce or complaint adds, and
 * the other channel a channel fallback reserves (docs/architecture.md §12).
 */
export type ReportLedger = IntentTransitions &
  Pick<Suppressions, 'appendSuppression'> &
  Pick<IntentReservations, 'reserve'>;
/**
 * What both kinds of worker write: transitions, the escalation markers they publish, and the other
 * channel a channel fallback reserves (docs/architecture.md §12).
 */
export type WorkerLedger = IntentTransitions & EscalationMarkers & Pick<IntentReservations, 'reserve'>;
/**
 * A channel sender: claim and outcome, the suppression check, the batch record before a batch
 * call, and the due time of a row waiting on its provider's pre-send check (`defer`).
 */
export type SenderLedger = WorkerLedger &
  Pick<Suppressions, 'getSuppression' | 'appendSuppression'> &
  Pick<BatchRecords, 'recordBatch'> &
  Pick<OpenIndex, 'defer'>;
/**
 * The reconciler: the open index (sweep, rechecks, gauges), the batch records its lookups replay,
 * the throttle gate its deadline-risk check reads, and the reports its status pulls apply.
 */
export type ReconcilerLedger = WorkerLedger &
  ReportLedger &
  Pick<OpenIndex, 'listDue' | 'countOpen' | 'defer'> &
  Pick<BatchRecords, 'getBatch'> &
  Pick<ThrottleGateStore, 'readGate'>;

/** Intake (the http function). */
export type IntakeDependencies = WithLedger<
  | 'keyRecords'
  | 'archivedRows'
  | 'queue'
  | 'sealer'
  | 'catalog'
  | 'clock'
  | 'fingerprintKey'
  | 'timing'
  | 'defaultDeadlineMs'
  | 'configuredChannels'
  | 'sendWindows'
  | 'watch',
  IntakeLedger
>;

/**
 * Operators' and providers' suppressions (the http function): the queue and the sealer, when
 * given, ask the channel's sender to mirror an operator's suppression into the provider's list.
 */
export type SuppressionDependencies = WithLedger<'fingerprintKey' | 'clock', Suppressions> &
  Partial<Pick<Dependencies, 'queue' | 'sealer'>>;

/**
 * Operators' acts on rows (resolution, cancel), the timeline (the table first, then the key
 * records and the archive's rows of channels that left it) and the list (the http function too).
 */
export type OperatorDependencies = WithLedger<
  'keyRecords' | 'archivedRows' | 'queue' | 'clock' | 'timing' | 'retryPolicy' | 'random',
  OperatorLedger
>;

/** Escalating a row: a durable marker on it, and the publish the reconciler retries. */
export type EscalationDependencies = WithLedger<'escalations' | 'clock' | 'timing', EscalationMarkers>;

/** What the workers (senders and the reconciler) share: ledger, queues, retries, escalations, envelopes. */
export type WorkerDependencies = WithLedger<
  | 'queue'
  | 'scheduler'
  | 'escalations'
  | 'sealer'
  | 'catalog'
  | 'clock'
  | 'random'
  | 'timing'
  | 'retryPolicy'
  | 'sendWindows',
  WorkerLedger
>;

/** A channel sender: claim, render, one provider call, record, schedule or escalate. */
export type SenderDependencies = WorkerDependencies &
  WithLedger<
    'transports' | 'fallbackTransports' | 'unconfiguredProviders' | 'gate' | 'workerId' | 'operatorHoldMs',
    SenderLedger
  >;

/** Inbound provider events: the ledger and its clock only. */
export type ReportDependencies = WithLedger<'clock' | 'timing' | 'sendWindows', ReportLedger>;

export type TransportFor<C extends Channel> = C extends 'email' ? EmailTransport : SmsTransport;
