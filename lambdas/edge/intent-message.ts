import { z } from 'zod';
import type { Channel } from '../domain/channel.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';

const IntentMessageSchema = z.object({
  noticeId: z.string().regex(/^ntc_[a-z2-7]{26}$/),
  channel: z.enum(['email', 'sms']),
  attempt: z.number().int().positive().optional(),
  priority: z.enum(PRIORITIES as [Priority, ...Priority[]]).optional(),
});

export class PoisonMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

/** Parses a channel-queue message body; a body that can never be processed is a PoisonMessageError. */
export function parseIntentMessage(body: string, expectedChannel: Channel): IntentRef {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
  const parsed = IntentMessageSchema.safeParse(json);
  if (!parsed.success)
    throw new PoisonMessageError(
      `message body is not an intent reference: ${parsed.error.issues[0]?.message}`,
    );
  if (parsed.data.channel !== expectedChannel) {
    throw new PoisonMessageError(
      `message for ${parsed.data.channel} arrived on the ${expectedChannel} queue`,
    );
  }
  return {
    noticeId: parsed.data.noticeId,
    channel: parsed.data.channel,
    ...(parsed.data.priority ? { priority: parsed.data.priority } : {}),
  };
}
