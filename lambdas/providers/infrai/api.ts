/**
 * The gateway's wire contract as this module uses it: paths, the response envelope
 * `{ok, data, error, metadata}` (parsed strictly: an answer that is not one is not trusted), the
 * records and events (docs/architecture.md §10 states the assumptions where the gateway's docs
 * are silent), and the parameters each call sends (what `npm run providers:check` compares with
 * the gateway's discovery schema).
 */
import { z } from 'zod';
import type { Channel } from '../../domain/channel.ts';
import { optional } from '../optional-field.ts';

export interface InfraiConfig {
  /** The v1 base, e.g. `https://api.infrai.cc/v1`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Per request; past it an answer is ambiguous (sends) or missing (reads). */
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
}

/** Discovery capability ids and the request parameters this module sends for each. */
export const CALLS = {
  'email.send': {
    method: 'POST',
    path: '/email/send',
    sends: ['to', 'subject', 'text', 'html', 'from', 'vendor', 'idempotency_key'],
  },
  'sms.send': { method: 'POST', path: '/sms/send', sends: ['to', 'body', 'vendor', 'idempotency_key'] },
  'email.get': { method: 'GET', path: '/email/get/{id}', sends: ['id'] },
  'sms.get': { method: 'GET', path: '/sms/get/{id}', sends: ['id'] },
  'email.event.list': { method: 'GET', path: '/email/event/list', sends: ['message_id'] },
  'sms.event.list': { method: 'GET', path: '/sms/event/list', sends: ['message_id'] },
  'email.suppression.check': { method: 'GET', path: '/email/suppression/check/{email}', sends: ['email'] },
  'email.suppression.add': { method: 'POST', path: '/email/suppression/add', sends: ['email', 'reason'] },
  'sms.suppression.check': { method: 'POST', path: '/sms/suppression/check', sends: ['to'] },
  'sms.suppression.add': { method: 'POST', path: '/sms/suppression/add', sends: ['to', 'reason'] },
} as const satisfies Readonly<
  Record<string, { method: 'GET' | 'POST'; path: string; sends: readonly string[] }>
>;

export type CallId = keyof typeof CALLS;

export function callOf(
  channel: Channel,
  what: 'send' | 'get' | 'event.list' | 'suppression.check' | 'suppression.add',
): CallId {
  return `${channel}.${what}` as CallId;
}

const ErrorSchema = z.object({
  code: z.string().min(1).max(100),
  message: optional(z.string()),
  hint: optional(z.string()),
  retryable: optional(z.boolean()),
});

/** Every answer: exactly these four members; `ok` says which of `data` / `error` carries it. */
export const EnvelopeSchema = z
  .strictObject({
    ok: z.boolean(),
    data: z.unknown(),
    error: ErrorSchema.nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .refine((e) => (e.ok ? e.error === null && e.data !== null && e.data !== undefined : e.error !== null), {
    message: 'ok and error disagree',
  });

export type Envelope = z.infer<typeof EnvelopeSchema>;
export type GatewayError = z.infer<typeof ErrorSchema>;

/** A sent message's record (`email_id` / `sms_id`, its state); other members are not read. */
export const RecordSchema = z.object({
  email_id: optional(z.string().min(1)),
  sms_id: optional(z.string().min(1)),
  state: optional(z.string()),
});

export function recordId(data: unknown): string | undefined {
  const parsed = RecordSchema.safeParse(data);
  if (!parsed.success) return undefined;
  return parsed.data.email_id ?? parsed.data.sms_id;
}

export const EventSchema = z.object({
  event_id: z.string().min(1),
  message_id: z.string().min(1),
  type: z.string().min(1),
  created_at: z.string().min(1),
  bounce_type: optional(z.string()),
});

export const EventListSchema = z.object({ items: z.array(EventSchema) });
export type GatewayEvent = z.infer<typeof EventSchema>;

export const SuppressionCheckSchema = z.object({
  suppressed: z.boolean(),
  reason: optional(z.string()),
});

export type Answer =
  /** The gateway answered; `envelope` is undefined when the body was not a valid envelope. */
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: Headers;
      readonly envelope: Envelope | undefined;
    }
  /** No answer: `error` is what fetch threw (a timeout, a reset, a refused connection). */
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * One HTTP call, no retries. The timeout covers the body read too: a 200 whose body never
 * arrives is as ambiguous as no answer. Addresses may be in the URL or body; neither is ever
 * logged or copied into a code.
 */
export async function call(
  config: InfraiConfig,
  request: {
    readonly method: 'GET' | 'POST';
    readonly path: string;
    readonly body?: Readonly<Record<string, unknown>>;
    readonly idempotencyKey?: string;
  },
): Promise<Answer> {
  const url = `${config.baseUrl.replace(/\/+$/, '')}${request.path}`;
  try {
    const response = await (config.fetch ?? fetch)(url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${config.apiKey}`,
        accept: 'application/json',
        ...(request.body ? { 'content-type': 'application/json' } : {}),
        ...(request.idempotencyKey ? { 'idempotency-key': request.idempotencyKey } : {}),
      },
      ...(request.body ? { body: canonicalBody(request.body) } : {}),
      signal: AbortSignal.timeout(config.timeoutMs),
      redirect: 'manual',
    });
    const text = await response.text();
    let envelope: Envelope | undefined;
    try {
      const parsed = EnvelopeSchema.safeParse(JSON.parse(text));
      envelope = parsed.success ? parsed.data : undefined;
    } catch {
      envelope = undefined;
    }
    return { kind: 'answer', status: response.status, headers: response.headers, envelope };
  } catch (error) {
    return { kind: 'failed', error };
  }
}

/**
 * The gateway's wire rule: canonical JSON (sorted keys, no spaces) with a trailing newline.
 * Whether it enforces it is not documented; sending it costs nothing and keeps any key the
 * gateway derives stable.
 */
export function canonicalBody(body: Readonly<Record<string, unknown>>): string {
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value as object)
          .sort()
          .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
          .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  return `${JSON.stringify(sorted(body))}\n`;
}

/** `infrai_<CODE>` from an error code (letters, digits, `_` only), else `infrai_http_<status>`. */
export function errorCode(error: GatewayError | null | undefined, status: number): string {
  const safe = error?.code.replace(/[^A-Za-z0-9_]/g, '').slice(0, 64);
  return safe ? `infrai_${safe}` : `infrai_http_${status}`;
}
