import type { IntentState } from './state-machine.ts';

/** Base of every error the domain raises on purpose; `code` is stable and safe to log. */
export class DomainError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
  }
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

/** A destination providers would not take; `reason` is the refusal code (`email_invalid_domain` …). */
export class InvalidDestinationError extends DomainError {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super('invalid_destination', message);
    this.name = 'InvalidDestinationError';
    this.reason = reason;
  }
}

/** A legal move requested without the facts its target state needs (lease, receipt, next attempt). */
export class IncompleteTransitionError extends DomainError {
  constructor(to: IntentState, missing: string) {
    super('incomplete_transition', `transition to ${to} needs ${missing}`);
    this.name = 'IncompleteTransitionError';
  }
}
