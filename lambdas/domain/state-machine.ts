import { DomainError } from './errors.ts';

/** Per-channel intent states (docs/architecture.md §3). */
export const IntentState = {
  reserved: 'reserved',
  sending: 'sending',
  retryScheduled: 'retry_scheduled',
  unknown: 'unknown',
  accepted: 'accepted',
  delivered: 'delivered',
  failed: 'failed',
  suppressed: 'suppressed',
} as const;

export type IntentState = (typeof IntentState)[keyof typeof IntentState];

export const INTENT_STATES: readonly IntentState[] = Object.values(IntentState);

/**
 * The only moves the ledger may record. `accepted` never goes back to a sending state:
 * once a provider holds the message, a resend would be a duplicate.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<IntentState, readonly IntentState[]>> = {
  reserved: ['sending', 'suppressed', 'failed'],
  sending: ['accepted', 'retry_scheduled', 'unknown', 'failed'],
  retry_scheduled: ['sending', 'failed'],
  unknown: ['accepted', 'retry_scheduled', 'failed'],
  accepted: ['delivered', 'failed'],
  delivered: [],
  failed: [],
  suppressed: [],
};

/** States in which the system still owes an action; their age is the health signal. */
export const UNRESOLVED_STATES: readonly IntentState[] = [
  'reserved',
  'sending',
  'retry_scheduled',
  'unknown',
];

/** States from which a worker may claim the row for a send attempt. */
export const CLAIMABLE_STATES: readonly IntentState[] = ['reserved', 'retry_scheduled'];

export function isUnresolved(state: IntentState): boolean {
  return UNRESOLVED_STATES.includes(state);
}

export function isTerminal(state: IntentState): boolean {
  return ALLOWED_TRANSITIONS[state].length === 0;
}

export function canTransition(from: IntentState, to: IntentState): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

