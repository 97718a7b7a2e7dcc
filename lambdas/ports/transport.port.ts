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
  /** The notice's deadline (epoch ms). */
  readonly deadline?: number | undefined;
}

export interface SmsMessage {
  readonly to: string;
  readonly body: string;
  readonly correlationId: string;
  readonly idempotencyKey: string;
  /** The notice's deadline (epoch ms): a provider that expires undelivered messages is told. */
  readonly deadline?: number | undefined;
}

/** What a provider's own suppression list says about a destination. */
export type ProviderSuppressionCheck =
  | { readonly kind: 'clear' }
  /** Listed: the destination must not be sent to; `code` is the provider's reason (no address). */
  | { readonly kind: 'suppressed'; readonly code: string }
  /** The check could not be made (timeout, 5xx): the send waits rather than risk it. */
  | { readonly kind: 'unavailable'; readonly code: string };

/**
 * The suppression-sync part of a transport (descriptor capability `suppressionSync`): a provider
 * that keeps its own suppression or opt-out list. Destinations are raw (the sender has opened the
 * envelope); nothing here may log them.
 */
export interface ProviderSuppressions {
  /** Asked before the claim; a listed destination ends `suppressed` and never reaches `send`. */
  check?(destination: string): Promise<ProviderSuppressionCheck>;
  /** Mirrors one of our suppressions into the provider's list; throws when it could not. */
  add?(destination: string, reason: string): Promise<void>;
}

/**
 * A provider for one channel. `send` makes exactly one provider call (no SDK retries) and
 * returns a typed outcome; it throws only for programming errors, never for a provider answer.
 */
export interface Transport<M> {
  readonly provider: string;
  send(message: M): Promise<ProviderOutcome>;
  readonly suppressions?: ProviderSuppressions | undefined;
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
