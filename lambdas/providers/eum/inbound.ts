import { z } from 'zod';
import { parseCorrelationId } from '../../domain/identity.ts';
import type { DeliveryReport, InboundFacet, InboundVerdict } from '../../ports/provider.port.ts';
import { optional } from '../optional-field.ts';
import {
  descriptor,
  EUM_EVENT_SOURCE,
  EUM_INTENT_CONTEXT_KEY,
  EUM_TEXT_EVENT_DETAIL_TYPE,
} from './descriptor.ts';

/** The part of a text message event we act on; the phone numbers in it are read by nobody. */
const EumTextEventSchema = z.object({
  eventType: z.string().min(1),
  isFinal: optional(z.boolean()),
  messageId: z.string().min(1),
  eventTimestamp: optional(z.number()),
  context: optional(z.record(z.string(), z.string())),
});

type EumTextEvent = z.infer<typeof EumTextEventSchema>;

/**
 * Failure event types → what they say about the destination. TEXT_INVALID: the number does not
 * exist (a hard bounce: suppressed); TEXT_BLOCKED: the recipient's device or carrier blocks our
 * messages (treated like a complaint: suppressed). The others fail this message only.
 */
const FAILURES: Readonly<
  Record<string, { failure: NonNullable<DeliveryReport['failure']>; suppress: boolean }>
> = {
  TEXT_INVALID: { failure: 'hard_bounce', suppress: true },
  TEXT_BLOCKED: { failure: 'complaint', suppress: true },
  TEXT_INVALID_MESSAGE: { failure: 'delivery_failed', suppress: false },
  TEXT_UNREACHABLE: { failure: 'delivery_failed', suppress: false },
  TEXT_CARRIER_UNREACHABLE: { failure: 'delivery_failed', suppress: false },
  TEXT_CARRIER_BLOCKED: { failure: 'delivery_failed', suppress: false },
  TEXT_SPAM: { failure: 'delivery_failed', suppress: false },
  TEXT_TTL_EXPIRED: { failure: 'delivery_failed', suppress: false },
  TEXT_UNKNOWN: { failure: 'delivery_failed', suppress: false },
  TEXT_PROTECT_BLOCKED: { failure: 'delivery_failed', suppress: false },
};

/** The service holds the message (settles a row still `sending` or `unknown` as accepted). */
const IN_FLIGHT = new Set(['TEXT_QUEUED', 'TEXT_PENDING', 'TEXT_SENT']);

export type EumEventMapping =
  | { readonly kind: 'report'; readonly report: DeliveryReport }
  | { readonly kind: 'ignore'; readonly why: string };

/**
 * A text event → the ledger's report:
 *   TEXT_DELIVERED, and TEXT_SUCCESSFUL when final (the two are used interchangeably by country)
 *     → delivered · a non-final TEXT_SUCCESSFUL, TEXT_QUEUED/PENDING → accepted
 *   a final failure type → failed (suppressing for TEXT_INVALID / TEXT_BLOCKED)
 *   a failure type marked not final (the service still tries) → nothing yet.
 */
export function mapEumEvent(detail: EumTextEvent, eventTime: string | undefined): EumEventMapping {
  const ref = parseCorrelationId(detail.context?.[EUM_INTENT_CONTEXT_KEY] ?? '');
  if (ref?.channel !== 'sms') return { kind: 'ignore', why: 'no_intent_correlation' };
  const parsedTime = eventTime ? Date.parse(eventTime) : Number.NaN;
  const at = detail.eventTimestamp ?? (Number.isFinite(parsedTime) ? parsedTime : Date.now());
  const base = { ref, provider: descriptor.id, receiptId: detail.messageId, at };
  const type = detail.eventType;
  if (type === 'TEXT_DELIVERED' || (type === 'TEXT_SUCCESSFUL' && detail.isFinal !== false)) {
    return { kind: 'report', report: { ...base, kind: 'delivered', code: type } };
  }
  if (type === 'TEXT_SUCCESSFUL' || IN_FLIGHT.has(type)) {
    return { kind: 'report', report: { ...base, kind: 'accepted', code: type } };
  }
  const failure = FAILURES[type];
  if (failure && detail.isFinal !== false) {
    return { kind: 'report', report: { ...base, kind: 'failed', code: type, ...failure } };
  }
  return { kind: 'ignore', why: `event_${type.replace(/\W/g, '_').toLowerCase()}` };
}

/**
 * The inbound facet: the service publishes text events to the default EventBridge bus; the CDK
 * binding routes ours (those carrying our Context key) to the provider-events function
 * (lib/providers/eum/binding.ts), and locally the simulator's event feed plays that part.
 */
export const facet: InboundFacet = {
  kind: 'eventbridge',
  sources: [EUM_EVENT_SOURCE],
  create: () => (event) => verdictOf(event.detailType, event.time, event.detail),
};

function verdictOf(detailType: string, time: string | undefined, detail: unknown): InboundVerdict {
  if (detailType !== EUM_TEXT_EVENT_DETAIL_TYPE) {
    return { kind: 'accepted', reports: [], unmatched: 0, ignored: [`detail_type_${detailType}`] };
  }
  const parsed = EumTextEventSchema.safeParse(detail);
  if (!parsed.success) {
    return {
      kind: 'malformed',
      errors: [
        { path: 'detail', code: 'invalid_format', message: 'not a text message event this module reads' },
      ],
    };
  }
  const mapping = mapEumEvent(parsed.data, time);
  if (mapping.kind === 'report')
    return { kind: 'accepted', reports: [mapping.report], unmatched: 0, ignored: [] };
  if (mapping.why === 'no_intent_correlation')
    return { kind: 'accepted', reports: [], unmatched: 1, ignored: [] };
  return { kind: 'accepted', reports: [], unmatched: 0, ignored: [mapping.why] };
}
