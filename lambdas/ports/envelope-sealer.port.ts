/**
 * What a worker needs to send and the ledger must not hold in clear: the raw destination
 * and the template variables. Sealed at intake, opened by the sender, dropped when no send
 * can follow.
 */
export interface SendEnvelope {
  readonly destination: string;
  readonly variables: Readonly<Record<string, unknown>>;
}

export interface EnvelopeSealer {
  seal(envelope: SendEnvelope, context: { noticeId: string; channel: string }): Promise<string>;
  /** Throws `EnvelopeUnreadableError` when the envelope was tampered with or sealed for another row. */
  open(sealed: string, context: { noticeId: string; channel: string }): Promise<SendEnvelope>;
}

export class EnvelopeUnreadableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvelopeUnreadableError';
  }
}
