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

/** One provider call carrying many messages, under one idempotency key for the whole call. */
export interface MessageBatch<M> {
  readonly idempotencyKey: string;
  readonly messages: readonly M[];
}

/**
 * A transport that can also send many messages in one call with one result per message
 * (`capabilities.batchSend`). `sendBatch` makes exactly one call and returns one outcome per
 * message, in order; a whole-call answer (a timeout, a 429) is that outcome for every message.
 */
export interface BatchSending<M> {
  /** The most messages one call may carry (the provider's own limit). */
  readonly maxBatch: number;
  /**
   * How long the provider answers a replay of a call under its key with the original answer
   * (without sending again): the batch record is kept at least this long.
   */
  readonly replayWindowMs: number;
  sendBatch(batch: MessageBatch<M>): Promise<ProviderOutcome[]>;
}

export type EmailTransport = Transport<EmailMessage> & Partial<BatchSending<EmailMessage>>;
export type SmsTransport = Transport<SmsMessage>;