/** A move that the state machine (docs/architecture.md §3) does not allow. Never written to the ledger. */
export class IllegalTransitionError extends DomainError {
  readonly from: IntentState;
  readonly to: IntentState;
  constructor(from: IntentState, to: IntentState) {
    super('illegal_transition', `illegal transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
    this.from = from;
    this.to = to;
  }
}

/** A legal move requested without the facts its target state needs (lease, receipt, next attempt). */
export class IncompleteTransitionError extends DomainError {
  constructor(to: IntentState, missing: string) {
    super('incomplete_transition', `transition to ${to} needs ${missing}`);
    this.name = 'IncompleteTransitionError';
  }
}

export function assertTransition(from: IntentState, to: IntentState): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

/**
 * Stable reason codes stamped on every transition record. Operators and alarms key on
 * these, so they are snake_case and never renamed; free text goes in `detail`.
 */
export const Reason = {
  intake: 'intake',
  claimed: 'claimed',
  providerAccepted: 'provider_accepted',
  providerThrottled: 'provider_throttled',
  providerUnavailable: 'provider_unavailable',
  providerRejected: 'provider_rejected',
  providerTimeout: 'provider_timeout',
  providerAmbiguous: 'provider_ambiguous',
  leaseExpired: 'lease_expired',
  reconciledAccepted: 'reconciled_accepted',
  reconciledNotSent: 'reconciled_not_sent',
  unknownUnresolved: 'unknown_unresolved',
  /**
   * The outcome stayed unknown past UNKNOWN_GRACE_MS and UNKNOWN_POLICY=escalate handed it to a
   * person: a record `unknown → unknown` (the row stays unresolved), with an escalation event.
   */
  unknownEscalated: 'unknown_escalated',
  deadlineExceeded: 'deadline_exceeded',
  attemptsExhausted: 'attempts_exhausted',
  deliveryReported: 'delivery_reported',
  deliveryFailed: 'delivery_failed',
  hardBounce: 'hard_bounce',
  complaint: 'complaint',
  onSuppressionList: 'on_suppression_list',
  renderFailed: 'render_failed',
  envelopeUnreadable: 'envelope_unreadable',
  /** This deployment cannot send the row: its template or the channel's transport is missing. */
  configurationError: 'configuration_error',
  /**
   * The channel's provider has no credentials yet (its secret still holds the placeholders the
   * deployment wrote): this channel cannot send until a person fills them in; nothing was sent.
   */
  providerNotConfigured: 'provider_not_configured',
  /** A person confirmed, from outside the ledger, that the provider holds the message. */
  operatorConfirmedAccepted: 'operator_confirmed_accepted',
  /** A person confirmed that the provider never got the message: a deliberate resend. */
  operatorConfirmedNotSent: 'operator_confirmed_not_sent',
  /** The business caller or an operator called the notice off before it was sent. */
  cancelled: 'cancelled',
  /**
   * The provider refused because of our account (spend limit, credit, key, suspension): the channel
   * is held and a person is told; the attempt is not counted.
   */
  operatorActionRequired: 'operator_action_required',
  /**
   * The primary provider proved it does not hold the message (never reached, or our account
   * refused) and the channel has a fallback: the next attempt goes to the fallback at once, the
   * attempt not counted (lambdas/domain/failover.ts; the detail names both providers).
   */
  failover: 'failover',
  /** The provider's own suppression or opt-out list holds the destination (checked before the claim). */
  providerSuppressed: 'provider_suppressed',
  /**
   * An accepted row that had no final delivery report by DELIVERY_REPORT_DEADLINE_MS: recorded as a
   * fact (the row stays `accepted`; it is no failure) and no longer followed up.
   */
  deliveryUnconfirmed: 'delivery_unconfirmed',
  /**
   * The estimate of when it will be sent passes its deadline (docs/architecture.md §11): an early
   * warning, a record `state → state` with an escalation; the row keeps trying.
   */
  deadlineAtRisk: 'deadline_at_risk',
  /**
   * The channel is held (a provider's "slow down" with a long Retry-After, an operator hold): the
   * row waits for the hold without an attempt. A record `state → state`, once per hold, naming the
   * provider, the hold's reason and until when (docs/architecture.md §4 "No silent waits").
   */
  channelHeld: 'channel_held',
  /**
   * A check the provider must answer before the send (its own suppression list) could not be
   * answered: the row waits and asks again with backoff until its deadline. A record
   * `state → state`, once per distinct cause (docs/architecture.md §4 "No silent waits").
   */
  providerCheckUnavailable: 'provider_check_unavailable',
  /**
   * Channel fallback (docs/architecture.md §12): on the row it reserves, the intake record (the
   * first channel's state and reason in `detail`); on the first channel's row, a record
   * `state → state` saying the other channel was reserved and why. Once per notice.
   */
  fallback: 'fallback',
  /**
   * A `standard` or `bulk` notice arrived outside its channel's send window: a record
   * `reserved → reserved` at intake, until when (the window's opening) in `detail`; the row is not
   * claimed before then and is sent through the usual path (suppression checked) when it opens.
   */
  heldForSendWindow: 'held_for_send_window',
  /** A `critical` notice arrived outside its channel's send window and is sent at once regardless. */
  sendWindowNotApplied: 'send_window_not_applied',
} as const;

export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * Failures a person must hear about (an escalation event): the system gave up, could not tell,
 * or cannot send. A provider's own verdict (rejected, bounced, complained) is not escalated.
 */
export const ESCALATING_FAILURES: ReadonlySet<Reason> = new Set([
  Reason.deadlineExceeded,
  Reason.attemptsExhausted,
  Reason.unknownUnresolved,
  Reason.renderFailed,
  Reason.envelopeUnreadable,
  Reason.configurationError,
  Reason.providerNotConfigured,
  Reason.onSuppressionList,
]);

/**
 * Moves that keep the row open but still need a person: the provider refused because of our
 * account, so the channel is held until someone acts (docs/architecture.md §4).
 */
export const ESCALATING_HOLDS: ReadonlySet<Reason> = new Set([Reason.operatorActionRequired]);

export function escalates(to: IntentState, reason: Reason): boolean {
  if (to === 'retry_scheduled') return ESCALATING_HOLDS.has(reason);
  return to === 'failed' && ESCALATING_FAILURES.has(reason);
}
