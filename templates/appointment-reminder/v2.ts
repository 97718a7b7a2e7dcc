import type { TemplateDefinition } from '../../lambdas/domain/template.ts';
import { appointmentReminderV1 } from './v1.ts';

/**
 * v1's copy, with a default channel fallback (docs/architecture.md §12): a reminder e-mail that
 * bounces, or is not delivered within 30 minutes, is followed by the SMS, when the request gives
 * the recipient's phone and asks for no fallback of its own.
 */
export const appointmentReminderV2: TemplateDefinition = {
  ...appointmentReminderV1,
  version: 'v2',
  fallback: { from: 'email', to: 'sms', within: 'PT30M' },
};
