import type { Channel } from '../../domain/channel.ts';
import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { TransportFacet } from '../../ports/provider.port.ts';
import type {
  EmailMessage,
  ProviderSuppressionCheck,
  ProviderSuppressions,
  SmsMessage,
  Transport,
} from '../../ports/transport.port.ts';
import { outcomeForNetworkError, parseRetryAfter } from '../fetch-send.ts';
import { setting } from '../settings.ts';
import {
  type Answer,
  CALLS,
  call,
  callOf,
  errorCode,
  type InfraiConfig,
  recordId,
  SuppressionCheckSchema,
} from './api.ts';

export interface InfraiTransportOptions extends InfraiConfig {
  readonly vendor?: string | undefined;
  readonly emailFrom?: string | undefined;
  /** Only used to turn an HTTP-date `Retry-After` into a delay. */
  readonly now?: () => number;
}

/** The send request's body for one message (what a replay must repeat exactly). */
export function sendBody(
  channel: Channel,
  message: EmailMessage | SmsMessage,
  options: Pick<InfraiTransportOptions, 'vendor' | 'emailFrom'>,
): Record<string, unknown> {
  const common = { idempotency_key: message.idempotencyKey, vendor: options.vendor };
  if (channel === 'email') {
    const email = message as EmailMessage;
    return {
      ...common,
      to: email.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
      from: options.emailFrom,
    };
  }
  const sms = message as SmsMessage;
  return { ...common, to: sms.to, body: sms.body };
}

/** One send, or its replay under the same key (the reconciler's lookup). */
export async function sendOnce(
  channel: Channel,
  message: EmailMessage | SmsMessage,
  options: InfraiTransportOptions,
): Promise<ProviderOutcome> {
  const { method, path } = CALLS[callOf(channel, 'send')];
  const answer = await call(options, {
    method,
    path,
    body: sendBody(channel, message, options),
    idempotencyKey: message.idempotencyKey,
  });
  return classifySendAnswer(answer, (options.now ?? Date.now)());
}

/**
 * A send's answer → an outcome. Pure. Only an answer that proves the gateway did not take the
 * message is retryable: a 429 (its Retry-After), a 503, a 408, or an error the gateway itself
 * flags `retryable` (our own Idempotency-Key makes repeating it safe). A timeout or a reset after
 * the request was written is ambiguous whatever any flag says; so is a success whose envelope
 * cannot be read, and a 5xx without the flag. 402 INSUFFICIENT_CREDIT and 401/403 (the key) are
 * our account's: an operator must act.
 */
export function classifySendAnswer(answer: Answer, now: number): ProviderOutcome {
  if (answer.kind === 'failed') return outcomeForNetworkError(answer.error);
  const { status, envelope } = answer;
  const error = envelope?.ok === false ? envelope.error : undefined;
  const code = errorCode(error, status);
  if (status >= 200 && status < 300) {
    const id = envelope?.ok ? recordId(envelope.data) : undefined;
    return id ? { kind: 'accepted', receiptId: id } : { kind: 'ambiguous', code: 'infrai_unreadable_answer' };
  }
  if (status === 402 || status === 401 || status === 403) {
    return {
      kind: 'operator_action_required',
      code: status === 402 && !error ? 'infrai_INSUFFICIENT_CREDIT' : code,
    };
  }
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), now);
    return {
      kind: 'retryable',
      code,
      throttled: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (status === 408 || status === 503 || error?.retryable === true) {
    return { kind: 'retryable', code, throttled: false };
  }
  // A key already in flight, or reused with other content: the gateway may hold a message.
  if (status === 409) return { kind: 'ambiguous', code };
  if (status >= 400 && status < 500) return { kind: 'rejected', code, permanent: true };
  return { kind: 'ambiguous', code };
}

/** The gateway's suppression list for one channel: asked before every claim, and mirrored into. */
function suppressionsOf(channel: Channel, options: InfraiTransportOptions): ProviderSuppressions {
  return {
    async check(destination): Promise<ProviderSuppressionCheck> {
      const answer =
        channel === 'email'
          ? await call(options, {
              method: 'GET',
              path: CALLS['email.suppression.check'].path.replace('{email}', encodeURIComponent(destination)),
            })
          : await call(options, {
              method: 'POST',
              path: CALLS['sms.suppression.check'].path,
              body: { to: destination },
            });
      if (answer.kind === 'failed') return { kind: 'unavailable', code: 'infrai_unreachable' };
      if (!answer.envelope?.ok)
        return { kind: 'unavailable', code: errorCode(answer.envelope?.error, answer.status) };
      const parsed = SuppressionCheckSchema.safeParse(answer.envelope.data);
      if (!parsed.success) return { kind: 'unavailable', code: 'infrai_unreadable_answer' };
      if (!parsed.data.suppressed) return { kind: 'clear' };
      const reason = parsed.data.reason?.replace(/[^A-Za-z0-9_]/g, '').slice(0, 40);
      return { kind: 'suppressed', code: `infrai_${reason || 'listed'}` };
    },
    async add(destination, reason) {
      const { path } = CALLS[callOf(channel, 'suppression.add')];
      const body = channel === 'email' ? { email: destination, reason } : { to: destination, reason };
      const answer = await call(options, { method: 'POST', path, body });
      if (answer.kind === 'failed' || !answer.envelope?.ok) {
        throw new Error(
          `infrai suppression add failed (${answer.kind === 'failed' ? 'no answer' : answer.status})`,
        );
      }
    },
  };
}

/** One channel of the gateway: one POST per attempt with our idempotency key, no retries. */
export class InfraiTransport<M extends EmailMessage | SmsMessage> implements Transport<M> {
  readonly provider = 'infrai';
  readonly suppressions: ProviderSuppressions;
  constructor(
    private readonly channel: Channel,
    private readonly options: InfraiTransportOptions,
  ) {
    new URL(options.baseUrl);
    this.suppressions = suppressionsOf(channel, options);
  }
  send(message: M): Promise<ProviderOutcome> {
    return sendOnce(this.channel, message, this.options);
  }
}

export function infraiOptions(
  context: Parameters<NonNullable<TransportFacet['email']>>[0],
): InfraiTransportOptions {
  return {
    baseUrl: setting(context, 'INFRAI_BASE_URL'),
    apiKey: setting(context, 'INFRAI_API_KEY'),
    vendor: context.settings.INFRAI_VENDOR,
    emailFrom: context.settings.INFRAI_EMAIL_FROM,
    timeoutMs: context.timeoutMs,
    now: context.clock.now,
  };
}

/** The transport facet: both channels. */
export const facet: TransportFacet = {
  email: (context) => new InfraiTransport<EmailMessage>('email', infraiOptions(context)),
  sms: (context) => new InfraiTransport<SmsMessage>('sms', infraiOptions(context)),
};
