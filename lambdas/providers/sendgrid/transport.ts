import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { ProviderContext, TransportFacet } from '../../ports/provider.port.ts';
import type { EmailMessage, EmailTransport } from '../../ports/transport.port.ts';
import { outcomeForNetworkError } from '../fetch-send.ts';
import { setting } from '../settings.ts';
import { apiUrl, INTENT_ARG, INTENT_HEADER, isMessageId, type SendGridApiConfig } from './api.ts';
import { descriptor } from './descriptor.ts';

export interface SendGridTransportOptions extends SendGridApiConfig {
  readonly from: string;
}

/**
 * SendGrid Mail Send, one POST per attempt, no retries, no idempotency key (there is none):
 * an ambiguous answer is never resent blindly; the Event Webhook or the Activity lookup settles
 * it, or the unknown policy. The correlation rides in `custom_args` (flattened into every event)
 * and in a header. Error bodies (which may quote an address) are not read into codes.
 */
export class SendGridEmailTransport implements EmailTransport {
  readonly provider = descriptor.id;
  readonly #options: SendGridTransportOptions;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(options: SendGridTransportOptions) {
    new URL(options.baseUrl);
    if (!(options.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
  }

  async send(message: EmailMessage): Promise<ProviderOutcome> {
    const body = JSON.stringify({
      personalizations: [
        { to: [{ email: message.to }], custom_args: { [INTENT_ARG]: message.correlationId } },
      ],
      from: { email: this.#options.from },
      subject: message.subject,
      content: [
        { type: 'text/plain', value: message.text },
        ...(message.html === undefined ? [] : [{ type: 'text/html', value: message.html }]),
      ],
      headers: { [INTENT_HEADER]: message.correlationId },
    });
    let response: Response;
    try {
      response = await this.#fetch(apiUrl(this.#options, '/v3/mail/send'), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#options.apiKey}`,
          'content-type': 'application/json',
        },
        body,
        signal: AbortSignal.timeout(this.#options.timeoutMs),
        redirect: 'manual',
      });
    } catch (error) {
      return outcomeForNetworkError(error);
    }
    // The receipt is a header: a 202 is accepted once its headers are here; the (empty) body is
    // read only to free the connection.
    await response.arrayBuffer().catch(() => undefined);
    return outcomeForSendGridResponse(response.status, response.headers, this.#now());
  }
}

/**
 * One answer of `POST /v3/mail/send` as an outcome. Pure; exported for tests.
 *  - 202 with `X-Message-Id`: accepted (the receipt); a 2xx without it: ambiguous;
 *  - 429: retryable, throttled, until `X-RateLimit-Reset` (epoch seconds; SendGrid documents no
 *    Retry-After);
 *  - 401 / 403 (key refused, missing scope, sender not verified), 404 / 405 (wrong origin):
 *    operational, every email would meet them;
 *  - 400 / 413: rejected, permanently; other 4xx: rejected, may pass later;
 *  - 5xx and anything else: ambiguous (no key to make a replay safe).
 */
export function outcomeForSendGridResponse(
  status: number,
  headers: Pick<Headers, 'get'>,
  now: number,
): ProviderOutcome {
  if (status >= 200 && status < 300) {
    const id = headers.get('x-message-id');
    return isMessageId(id)
      ? { kind: 'accepted', receiptId: id }
      : { kind: 'ambiguous', code: `sendgrid_${status}` };
  }
  const code = `sendgrid_${status}`;
  if (status === 429) {
    const reset = headers.get('x-ratelimit-reset')?.trim();
    const retryAfterMs = reset && /^\d+$/.test(reset) ? Math.max(0, Number(reset) * 1000 - now) : undefined;
    return {
      kind: 'retryable',
      code,
      throttled: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (status === 401 || status === 403 || status === 404 || status === 405)
    return { kind: 'operator_action_required', code };
  if (status === 400 || status === 413) return { kind: 'rejected', code, permanent: true };
  if (status === 408) return { kind: 'retryable', code, throttled: false };
  if (status >= 400 && status < 500) return { kind: 'rejected', code, permanent: false };
  return { kind: 'ambiguous', code };
}

export function sendGridConfigOf(context: ProviderContext): SendGridApiConfig {
  return {
    baseUrl: setting(context, 'SENDGRID_BASE_URL'),
    apiKey: setting(context, 'SENDGRID_API_KEY'),
    timeoutMs: context.timeoutMs,
    now: context.clock.now,
  };
}

/** The transport facet: the email sender's transport. */
export const facet: TransportFacet = {
  email: (context) =>
    new SendGridEmailTransport({ ...sendGridConfigOf(context), from: setting(context, 'SENDGRID_FROM') }),
};
