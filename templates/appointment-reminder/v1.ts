import type { TemplateDefinition } from '../../lambdas/domain/template.ts';

/**
 * No reason for the visit, department or clinician: those can disclose a condition to anyone
 * who sees the phone's lock screen. `appointmentDate` is rendered exactly as sent (ISO 8601),
 * so no server time zone can shift the time a patient reads.
 */
export const appointmentReminderV1: TemplateDefinition = {
  id: 'appointment-reminder',
  version: 'v1',
  description: 'Reminds a patient of an upcoming appointment, with the date and optionally the clinic name.',
  variables: {
    firstName: { type: 'string', required: true, maxLength: 100 },
    appointmentDate: { type: 'date', required: true, maxLength: 40 },
    clinicName: { type: 'string', required: false, maxLength: 120 },
  },
  email: {
    subject: 'Appointment reminder',
    text: `Hello {{firstName}},

This is a reminder of your appointment on {{appointmentDate}}{{#clinicName}} at {{clinicName}}{{/clinicName}}.

If you need to reschedule or cancel, please contact your care team or use your patient portal.
`,
    html: `<!doctype html>
<html lang="en">
<body>
<p>Hello {{firstName}},</p>
<p>This is a reminder of your appointment on {{appointmentDate}}{{#clinicName}} at {{clinicName}}{{/clinicName}}.</p>
<p>If you need to reschedule or cancel, please contact your care team or use your patient portal.</p>
</body>
</html>
`,
  },
  sms: {
    text: 'Hi {{firstName}}, reminder: you have an appointment on {{appointmentDate}}{{#clinicName}} at {{clinicName}}{{/clinicName}}. To reschedule, contact your care team.',
  },
  disclaimer: {
    email:
      "This message was sent by your care provider's patient notification service. Do not reply: this mailbox is not monitored.",
    sms: 'Reply STOP to opt out.',
  },
};
