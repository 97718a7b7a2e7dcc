/** What a Twilio message status means for the ledger, shared by callbacks (inbound) and fetches (status). */
import type { DeliveryReport } from '../../ports/provider.port.ts';
import { descriptor } from './descriptor.ts';

/**
 * Twilio `MessageStatus` → what it proves about the intent. Statuses that prove nothing we
 * record (`receiving`, `canceled`, …) are acknowledged and ignored.
 * - `accepted`/`queued`/`scheduled`/`sending`/`sent`: Twilio holds the message, which settles a
 *   row still `sending` or `unknown` as accepted;
 * - `delivered` (and `read`, which implies it): final delivery;
 * - `undelivered`/`failed`: final failure, with Twilio's ErrorCode.
 */
const STATUS_KIND: Readonly<Record<string, DeliveryReport['kind']>> = {
  accepted: 'accepted',
  queued: 'accepted',
  scheduled: 'accepted',
  sending: 'accepted',
  sent: 'accepted',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
};

/**
 * Error codes that mean the destination should not be messaged again on this channel:
 * 21610 the recipient replied STOP (an opt-out: treated like a complaint), 30004 blocked,
 * 30005 unknown or inactive number and 30006 landline or unreachable carrier (hard bounces).
 * Other codes (30003 handset off, 30007 carrier filtering, …) fail this message only.
 */
const SUPPRESSING_CODES: Readonly<Record<string, NonNullable<DeliveryReport['failure']>>> = {
  '21610': 'complaint',
  '30004': 'delivery_failed',
  '30005': 'hard_bounce',
  '30006': 'hard_bounce',
};

/**
 * A message status (a callback's, or a fetched message's) → the delivery report it makes, or
 * `undefined` for a status that proves nothing we record.
 */
export function twilioStatusReport(
  ref: DeliveryReport['ref'],
  receiptId: string,
  status: string,
  errorCode: string | undefined,
  at: number,
): DeliveryReport | undefined {
  const kind = STATUS_KIND[status];
  if (!kind) return undefined;
  const suppressing = kind === 'failed' && errorCode !== undefined ? SUPPRESSING_CODES[errorCode] : undefined;
  return {
    ref,
    provider: descriptor.id,
    receiptId,
    kind,
    at,
    ...(kind === 'failed'
      ? { failure: suppressing ?? 'delivery_failed', code: errorCode, suppress: suppressing !== undefined }
      : {}),
  };
}
