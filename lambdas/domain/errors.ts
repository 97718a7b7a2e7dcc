/** Base of every error the domain raises on purpose; `code` is stable and safe to log. */
export class DomainError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
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

/**
 * A provider's report that could not be written because the row kept moving under it (each
 * conditional write lost to another writer). Thrown, never dropped: the provider or EventBridge
 * delivers the report again, and applying it is idempotent.
 */
export class ReportContendedError extends DomainError {
  constructor(message: string) {
    super('report_contended', message);
    this.name = 'ReportContendedError';
  }
}
