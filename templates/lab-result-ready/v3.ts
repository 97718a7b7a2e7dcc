import type { TemplateDefinition } from '../../lambdas/domain/template.ts';

/**
 * PHI minimisation: the message says only that a result exists. The result, the test name and
 * the ordering clinician stay behind the portal sign-in, because email and SMS are neither
 * confidential nor reliably delivered to the patient alone.
 *
 * The SMS body stays in the GSM-7 alphabet (straight apostrophes, no dashes or curly quotes) so
 * that, with a typical first name and no portal link, it is one 160-septet segment.
 */
export const labResultReadyV3: TemplateDefinition = {
  id: 'lab-result-ready',
  version: 'v3',
  description:
    'Tells a patient a new lab result is available in the patient portal, without the result itself.',
  variables: {
    firstName: { type: 'string', required: true, maxLength: 100 },
    portalUrl: { type: 'https_url', required: false, maxLength: 2048 },
  },
  email: {
    subject: 'Your lab result is ready',
    text: `Hello {{firstName}},

A new lab result is available in your patient portal. For your privacy, results are never included in email.

Please sign in to your patient portal to view it.{{#portalUrl}}
{{portalUrl}}{{/portalUrl}}

If you have questions about your result, contact your care team.
`,
    html: `<!doctype html>
<html lang="en">
<body>
<p>Hello {{firstName}},</p>
<p>A new lab result is available in your patient portal. For your privacy, results are never included in email.</p>
<p>Please sign in to your patient portal to view it.</p>
{{#portalUrl}}<p><a href="{{portalUrl}}">Sign in to the patient portal</a></p>
{{/portalUrl}}<p>If you have questions about your result, contact your care team.</p>
</body>
</html>
`,
  },
  sms: {
    text: 'Hi {{firstName}}, a new lab result is ready in your patient portal. Please sign in to view it.{{#portalUrl}} {{portalUrl}}{{/portalUrl}}',
  },
  disclaimer: {
    email:
      "This message was sent by your care provider's patient notification service. Do not reply: this mailbox is not monitored. If you received it in error, please delete it and contact your care team.",
    sms: 'Reply STOP to opt out.',
  },
};
