import { correlationId, idempotencyKey } from '../domain/identity.ts';
import type { Intent } from '../domain/intent.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { renderEmail, renderSms } from '../domain/template-render.ts';
import type { SendEnvelope } from '../ports/envelope-sealer.port.ts';
import type { EmailMessage, SmsMessage } from '../ports/transport.port.ts';

/**
 * The message a transport is given for a row, built in one place for the sender and for the
 * reconciler's lookups. It is a pure function of the row's fixed fields (noticeId, channel,
 * template id and version) and its sealed envelope (destination, variables): template versions
 * are immutable once released, and rendering has no clock, randomness or locale in it. So the
 * reconciler, rendering again from the same envelope, gets the very message the attempt sent,
 * and a provider that compares a replay byte for byte under its idempotency key sees the same
 * request (test/use-cases/messages.test.ts proves it on every released template).
 */
export function renderMessage(
  row: Pick<Intent, 'noticeId' | 'channel'> & { readonly deadline?: number | undefined },
  template: TemplateDefinition,
  envelope: SendEnvelope,
): EmailMessage | SmsMessage {
  const base = {
    to: envelope.destination,
    correlationId: correlationId(row),
    idempotencyKey: idempotencyKey(row.noticeId, row.channel),
    // For a provider that expires undelivered messages (a fixed field: replays carry the same).
    ...(row.deadline !== undefined ? { deadline: row.deadline } : {}),
  };
  if (row.channel === 'email') return { ...base, ...renderEmail(template, envelope.variables) };
  return { ...base, body: renderSms(template, envelope.variables).text };
}

/** What a lookup matches a listing on: the SMS body, or the email's subject. */
export function matchableContent(message: EmailMessage | SmsMessage): string {
  return 'body' in message ? message.body : message.subject;
}
