import { parseCorrelationId } from '../../domain/identity.ts';
import type { DeliveryReport, InboundFacet, InboundVerdict } from '../../ports/provider.port.ts';
import { setting } from '../settings.ts';
import { INTENT_HEADER, INTENT_TAG } from './api.ts';
import { descriptor } from './descriptor.ts';
import { verify } from './svix.ts';

/** The part of a webhook event we read; addresses in it (`to`, `from`) are never read or logged. */
interface ResendEvent {
  readonly type: string;
  readonly created_at?: string;
  readonly data: {
    readonly email_id: string;
    readonly created_at?: string;
    readonly tags?: Readonly<Record<string, unknown>>;
    readonly headers?: readonly { readonly name?: unknown; readonly value?: unknown }[];
    readonly bounce?: { readonly type?: unknown; readonly subType?: unknown };
    readonly failed?: { readonly reason?: unknown };
    readonly suppressed?: { readonly type?: unknown; readonly reason?: unknown };
  };
}

export type ResendEventMapping =
  | { readonly kind: 'report'; readonly report: DeliveryReport }
  | { readonly kind: 'unmatched' }
  | { readonly kind: 'ignore'; readonly why: string };

/** A code from the provider's vocabulary: letters, digits and `_` only, never free text. */
function token(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(value) ? value : undefined;
}

function correlationOf(data: ResendEvent['data']): string | undefined {
  const tag = data.tags?.[INTENT_TAG];
  if (typeof tag === 'string') return tag;
  const header = data.headers?.find(
    (h) => typeof h.name === 'string' && h.name.toLowerCase() === INTENT_HEADER.toLowerCase(),
  );
  return typeof header?.value === 'string' ? header.value : undefined;
}

/**
 * Resend event → the ledger's delivery report (the bounce vocabulary is SES's):
 *   email.sent → accepted (settles `sending` / `unknown`) · email.delivered → delivered
 *   email.bounced Permanent → failed hard_bounce + suppression · other bounces → failed
 *   email.complained → failed complaint + suppression (a fact after delivery)
 *   email.suppressed → failed + suppression (Resend's own list: a previous bounce or complaint)
 *   email.failed → failed (not sent, e.g. a spent quota)
 *   email.delivery_delayed, opened, clicked, scheduled, received and non-email events → ignored.
 */
export function mapResendEvent(event: ResendEvent, eventId: string | undefined): ResendEventMapping {
  const kind = event.type;
  if (!kind.startsWith('email.')) return { kind: 'ignore', why: kind.replace(/[^a-z_.]/g, '') || 'unknown' };
  const ref = parseCorrelationId(correlationOf(event.data) ?? '');
  if (ref?.channel !== 'email') return { kind: 'unmatched' };
  const at = Date.parse(event.created_at ?? event.data.created_at ?? '');
  const base = {
    ref,
    provider: descriptor.id,
    receiptId: event.data.email_id,
    at: Number.isNaN(at) ? Date.now() : at,
    ...(eventId !== undefined ? { eventId } : {}),
  };
  const report = (r: Omit<DeliveryReport, keyof typeof base>): ResendEventMapping => ({
    kind: 'report',
    report: { ...base, ...r },
  });
  switch (kind) {
    case 'email.sent':
      return report({ kind: 'accepted' });
    case 'email.delivered':
      return report({ kind: 'delivered' });
    case 'email.bounced': {
      const type = token(event.data.bounce?.type) ?? 'Undetermined';
      const subType = token(event.data.bounce?.subType);
      const code = `resend_bounce_${type}${subType ? `_${subType}` : ''}`;
      return type === 'Permanent'
        ? report({ kind: 'failed', failure: 'hard_bounce', code, suppress: true })
        : report({ kind: 'failed', failure: 'delivery_failed', code, suppress: false });
    }
    case 'email.complained':
      return report({ kind: 'failed', failure: 'complaint', code: 'resend_complaint', suppress: true });
    case 'email.suppressed': {
      const reason = token(event.data.suppressed?.reason);
      return report({
        kind: 'failed',
        failure: reason === 'previous_complaint' ? 'complaint' : 'hard_bounce',
        code: `resend_suppressed${reason ? `_${reason}` : ''}`,
        suppress: true,
      });
    }
    case 'email.failed': {
      const reason = token(event.data.failed?.reason);
      return report({
        kind: 'failed',
        failure: 'delivery_failed',
        code: `resend_failed${reason ? `_${reason}` : ''}`,
      });
    }
    default:
      return { kind: 'ignore', why: kind.replace(/[^a-z_.]/g, '') };
  }
}

/** Parses the raw body as one event; what is unusable is named by its path, never its value. */
function parseEvent(
  body: string,
): ResendEvent | { readonly errors: { path: string; code: string; message: string }[] } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { errors: [{ path: '', code: 'invalid_json', message: 'the body is not JSON' }] };
  }
  const v = value as { type?: unknown; data?: { email_id?: unknown } } | null;
  const errors: { path: string; code: string; message: string }[] = [];
  if (typeof v?.type !== 'string' || v.type === '')
    errors.push({ path: 'type', code: 'required', message: 'is required' });
  if (typeof v?.data !== 'object' || v.data === null) {
    errors.push({ path: 'data', code: 'required', message: 'is required' });
  } else if (
    String(v.type).startsWith('email.') &&
    (typeof v.data.email_id !== 'string' || v.data.email_id === '')
  ) {
    errors.push({ path: 'data.email_id', code: 'required', message: 'is required' });
  }
  return errors.length > 0 ? { errors } : (value as ResendEvent);
}

/**
 * The inbound facet: `POST /v1/provider-events/resend`. The Svix signature covers the id, the
 * timestamp (±5 min of our clock) and the raw body; anything that does not verify changes
 * nothing. Each event carries its `svix-id`, the same on Svix's retries and replays.
 */
export const facet: InboundFacet = {
  kind: 'webhook',
  contentType: descriptor.webhook.contentType,
  create: (context) => {
    const secret = setting(context, 'RESEND_WEBHOOK_SECRET');
    return (request): InboundVerdict => {
      const check = verify(secret, request.header, request.body, context.clock.now());
      if (!check.ok) return { kind: 'refused', status: check.status, detail: check.detail };
      const event = parseEvent(request.body);
      if ('errors' in event) return { kind: 'malformed', errors: event.errors };
      const mapped = mapResendEvent(event, check.id);
      if (mapped.kind === 'unmatched') return { kind: 'accepted', reports: [], unmatched: 1, ignored: [] };
      if (mapped.kind === 'ignore')
        return { kind: 'accepted', reports: [], unmatched: 0, ignored: [mapped.why] };
      return { kind: 'accepted', reports: [mapped.report], unmatched: 0, ignored: [] };
    };
  },
};
