import { parseCorrelationId } from '../../domain/identity.ts';
import type {
  DeliveryReport,
  InboundFacet,
  InboundVerdict,
  InboundViolation,
} from '../../ports/provider.port.ts';
import { setting } from '../settings.ts';
import { INTENT_ARG, isMessageId, receiptOf } from './api.ts';
import { descriptor } from './descriptor.ts';
import { checkDelivery, publicKeyOf, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature.ts';

/** One event as the Event Webhook posts it (custom args flattened to the top level). */
type SendGridEvent = Readonly<Record<string, unknown>>;

/**
 * `dropped` reasons that say the address is on one of SendGrid's own lists: the send was refused
 * because of an earlier bounce, spam report or unsubscribe, which our list must mirror.
 */
const LIST_DROPS: Readonly<Record<string, NonNullable<DeliveryReport['failure']>>> = {
  'Bounced Address': 'hard_bounce',
  'Spam Reporting Address': 'complaint',
  'Unsubscribed Address': 'complaint',
  'Invalid Address': 'hard_bounce',
};

function token(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(value) ? value : undefined;
}

export type SendGridEventMapping =
  | { readonly kind: 'report'; readonly report: DeliveryReport }
  | { readonly kind: 'unmatched' }
  | { readonly kind: 'ignore'; readonly why: string };

/**
 * Event → delivery report:
 *   processed → accepted (evidence that an ambiguous send was taken) · delivered → delivered
 *   bounce (type bounce) → failed hard_bounce + suppression · bounce type blocked → failed
 *   dropped → failed; + suppression when the reason names one of SendGrid's lists
 *   spamreport → failed complaint + suppression (a fact on a delivered row)
 *   unsubscribe, group_unsubscribe → delivered (the recipient had it) + suppression
 *   deferred, open, click, group_resubscribe … → ignored.
 * Matched by the `notice_intent` custom arg; the receipt is the `sg_message_id` prefix.
 */
export function mapSendGridEvent(event: SendGridEvent): SendGridEventMapping {
  const name = typeof event.event === 'string' ? event.event : '';
  const ref = parseCorrelationId(typeof event[INTENT_ARG] === 'string' ? (event[INTENT_ARG] as string) : '');
  const sgMessageId = typeof event.sg_message_id === 'string' ? event.sg_message_id : '';
  const receiptId = receiptOf(sgMessageId);
  if (ref?.channel !== 'email' || !isMessageId(receiptId)) return { kind: 'unmatched' };
  const seconds = typeof event.timestamp === 'number' ? event.timestamp : Number.NaN;
  const base = {
    ref,
    provider: descriptor.id,
    receiptId,
    at: Number.isFinite(seconds) ? seconds * 1000 : Date.now(),
    ...(typeof event.sg_event_id === 'string' ? { eventId: event.sg_event_id } : {}),
  };
  const report = (r: Omit<DeliveryReport, keyof typeof base>): SendGridEventMapping => ({
    kind: 'report',
    report: { ...base, ...r },
  });
  switch (name) {
    case 'processed':
      return report({ kind: 'accepted' });
    case 'delivered':
      return report({ kind: 'delivered' });
    case 'bounce': {
      const type = token(event.type) ?? 'bounce';
      return type === 'blocked'
        ? report({ kind: 'failed', failure: 'delivery_failed', code: 'sendgrid_blocked', suppress: false })
        : report({ kind: 'failed', failure: 'hard_bounce', code: 'sendgrid_bounce', suppress: true });
    }
    case 'dropped': {
      const listed = typeof event.reason === 'string' ? LIST_DROPS[event.reason] : undefined;
      return report({
        kind: 'failed',
        failure: listed ?? 'delivery_failed',
        code: listed ? `sendgrid_dropped_${listed}` : 'sendgrid_dropped',
        suppress: listed !== undefined,
      });
    }
    case 'spamreport':
      return report({ kind: 'failed', failure: 'complaint', code: 'sendgrid_spamreport', suppress: true });
    case 'unsubscribe':
    case 'group_unsubscribe':
      return report({ kind: 'delivered', failure: 'complaint', code: `sendgrid_${name}`, suppress: true });
    default:
      return { kind: 'ignore', why: name.replace(/[^a-z_]/g, '') || 'unknown' };
  }
}

/**
 * The inbound facet: `POST /v1/provider-events/sendgrid`. The ECDSA signature covers the
 * timestamp header and the raw body; a request that does not verify, or was signed more than ten
 * minutes from our clock (either way), is refused (403) and changes nothing. A delivery carries
 * many events (an array); each becomes a report, an event whose `sg_event_id` repeats one earlier
 * in the same delivery is dropped here, and one already applied by an earlier delivery is dropped
 * by the handler (the report carries the id).
 */
export const facet: InboundFacet = {
  kind: 'webhook',
  contentType: descriptor.webhook.contentType,
  create: (context) => {
    const key = publicKeyOf(setting(context, 'SENDGRID_WEBHOOK_PUBLIC_KEY'));
    return (request): InboundVerdict => {
      const check = checkDelivery(
        key,
        request.header(SIGNATURE_HEADER),
        request.header(TIMESTAMP_HEADER),
        request.body,
        context.clock.now(),
      );
      if (!check.ok)
        return { kind: 'refused', status: descriptor.webhook.refusedStatus, detail: check.detail };
      let events: unknown;
      try {
        events = JSON.parse(request.body);
      } catch {
        return {
          kind: 'malformed',
          errors: [{ path: '', code: 'invalid_json', message: 'the body is not JSON' }],
        };
      }
      if (!Array.isArray(events)) {
        const error: InboundViolation = {
          path: '',
          code: 'invalid_type',
          message: 'must be an array of events',
        };
        return { kind: 'malformed', errors: [error] };
      }
      const reports: DeliveryReport[] = [];
      const ignored: string[] = [];
      const seen = new Set<string>();
      let unmatched = 0;
      for (const event of events) {
        if (typeof event !== 'object' || event === null) {
          ignored.push('not_an_event');
          continue;
        }
        const id = (event as SendGridEvent).sg_event_id;
        if (typeof id === 'string') {
          if (seen.has(id)) {
            ignored.push('duplicate_event');
            continue;
          }
          seen.add(id);
        }
        const mapped = mapSendGridEvent(event as SendGridEvent);
        if (mapped.kind === 'report') reports.push(mapped.report);
        else if (mapped.kind === 'unmatched') unmatched += 1;
        else ignored.push(mapped.why);
      }
      return { kind: 'accepted', reports, unmatched, ignored };
    };
  },
};
