import type { Channel } from '../../domain/channel.ts';
import type { DeliveryReport, StatusFacet } from '../../ports/provider.port.ts';
import { CALLS, call, callOf, EventListSchema, errorCode, type GatewayEvent } from './api.ts';
import { descriptor } from './descriptor.ts';
import { infraiOptions } from './transport.ts';

/** Bounce types that mean the address is dead (suppressed); others fail this message only. */
const HARD_BOUNCES = /^(hard|permanent)/i;

/**
 * A pulled event → a delivery report (`undefined`: one we do not record). E-mail: sent →
 * accepted, delivered, bounced (hard: suppress), complained (suppress); SMS: sent, delivered,
 * failed.
 */
export function reportOfEvent(
  ref: DeliveryReport['ref'],
  channel: Channel,
  event: GatewayEvent,
): DeliveryReport | undefined {
  const parsed = Date.parse(event.created_at);
  const at = Number.isFinite(parsed) ? parsed : Date.now();
  const base = { ref, provider: descriptor.id, receiptId: event.message_id, at };
  switch (event.type) {
    case 'sent':
      return { ...base, kind: 'accepted' };
    case 'delivered':
      return { ...base, kind: 'delivered' };
    case 'bounced': {
      const hard = HARD_BOUNCES.test(event.bounce_type ?? 'hard');
      return {
        ...base,
        kind: 'failed',
        failure: hard ? 'hard_bounce' : 'delivery_failed',
        code: `bounced_${(event.bounce_type ?? 'hard').replace(/\W/g, '').slice(0, 20)}`,
        suppress: hard,
      };
    }
    case 'complained':
      return channel === 'email'
        ? { ...base, kind: 'failed', failure: 'complaint', code: 'complained', suppress: true }
        : undefined;
    case 'failed':
      return { ...base, kind: 'failed', failure: 'delivery_failed', code: 'failed' };
    default:
      return undefined;
  }
}

/**
 * Pull-only events: the gateway pushes nothing, so every accepted row is asked every
 * INFRAI_EVENT_POLL_MS (`GET {base}/<channel>/event/list?message_id=…`) until a final event.
 */
export const facet: StatusFacet = (context) => {
  const options = infraiOptions(context);
  const pollIntervalMs = Number(context.settings.INFRAI_EVENT_POLL_MS ?? 60_000);
  return {
    provider: descriptor.id,
    pollIntervalMs: Number.isFinite(pollIntervalMs) && pollIntervalMs > 0 ? pollIntervalMs : 60_000,
    async pull(query) {
      const channel = query.ref.channel;
      const answer = await call(options, {
        method: 'GET',
        path: `${CALLS[callOf(channel, 'event.list')].path}?message_id=${encodeURIComponent(query.receiptId)}`,
      });
      if (answer.kind === 'failed') return { kind: 'unavailable', code: 'infrai_unreachable' };
      if (!answer.envelope?.ok) {
        return { kind: 'unavailable', code: errorCode(answer.envelope?.error, answer.status) };
      }
      const list = EventListSchema.safeParse(answer.envelope.data);
      if (!list.success) return { kind: 'unavailable', code: 'infrai_unreadable_answer' };
      const reports = list.data.items
        .filter((event) => event.message_id === query.receiptId)
        .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))
        .flatMap((event) => reportOfEvent(query.ref, channel, event) ?? []);
      return { kind: 'reports', reports };
    },
  };
};
