import { Annotations, CfnOutput, Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { z } from 'zod';
import { descriptor } from '../../../lambdas/providers/ses/descriptor.ts';
import { SETTINGS_FILE } from '../../settings-file.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';
import { SesEvents } from './ses-events.ts';

const text = z.string().trim();

const settings = providerSettings(
  descriptor,
  {
    SES_FROM_ADDRESS: {
      schema: text.regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'an e-mail address'),
      note: 'its identity must be verified in SES before the first e-mail; `ses:SendEmail` is granted as this sender only',
    },
    SES_CONFIGURATION_SET: {
      schema: text.regex(/^[A-Za-z0-9_-]{0,64}$/, 'letters, digits, _ and -'),
      note: "created by the stack, its events routed to the provider-events function; '' → kebab-case stackPrefix",
    },
  },
  {
    sesIdentity: {
      default: '',
      schema: text,
      description:
        'the verified SES identity that authorises the sender; empty → the domain of sesFromAddress',
    },
    sesAdditionalIdentities: {
      default: [] as string[],
      schema: z.array(text.min(1)),
      description:
        'more identities the e-mail sender may use (in the SES sandbox: the verified recipients), a JSON list',
    },
    sesRequireTls: {
      default: true,
      schema: z.boolean(),
      description: 'refuse delivery to receiving servers that do not offer TLS',
    },
  },
);

type SesSettings = BoundSettings<typeof settings>;

/** The placeholder sender: SES rejects every message from it (nobody can verify example.com). */
export const PLACEHOLDER_SENDER = settings.defaults.sesFromAddress as string;

/** Id of the warning a real-account deployment with the placeholder sender carries. */
export const PLACEHOLDER_SENDER_WARNING = 'notice-ledger:placeholderSender';

/**
 * Amazon SES v2 (lambdas/providers/ses): the configuration set every e-mail goes through, its
 * events routed to the provider-events function (EventBridge, with a DLQ), and `ses:SendEmail`
 * for the e-mail sender as the configured sender only. No secret: SES authorises by IAM.
 */
export const sesBinding: ProviderBinding = {
  descriptor,
  settings,
  acceptedWarnings: [`Annotation::${PLACEHOLDER_SENDER_WARNING}`],
  deliver(scope, { config, eventsDeadLetterQueue }) {
    const s = bindingSettings<SesSettings>(config, sesBinding);
    const configurationSetName = s.sesConfigurationSet || config.resourcePrefix;
    const events = new SesEvents(scope, 'SesEvents', {
      configurationSetName,
      requireTls: s.sesRequireTls,
    });
    new CfnOutput(scope, 'SesConfigurationSet', { value: events.configurationSetName });
    const stack = Stack.of(scope);
    // A warning, not an error: the stacks are valid and deploy, SMS and the API work, and SES
    // rejects every message from the placeholder, each ending `failed` with an escalation; an
    // error would also refuse the account-specific synth of a fresh clone (CI, deploy:check).
    // `cdk synth` and `cdk deploy` print it; `--strict` turns it into a failure.
    if (!Token.isUnresolved(stack.account) && s.sesFromAddress === PLACEHOLDER_SENDER) {
      Annotations.of(stack).addWarningV2(
        PLACEHOLDER_SENDER_WARNING,
        `sesFromAddress is still the placeholder ${PLACEHOLDER_SENDER} (${SETTINGS_FILE}): deployed to account ` +
          `${stack.account}, SES rejects every e-mail it sends. Set sesFromAddress to an address of an SES-verified ` +
          'domain (docs/deploy.md, "Configure") before sending e-mail.',
      );
    }
    const identity = s.sesIdentity || (s.sesFromAddress.split('@')[1] as string);
    const identityArns = [identity, ...s.sesAdditionalIdentities].map((id) =>
      stack.formatArn({ service: 'ses', resource: 'identity', resourceName: id }),
    );
    return {
      bindTransport(fn) {
        // SES authorises both the identity and the configuration set; only as the configured sender.
        fn.role.addToPrincipalPolicy(
          new PolicyStatement({
            sid: 'SendEmailAsTheNoticeSender',
            actions: ['ses:SendEmail'],
            resources: [...identityArns, events.configurationSetArn],
            conditions: { StringEquals: { 'ses:FromAddress': s.sesFromAddress } },
          }),
        );
        fn.function.addEnvironment('SES_FROM_ADDRESS', s.sesFromAddress);
        fn.function.addEnvironment('SES_CONFIGURATION_SET', events.configurationSetName);
      },
      bindInbound(fn) {
        events.routeTo(fn.function, eventsDeadLetterQueue);
      },
    };
  },
};
