import { z } from 'zod';
import { parseCorrelationId } from '../../domain/identity.ts';
import type { DeliveryReport, InboundFacet, InboundVerdict } from '../../ports/provider.port.ts';
import { optional } from '../optional-field.ts';
import { descriptor } from './descriptor.ts';
import { SES_INTENT_HEADER, SES_INTENT_TAG } from './tags.ts';

/**
 * The part of an SES event (configuration-set event publishing → EventBridge) we act on.
 * Addresses in it (`destination`, `bouncedRecipients`) are read by nobody here and never logged.
 */
const SesEventDetailSchema = z.object({
  eventType: z.string(),
  mail: z.object({
    messageId: z.string().min(1),
    timestamp: optional(z.string()),
    tags: optional(z.record(z.string(), z.array(z.string()))),
    headers: optional(z.array(z.object({ name: z.string(), value: z.string() }))),
  }),
  bounce: optional(
    z.object({
      bounceType: z.string(),
      bounceSubType: optional(z.string()),
      timestamp: optional(z.string()),
    }),
  ),
  complaint: optional(
    z.object({
      complaintFeedbackType: optional(z.string()),
      complaintSubType: optional(z.string()),
      timestamp: optional(z.string()),
    }),
  ),
  delivery: optional(z.object({ timestamp: optional(z.string()) })),
  deliveryDelay: optional(z.object({ timestamp: optional(z.string()) })),
  reject: optional(z.object({ reason: optional(z.string()) })),
  failure: optional(z.object({ errorMessage: optional(z.string()) })),
});

export const SesEventSchema = z.object({
  'detail-type': z.string(),
  source: z.literal('aws.ses'),
  time: optional(z.string()),
  detail: SesEventDetailSchema,
});

export type SesEvent = z.infer<typeof SesEventSchema>;

export type SesEventMapping =
  | { readonly kind: 'report'; readonly report: DeliveryReport }
  | { readonly kind: 'ignore'; readonly why: string };

function correlationOf(detail: SesEvent['detail']): string | undefined {
  const tag = detail.mail.tags?.[SES_INTENT_TAG]?.[0];
  if (tag) return tag;
  return detail.mail.headers?.find((h) => h.name.toLowerCase() === SES_INTENT_HEADER.toLowerCase())?.value;
}

function timeOf(...candidates: (string | undefined)[]): number {
  for (const candidate of candidates) {
    const at = candidate ? Date.parse(candidate) : Number.NaN;
    if (Number.isFinite(at)) return at;
  }
  return Date.now();
}

/**
 * SES event → the ledger's delivery report:
 *   Delivery → delivered · Bounce Permanent → failed + suppression · Bounce Transient/Undetermined
 *   (published only once SES stopped retrying) → failed · Complaint → failed + suppression (if
 *   not yet final) · Reject / Rendering Failure → failed
 *   DeliveryDelay, Send → accepted: SES holds the message (no change on a row already past
 *   `accepted`); a row left `unknown` by a timed-out SendEmail is settled by it, not left to wait
 *   through SES's retries for the final word. The configuration set publishes no Send
 *   (descriptor.ts SES_PUBLISHED_EVENTS); one from a set that does is read the same way.
 *   Open, Click … → no state change.
 */
export function mapSesEvent(event: SesEvent): SesEventMapping {
  const { detail } = event;
  const ref = parseCorrelationId(correlationOf(detail) ?? '');
  if (!ref) return { kind: 'ignore', why: 'no_intent_correlation' };
  const base = { ref, provider: descriptor.id, receiptId: detail.mail.messageId };
  switch (detail.eventType) {
    case 'Send':
      return {
        kind: 'report',
        report: { ...base, kind: 'accepted', at: timeOf(detail.mail.timestamp, event.time) },
      };
    case 'DeliveryDelay':
      return {
        kind: 'report',
        report: { ...base, kind: 'accepted', at: timeOf(detail.deliveryDelay?.timestamp, event.time) },
      };
    case 'Delivery':
      return {
        kind: 'report',
        report: { ...base, kind: 'delivered', at: timeOf(detail.delivery?.timestamp, event.time) },
      };
    case 'Bounce': {
      const permanent = detail.bounce?.bounceType === 'Permanent';
      return {
        kind: 'report',
        report: {
          ...base,
          kind: 'failed',
          failure: permanent ? 'hard_bounce' : 'delivery_failed',
          code: `${detail.bounce?.bounceType ?? 'Unknown'}/${detail.bounce?.bounceSubType ?? 'Unknown'}`,
          suppress: permanent,
          at: timeOf(detail.bounce?.timestamp, event.time),
        },
      };
    }
    case 'Complaint':
      return {
        kind: 'report',
        report: {
          ...base,
          kind: 'failed',
          failure: 'complaint',
          code: detail.complaint?.complaintFeedbackType ?? 'complaint',
          suppress: true,
          at: timeOf(detail.complaint?.timestamp, event.time),
        },
      };
    case 'Reject':
    case 'Rendering Failure':
      return {
        kind: 'report',
        report: {
          ...base,
          kind: 'failed',
          failure: 'delivery_failed',
          code: detail.eventType === 'Reject' ? 'ses_reject' : 'ses_rendering_failure',
          at: timeOf(event.time),
        },
      };
    default:
      return { kind: 'ignore', why: `event_${detail.eventType.replace(/\W/g, '_').toLowerCase()}` };
  }
}

/**
 * The inbound facet: SES publishes through its configuration set to the default EventBridge bus;
 * the CDK binding routes `aws.ses` events of that configuration set to the provider-events
 * function (lib/providers/ses.ts), and locally the SES event feeder plays that part.
 */
export const facet: InboundFacet = {
  kind: 'eventbridge',
  sources: ['aws.ses'],
  create: () => (event) => verdictOf(event),
};

function verdictOf(event: {
  source: string;
  detailType: string;
  time: string | undefined;
  detail: unknown;
}): InboundVerdict {
  const parsed = SesEventSchema.safeParse({
    source: event.source,
    'detail-type': event.detailType,
    ...(event.time !== undefined ? { time: event.time } : {}),
    detail: event.detail,
  });
  if (!parsed.success) {
    return {
      kind: 'malformed',
      errors: [{ path: 'detail', code: 'invalid_format', message: 'not an SES event this module reads' }],
    };
  }
  const mapping = mapSesEvent(parsed.data);
  if (mapping.kind === 'report')
    return { kind: 'accepted', reports: [mapping.report], unmatched: 0, ignored: [] };
  if (mapping.why === 'no_intent_correlation')
    return { kind: 'accepted', reports: [], unmatched: 1, ignored: [] };
  return { kind: 'accepted', reports: [], unmatched: 0, ignored: [mapping.why] };
}
