import { correlationId, idempotencyKey } from '../domain/identity.ts';
import type { Intent } from '../domain/intent.ts';
import { renderEmail, renderSms, type TemplateDefinition } from '../domain/template.ts';
import type { SendEnvelope } from '../ports/envelope-sealer.port.ts';
import type { EmailMessage, SmsMessage } from '../ports/transport.port.ts';

/**
 * The message a row's attempt sends, from its template and opened envelope: the sender sends it,
 * and the reconciler hands the very same message to a lookup that replays under the key.
 * Throws when the template cannot render the variables.
 */
export function outgoingMessage(
  row: Intent,
  template: TemplateDefinition,
  envelope: SendEnvelope,
): EmailMessage | SmsMessage {
  const base = {
    to: envelope.destination,
    correlationId: correlationId(row),
    idempotencyKey: idempotencyKey(row.noticeId, row.channel),
    deadline: row.deadline,
  };
  if (row.channel === 'email') return { ...base, ...renderEmail(template, envelope.variables) };
  return { ...base, body: renderSms(template, envelope.variables).text };
}
