import type { ProviderOutcome } from '../domain/outcome.ts';

export interface EmailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string | undefined;
  /** Ties provider events back to the intent (message tags, webhook metadata, a callback query). */
  readonly correlationId: string;
  /** Same for every attempt of one (noticeId, channel); used by providers that support one. */
  readonly idempotencyKey: string;
}

export interface SmsMessage {
  readonly to: string;
  readonly body: string;
  readonly correlationId: string;
  readonly idempotencyKey: string;
}

/**
 * A provider for one channel. `send` makes exactly one provider call (no SDK retries) and
 * returns a typed outcome; it throws only for programming errors, never for a provider answer.
 */
export interface Transport<M> {
  readonly provider: string;
  send(message: M): Promise<ProviderOutcome>;
}

export type EmailTransport = Transport<EmailMessage>;
export type SmsTransport = Transport<SmsMessage>;
