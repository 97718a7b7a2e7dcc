import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { TransportFacet } from '../../ports/provider.port.ts';
import type { SmsMessage, SmsTransport } from '../../ports/transport.port.ts';
import { outcomeForNetworkError, parseRetryAfter } from '../fetch-send.ts';
import { setting } from '../settings.ts';

export { outcomeForNetworkError, parseRetryAfter };

import { type TwilioApiConfig, twilioBasicAuth, twilioMessagesUrl } from './api.ts';
import { CALLBACK_CORRELATION_PARAM, callbackUrl } from './callbacks.ts';

export interface TwilioSmsTransportOptions extends TwilioApiConfig {
  /** Sender: an E.164 number or alphanumeric sender ID owned by the account. */
  readonly from: string;
  /** Where Twilio posts status callbacks (`POST /v1/provider-events/twilio`). */
  readonly statusCallbackUrl?: string | undefined;
  /**
   * When set, the message's `correlationId` is added to the StatusCallback URL under this
   * query parameter. Twilio signs the full URL, so the value cannot be forged, and a callback
   * for a send whose outcome was ambiguous (no SID recorded yet) can still be tied to its
   * intent. The events handler must then verify the signature over the URL with its query.
   */
  readonly callbackCorrelationParam?: string | undefined;
  /** `PROVIDER_TIMEOUT_MS`: past it the outcome is ambiguous, never retried blindly. */
  readonly timeoutMs: number;
  /** Only used to turn an HTTP-date `Retry-After` into a delay. */
  readonly now?: () => number;
}

/**
 * The transport facet: status callbacks go to this deployment's webhook and name their intent
 * (`?ref=ntc_…-sms`), so a callback can settle a row whose own outcome was ambiguous, before any
 * SID was recorded. Twilio signs the full URL, query included.
 */
export const facet: TransportFacet = {
  sms: (context) =>
    new TwilioSmsTransport({
      baseUrl: setting(context, 'TWILIO_BASE_URL'),
      accountSid: setting(context, 'TWILIO_ACCOUNT_SID'),
      authToken: setting(context, 'TWILIO_AUTH_TOKEN'),
      from: setting(context, 'TWILIO_FROM'),
      statusCallbackUrl: context.publicBaseUrl ? callbackUrl(context.publicBaseUrl) : undefined,
      callbackCorrelationParam: CALLBACK_CORRELATION_PARAM,
      timeoutMs: context.timeoutMs,
    }),
};

/**
 * Prefix of rejection codes caused by our own account or configuration (credentials, sender),
 * not by the recipient: they fail every message alike, so they should page someone rather than
 * quietly mark one notice as failed.
 */
export const TWILIO_CONFIG_CODE_PREFIX = 'twilio_config_';

/** Rejections about the destination or the content; resending the same message cannot succeed. */
const PERMANENT_MESSAGE_ERRORS: ReadonlySet<number> = new Set([
  21211, // invalid 'To' number
  21214, // 'To' number cannot be reached
  21265, // 'To' is a short code
  21266, // 'To' and 'From' are the same
  21401, // invalid phone number
  21407, // number type does not support SMS
  21408, // sending to this region is not enabled (geo permissions)
  21602, // body required
  21604, // 'To' required
  21610, // recipient replied STOP (unsubscribed)
  21612, // no route from this sender to 'To'
  21614, // 'To' is not a mobile number
  21617, // body longer than 1600 characters
  21619, // body or media required
  21635, // 'To' is a landline
]);

/**
 * Twilio refuses our account, not this message: every message would meet the same answer and a
 * person must act (`operator_action_required`: the channel is held, or fails over to its fallback).
 */
const ACCOUNT_REFUSALS: ReadonlySet<number> = new Set([
  20003, // authentication failed (a wrong or revoked auth token)
  20005, // account not active (suspended, closed, or out of funds)
]);

