import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { TransportFacet } from '../../ports/provider.port.ts';
import type { BatchSending, EmailMessage, EmailTransport, MessageBatch } from '../../ports/transport.port.ts';
import { setting } from '../settings.ts';
import {
  batchBody,
  call,
  MAX_BATCH,
  outcomeOfSend,
  outcomesOfBatch,
  REPLAY_WINDOW_MS,
  type ResendApiConfig,
  sendBody,
} from './api.ts';
import { descriptor } from './descriptor.ts';

/**
 * Resend email, one call per attempt, no retries. Every call carries an `Idempotency-Key`: the
 * ledger's key of the (notice, channel) for a single send (the same on every attempt), the batch
 * record's key for a batch call. Bodies come from ./api.ts, so an attempt and its replay are the
 * same bytes. Addresses and content never reach an outcome code; Resend's error `message` (which
 * may quote an address) is dropped.
 */
export class ResendEmailTransport implements EmailTransport, BatchSending<EmailMessage> {
  readonly provider = descriptor.id;
  readonly maxBatch = MAX_BATCH;
  readonly replayWindowMs = REPLAY_WINDOW_MS;
  readonly #config: ResendApiConfig;
  readonly #now: () => number;

  constructor(config: ResendApiConfig) {
    // A malformed origin is a deployment mistake, caught before any send.
    new URL(config.baseUrl);
    if (!(config.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
    this.#config = config;
    this.#now = config.now ?? Date.now;
  }

  async send(message: EmailMessage): Promise<ProviderOutcome> {
    const answer = await call(this.#config, {
      method: 'POST',
      path: '/emails',
      body: sendBody(message, this.#config.from),
      headers: { 'idempotency-key': message.idempotencyKey },
    });
    return outcomeOfSend(answer, this.#now());
  }

  /**
   * `POST /emails/batch` with permissive validation: the valid emails are created and each
   * invalid one comes back by index, so one bad address fails only its own row.
   */
  async sendBatch(batch: MessageBatch<EmailMessage>): Promise<ProviderOutcome[]> {
    if (batch.messages.length === 0) return [];
    if (batch.messages.length > MAX_BATCH) throw new RangeError(`a batch takes at most ${MAX_BATCH} emails`);
    const answer = await call(this.#config, {
      method: 'POST',
      path: '/emails/batch',
      body: batchBody(batch.messages, this.#config.from),
      headers: { 'idempotency-key': batch.idempotencyKey, 'x-batch-validation': 'permissive' },
    });
    return outcomesOfBatch(answer, batch.messages.length, this.#now());
  }
}

export function resendConfigOf(
  context: Parameters<NonNullable<TransportFacet['email']>>[0],
): ResendApiConfig {
  return {
    baseUrl: setting(context, 'RESEND_BASE_URL'),
    apiKey: setting(context, 'RESEND_API_KEY'),
    from: setting(context, 'RESEND_FROM'),
    timeoutMs: context.timeoutMs,
    now: context.clock.now,
  };
}

/** The transport facet: the email sender's transport. */
export const facet: TransportFacet = {
  email: (context) => new ResendEmailTransport(resendConfigOf(context)),
};
