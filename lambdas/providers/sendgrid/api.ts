/** What SendGrid's transport, lookup and inbound facets share: the origin, auth, the correlation. */

export interface SendGridApiConfig {
  /** API origin, e.g. `https://api.sendgrid.com`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  /** Injected for tests; defaults to the global `fetch`. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** The custom arg every email carries; the Event Webhook flattens it into each event's top level. */
export const INTENT_ARG = 'notice_intent';
/** The same id as a message header. */
export const INTENT_HEADER = 'X-Notice-Intent';

export function apiUrl(config: Pick<SendGridApiConfig, 'baseUrl'>, path: string): string {
  return `${config.baseUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * The send's receipt from an event's `sg_message_id`: SendGrid makes it per recipient by
 * appending to the request's `X-Message-Id`, so the part before the first `.` is the receipt.
 */
export function receiptOf(sgMessageId: string): string {
  return sgMessageId.split('.', 1)[0] as string;
}

const MESSAGE_ID = /^[A-Za-z0-9_-]{8,64}$/;

export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && MESSAGE_ID.test(value);
}
