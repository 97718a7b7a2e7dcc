import { z } from 'zod';
import { INTENT_STATES, type IntentState } from '../domain/state-machine.ts';
import { OUTCOME_EVENT_TYPES, type OutcomeEvent, type OutcomeEventType } from '../domain/outcome-event.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import { PoisonMessageError } from './intent-message.ts';

/** A message of the webhook queue: one outcome event, as the stream consumer wrote it. */
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

/** The event a webhook-queue message carries; a body that can never be sent is a PoisonMessageError. */
export function parseOutcomeMessage(body: string): OutcomeEvent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
  const parsed = OutcomeEventSchema.safeParse(json);
  if (!parsed.success) {
    throw new PoisonMessageError(`message body is not an outcome event: ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data as OutcomeEvent;
}
