import type { Channel } from '../domain/channel.ts';
import type { LedgerTiming } from '../domain/intent.ts';
import type { RandomSource, RetryPolicy } from '../domain/retry-policy.ts';
import type { TemplateCatalog } from '../domain/template.ts';
import type { Clock } from '../ports/clock.port.ts';
import type { EnvelopeSealer } from '../ports/envelope-sealer.port.ts';
import type { EscalationPublisher } from '../ports/escalation.port.ts';
import type { IntentQueue, RetryScheduler } from '../ports/intent-queue.port.ts';
import type { LedgerStore } from '../ports/ledger-store.port.ts';
import type { SendGate } from '../ports/send-gate.port.ts';
import type { EmailTransport, SmsTransport } from '../ports/transport.port.ts';

/**
 * Everything a use case may touch, as ports. No function holds all of it: each is composed from
 * the part its use cases declare (lambdas/wiring/), and tests may build the whole.
 */
export interface Dependencies {
  readonly store: LedgerStore;
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
  /** Shared provider throttle gate and rate budget; absent = call providers whenever a message arrives. */
  readonly gate?: SendGate | undefined;
  /** Identifies this process in lease records. */
  readonly workerId: string;
  /** `OPERATOR_HOLD_MS`: how long a channel is held when the provider needs a person. */
  readonly operatorHoldMs?: number | undefined;
}

/** Intake and operator suppressions (the http function). */
export type IntakeDependencies = Pick<
  Dependencies,
  'store' | 'queue' | 'sealer' | 'catalog' | 'clock' | 'fingerprintKey' | 'timing' | 'defaultDeadlineMs'
>;

/** Operators' acts on rows (resolution, cancel) and the list (the http function too). */
export type OperatorDependencies = Pick<
  Dependencies,
  'store' | 'queue' | 'clock' | 'timing' | 'retryPolicy' | 'random'
>;

/** Escalating a row: a durable marker on it, and the publish the reconciler retries. */
export type EscalationDependencies = Pick<Dependencies, 'store' | 'escalations' | 'clock' | 'timing'>;

/** What the workers (senders and the reconciler) share: ledger, queues, retries, escalations, envelopes. */
export type WorkerDependencies = Pick<
  Dependencies,
  | 'store'
  | 'queue'
  | 'scheduler'
  | 'escalations'
  | 'sealer'
  | 'catalog'
  | 'clock'
  | 'random'
  | 'timing'
  | 'retryPolicy'
>;

/** A channel sender: claim, render, one provider call, record, schedule or escalate. */
export type SenderDependencies = WorkerDependencies &
  Pick<Dependencies, 'transports' | 'gate' | 'workerId' | 'operatorHoldMs'>;

/** Inbound provider events: the ledger and its clock only. */
export type ReportDependencies = Pick<Dependencies, 'store' | 'clock' | 'timing'>;

export type TransportFor<C extends Channel> = C extends 'email' ? EmailTransport : SmsTransport;
