import { Annotations, ArnFormat, CfnOutput, Duration, Stack, Token } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnConfigurationSet } from 'aws-cdk-lib/aws-smsvoice';
import { z } from 'zod';
import {
  descriptor,
  EUM_EVENT_SOURCE,
  EUM_INTENT_CONTEXT_KEY,
  EUM_TEXT_EVENT_DETAIL_TYPE,
} from '../../../lambdas/providers/eum/descriptor.ts';
import { SETTINGS_FILE } from '../../settings-file.ts';
import { bindingSettings, type ProviderBinding } from '../binding.ts';
import { type BoundSettings, providerSettings } from '../binding-settings.ts';

const text = z.string().trim();

const settings = providerSettings(descriptor, {
  EUM_ORIGINATION_IDENTITY: {
    schema: text.regex(
      /^(arn:[^\s]+|phone-[A-Za-z0-9]+|pool-[A-Za-z0-9]+|\+[1-9][0-9]{1,18}|[A-Za-z0-9_-]{1,64})?$/,
      { message: 'a phone number or pool id, an ARN, an E.164 number or a sender id' },
    ),
    note:
      'a phone number id (`phone-…`), pool id (`pool-…`) or ARN: `sms-voice:SendTextMessage` is granted on it ' +
      'only. Empty: a synth warning, and the SMS sender refuses to start until it is set',
  },
  EUM_CONFIGURATION_SET: {
    schema: text.regex(/^[A-Za-z0-9_-]{0,64}$/, 'letters, digits, _ and -'),
    note: "created by the stack and named on every message; a rule routes its events to the provider-events function; '' → kebab-case stackPrefix + `-sms`",
  },
  EUM_OPT_OUT_LIST: { schema: text.regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -') },
});

type EumSettings = BoundSettings<typeof settings>;

export const ORIGINATION_IDENTITY_WARNING = 'notice-ledger:eumOriginationIdentity';

/**
 * The ARNs SendTextMessage authorises for an origination identity: the identity itself when it is
 * an ARN or an id we can type (`phone-…`, `pool-…`); for an E.164 number or a bare sender id,
 * every phone number and sender id of the account and Region (a warning says to pin it).
 */
export function originationResources(stack: Stack, identity: string): { arns: string[]; pinned: boolean } {
  const arn = (resource: string, resourceName: string) =>
    stack.formatArn({
      service: 'sms-voice',
      resource,
      resourceName,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  if (identity.startsWith('arn:')) return { arns: [identity], pinned: true };
  if (identity.startsWith('phone-')) return { arns: [arn('phone-number', identity)], pinned: true };
  if (identity.startsWith('pool-')) return { arns: [arn('pool', identity)], pinned: true };
  return { arns: [arn('phone-number', '*'), arn('sender-id', '*')], pinned: false };
}

/**
 * AWS End User Messaging SMS (lambdas/providers/eum): a configuration set the SMS sender sends with,
 * `sms-voice:SendTextMessage` on the origination identity and that configuration set only, and
 * `sms-voice:PutOptedOutNumber` on the opt-out list (operator suppressions mirrored). The service
 * publishes every text event to the default EventBridge bus; a rule hands ours — those whose
 * Context carries the intent key — to the provider-events function (retries, then its DLQ). No
 * secret: the service authorises by IAM.
 */
export const eumBinding: ProviderBinding = {
  descriptor,
  settings,
  acceptedWarnings: [`Annotation::${ORIGINATION_IDENTITY_WARNING}`],
  deliver(scope, { config, eventsDeadLetterQueue }) {
    const s = bindingSettings<EumSettings>(config, eumBinding);
    const stack = Stack.of(scope);
    const configurationSetName = s.eumConfigurationSet || `${config.resourcePrefix}-sms`;
    const configurationSet = new CfnConfigurationSet(scope, 'EumConfigurationSet', { configurationSetName });
    new CfnOutput(scope, 'EumConfigurationSetName', { value: configurationSetName });
    const configurationSetArn = stack.formatArn({
      service: 'sms-voice',
      resource: 'configuration-set',
      resourceName: configurationSetName,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const optOutListArn = stack.formatArn({
      service: 'sms-voice',
      resource: 'opt-out-list',
      resourceName: s.eumOptOutList,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    const origination = originationResources(stack, s.eumOriginationIdentity);
    if (!s.eumOriginationIdentity || !origination.pinned) {
      // A warning, not an error: the stacks deploy and e-mail works; until it is set, the SMS
      // sender refuses to start (EUM_ORIGINATION_IDENTITY is required by its transport).
      if (!Token.isUnresolved(stack.account) || s.eumOriginationIdentity) {
        Annotations.of(stack).addWarningV2(
          ORIGINATION_IDENTITY_WARNING,
          s.eumOriginationIdentity
            ? `eumOriginationIdentity (${SETTINGS_FILE}) is not an id or ARN: SendTextMessage is granted on every phone ` +
                'number and sender id of the account; pin it to a phone-…/pool-… id or an ARN.'
            : `eumOriginationIdentity is empty (${SETTINGS_FILE}): the SMS sender cannot send until it names a phone ` +
                'number, pool or sender id of the account (docs/deploy.md).',
        );
      }
    }
    return {
      bindTransport(fn) {
        fn.role.addToPrincipalPolicy(
          new PolicyStatement({
            sid: 'SendTextAsTheNoticeSender',
            actions: ['sms-voice:SendTextMessage'],
            resources: [
              ...(s.eumOriginationIdentity ? origination.arns : []),
              configurationSetArn,
              optOutListArn,
            ],
          }),
        );
        fn.role.addToPrincipalPolicy(
          new PolicyStatement({
            sid: 'MirrorSuppressionsIntoTheOptOutList',
            actions: ['sms-voice:PutOptedOutNumber'],
            resources: [optOutListArn],
          }),
        );
        if (s.eumOriginationIdentity)
          fn.function.addEnvironment('EUM_ORIGINATION_IDENTITY', s.eumOriginationIdentity);
        fn.function.addEnvironment('EUM_CONFIGURATION_SET', configurationSetName);
        fn.function.addEnvironment('EUM_OPT_OUT_LIST', s.eumOptOutList);
        fn.function.node.addDependency(configurationSet);
      },
      bindInbound(fn) {
        new Rule(scope, 'EumEventsRule', {
          description: 'End User Messaging SMS text events of notice-ledger messages → provider-events',
          eventPattern: {
            source: [EUM_EVENT_SOURCE],
            detailType: [EUM_TEXT_EVENT_DETAIL_TYPE],
            detail: { context: { [EUM_INTENT_CONTEXT_KEY]: [{ exists: true }] } },
          },
          targets: [
            new LambdaFunction(fn.function, {
              deadLetterQueue: eventsDeadLetterQueue,
              retryAttempts: 185,
              maxEventAge: Duration.hours(24),
            }),
          ],
        });
      },
    };
  },
};