/** Our account or setup is wrong; permanent for this message too, but named apart. */
const CONFIGURATION_ERRORS: ReadonlySet<number> = new Set([
  20008, // test credentials used against the live API
  20404, // account (or resource) not found: wrong Account SID
  21212, // invalid 'From'
  21603, // 'From' required
  21606, // 'From' is not an SMS-capable number of this account
  21608, // trial account: unverified destination
  21609, // invalid StatusCallback URL
  21659, // 'From' is not a Twilio number
  21660, // 'From' does not belong to the account
]);

/** 4xx answers that mean "not now", not "never": the message was not queued. */
const THROTTLING_ERRORS: ReadonlySet<number> = new Set([
  14107, // message send rate exceeded
  20429, // too many concurrent requests
  21611, // the 'From' number's outgoing queue is full
]);

/**
 * Twilio SMS over its REST API, one POST per `send`, no retries. The request carries the phone
 * number and the rendered body; neither is ever copied into an outcome code, and Twilio's
 * error `message` (which quotes the number) is deliberately dropped.
 *
 * Twilio's create has no idempotency key, so `message.idempotencyKey` cannot be sent: an
 * ambiguous outcome is resolved by `findMessages` (destination + time + body) instead.
 */
export class TwilioSmsTransport implements SmsTransport {
  readonly provider = 'twilio';
  readonly #options: TwilioSmsTransportOptions;
  readonly #url: string;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(options: TwilioSmsTransportOptions) {
    // A malformed origin is a deployment mistake; failing here keeps `send` from having to
    // tell configuration errors apart from network errors.
    new URL(options.baseUrl);
    if (!(options.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
    this.#options = options;
    this.#url = twilioMessagesUrl(options);
    this.#fetch = options.fetch ?? fetch;
    this.#now = options.now ?? Date.now;
  }

  async send(message: SmsMessage): Promise<ProviderOutcome> {
    const form = new URLSearchParams({ To: message.to, From: this.#options.from, Body: message.body });
    const callbackUrl = this.#statusCallbackFor(message);
    if (callbackUrl !== undefined) form.set('StatusCallback', callbackUrl);

    let response: Response;
    try {
      response = await this.#fetch(this.#url, {
        method: 'POST',
        headers: {
          authorization: twilioBasicAuth(this.#options),
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        // The timeout covers the body read below too: a 201 whose body never arrives is as
        // ambiguous as no answer at all.
        signal: AbortSignal.timeout(this.#options.timeoutMs),
        // A redirect would turn the POST into a GET elsewhere; surface it instead.
        redirect: 'manual',
      });
    } catch (error) {
      return outcomeForNetworkError(error);
    }

    let body: unknown;
    let bodyError: unknown;
    try {
      const text = await response.text();
      body = text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      bodyError = error;
    }
    const outcome = outcomeForTwilioResponse(response.status, body, response.headers, this.#now());
    if (
      bodyError !== undefined &&
      outcome.kind === 'ambiguous' &&
      response.status >= 200 &&
      response.status < 300
    ) {
      // Accepted, but we could not read the SID: say why, so the reconciler's lookup is expected.
      const network = outcomeForNetworkError(bodyError);
      if (network.kind === 'ambiguous') return network;
    }
    return outcome;
  }

  #statusCallbackFor(message: SmsMessage): string | undefined {
    const base = this.#options.statusCallbackUrl;
    if (!base) return undefined;
    const param = this.#options.callbackCorrelationParam;
    if (!param) return base;
    const url = new URL(base);
    url.searchParams.set(param, message.correlationId);
    return url.toString();
  }
}

/**
 * Maps one HTTP answer from the Messages endpoint to an outcome. Pure; exported for tests.
 *
 * 5xx, the judgement call: Twilio promises "never processed, always safe to retry" only for
 * 20429 (HTTP 429). A 500 means the server failed somewhere while handling the request, which
 * may be after the message was queued, so it is `ambiguous` and the reconciler looks the
 * message up before anything is resent. 502 and 504 come from a gateway that lost or timed out
 * on the upstream answer, so the upstream may have queued it: also `ambiguous`. A 503 says the
 * service is unavailable (overload, maintenance): RFC 9110 §15.6.4 defines it as the server
 * being unable to handle the request, and load balancers emit it when no backend took the
 * request, so it is `retryable` (not throttled: it is an outage, not a rate signal, and must
 * not tune the shared send rate down). The residual risk, a backend that queued the message
 * and still answered 503, costs a duplicate SMS; treating 503 as ambiguous would instead
 * stall every send behind a lookup for the length of an outage.
 */
export function outcomeForTwilioResponse(
  status: number,
  body: unknown,
  headers: Pick<Headers, 'get'>,
  now: number,
): ProviderOutcome {
  const twilioCode = errorCodeOf(body);

  if (status === 200 || status === 201) {
    const sid = sidOf(body);
    return sid !== undefined
      ? { kind: 'accepted', receiptId: sid }
      : { kind: 'ambiguous', code: 'twilio_unreadable_2xx' };
  }
  if (status >= 200 && status < 300) {
    // Twilio documents 201 only; any other success may still mean queued.
    const sid = sidOf(body);
    return sid !== undefined
      ? { kind: 'accepted', receiptId: sid }
      : { kind: 'ambiguous', code: `twilio_${status}` };
  }

  const retryAfterMs = parseRetryAfter(headers.get('retry-after'), now);
  const withRetryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };

  if (status === 429 || (twilioCode !== undefined && THROTTLING_ERRORS.has(twilioCode) && status < 500)) {
    const code = status === 429 ? 'twilio_429' : `twilio_${twilioCode}`;
    return { kind: 'retryable', code, throttled: true, ...withRetryAfter };
  }
  if (status === 503) return { kind: 'retryable', code: 'twilio_503', throttled: false, ...withRetryAfter };
  if (status >= 500) return { kind: 'ambiguous', code: `twilio_${status}` };
  if (status === 408) {
    // The server gave up waiting for our request to arrive: it never had the whole request.
    return { kind: 'retryable', code: 'twilio_408', throttled: false, ...withRetryAfter };
  }

  if (status >= 400) {
    if (twilioCode !== undefined) {
      if (ACCOUNT_REFUSALS.has(twilioCode))
        return { kind: 'operator_action_required', code: `twilio_${twilioCode}` };
      if (CONFIGURATION_ERRORS.has(twilioCode)) {
        return { kind: 'rejected', code: `${TWILIO_CONFIG_CODE_PREFIX}${twilioCode}`, permanent: true };
      }
      if (PERMANENT_MESSAGE_ERRORS.has(twilioCode)) {
        return { kind: 'rejected', code: `twilio_${twilioCode}`, permanent: true };
      }
      // An unlisted code may be transient (carrier or account limits); retries are bounded by
      // MAX_ATTEMPTS and the deadline, and every one of them was provably refused.
      return { kind: 'rejected', code: `twilio_${twilioCode}`, permanent: false };
    }
    if (status === 401 || status === 403)
      return { kind: 'operator_action_required', code: `twilio_http_${status}` };
    if (status === 404) {
      return { kind: 'rejected', code: `${TWILIO_CONFIG_CODE_PREFIX}http_${status}`, permanent: true };
    }
    return { kind: 'rejected', code: `twilio_${status}`, permanent: false };
  }

  // 1xx/3xx: nothing Twilio documents for this endpoint; do not guess that it was refused.
  return { kind: 'ambiguous', code: `twilio_${status}` };
}

function sidOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const sid = (body as { sid?: unknown }).sid;
  return typeof sid === 'string' && /^[A-Za-z]{2}[0-9a-fA-F]{32}$/.test(sid) ? sid : undefined;
}

/** Twilio error codes are integers; anything else is ignored so no free text reaches a code. */
function errorCodeOf(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const code = (body as { code?: unknown }).code;
  const n = typeof code === 'string' && /^\d{1,6}$/.test(code) ? Number(code) : code;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n < 1_000_000 ? n : undefined;
}
