import { z } from 'zod';
import type { Channel } from '../domain/channel.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import type { IntentRef, SuppressionSync } from '../ports/intent-queue.port.ts';

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

/** A queue message's body as JSON; one that is not can never be processed: a PoisonMessageError. */
export function messageJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
}

/** Parses a channel-queue message body; a body that can never be processed is a PoisonMessageError. */
export function parseIntentMessage(body: string, expectedChannel: Channel): IntentRef {
  const json = messageJson(body);
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

const WatchMessageSchema = z.object({
  noticeId: z.string().regex(/^ntc_[a-z2-7]{26}$/),
  channel: z.enum(['email', 'sms']),
});

/** Parses a watch's body (lambdas/adapters/sqs/sqs-row-watch.ts); a malformed one is a PoisonMessageError. */
export function parseWatchMessage(body: string): IntentRef {
  const parsed = WatchMessageSchema.safeParse(messageJson(body));
  if (!parsed.success)
    throw new PoisonMessageError(`message body is not a watch: ${parsed.error.issues[0]?.message}`);
  return { noticeId: parsed.data.noticeId, channel: parsed.data.channel };
}

const SuppressionSyncSchema = z.object({
  kind: z.literal('suppression_sync'),
  channel: z.enum(['email', 'sms']),
  fingerprint: z.string().regex(/^fp_[A-Za-z0-9_-]{10,100}$/),
  reason: z.string().regex(/^[a-z0-9_]{1,64}$/),
  sealed: z.string().min(1).max(8_000),
});

/** What a channel-queue message asks for: an intent's next step, or an operator suppression to mirror. */
export type ChannelMessage =
  | { readonly kind: 'intent'; readonly ref: IntentRef }
  | { readonly kind: 'suppression_sync'; readonly sync: SuppressionSync };

/** Parses any channel-queue message; a body that can never be processed is a PoisonMessageError. */
export function parseChannelMessage(body: string, expectedChannel: Channel): ChannelMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PoisonMessageError('message body is not JSON');
  }
  if (typeof json === 'object' && json !== null && (json as { kind?: unknown }).kind === 'suppression_sync') {
    const parsed = SuppressionSyncSchema.safeParse(json);
    if (!parsed.success) throw new PoisonMessageError('message body is not a suppression sync');
    if (parsed.data.channel !== expectedChannel) {
      throw new PoisonMessageError(
        `message for ${parsed.data.channel} arrived on the ${expectedChannel} queue`,
      );
    }
    const { kind: _kind, ...sync } = parsed.data;
    return { kind: 'suppression_sync', sync };
  }
  return { kind: 'intent', ref: parseIntentMessage(body, expectedChannel) };
}
