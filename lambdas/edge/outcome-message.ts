import { z } from 'zod';
import { OUTCOME_EVENT_TYPES, type OutcomeEventType } from '../domain/outcome-event.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import { INTENT_STATES, type IntentState } from '../domain/state-machine.ts';
import type { WebhookMessage } from '../ports/outcome-sink.port.ts';
import { messageJson, PoisonMessageError } from './intent-message.ts';

/** An outcome event, as the stream consumer wrote it. */
const OutcomeEventSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.enum(OUTCOME_EVENT_TYPES as unknown as [OutcomeEventType, ...OutcomeEventType[]]),
  timestamp: z.string(),
  data: z.object({
    noticeId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    channel: z.enum(['email', 'sms']),
    state: z.enum(INTENT_STATES as unknown as [IntentState, ...IntentState[]]),
    reason: z.string(),
    seq: z.number().int().positive(),
    at: z.string(),
    attempt: z.number().int().nonnegative(),
    provider: z.string().optional(),
    priority: z.enum(PRIORITIES as [Priority, ...Priority[]]),
  }),
});

const WebhookMessageSchema = z.object({
  event: OutcomeEventSchema,
  tries: z.number().int().nonnegative(),
  notBefore: z.number().int().nonnegative().optional(),
});

/** A webhook-queue message; a body that can never be sent is a PoisonMessageError. */
export function parseWebhookMessage(body: string): WebhookMessage {
  const parsed = WebhookMessageSchema.safeParse(messageJson(body));
  if (!parsed.success) {
    throw new PoisonMessageError(
      `message body is not an outcome webhook: ${parsed.error.issues[0]?.message}`,
    );
  }
  return parsed.data as WebhookMessage;
}
