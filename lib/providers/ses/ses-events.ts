import { Duration, Stack } from 'aws-cdk-lib';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import {
  ConfigurationSet,
  ConfigurationSetTlsPolicy,
  EmailSendingEvent,
  EventDestination,
  SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SES_PUBLISHED_EVENTS, type SesPublishedEvent } from '../../../lambdas/providers/ses/descriptor.ts';

/** CDK's names of the configuration set's event types (the compiler checks every published one has one). */
const SENDING_EVENT: Readonly<Record<SesPublishedEvent['matching'], EmailSendingEvent>> = {
  delivery: EmailSendingEvent.DELIVERY,
  bounce: EmailSendingEvent.BOUNCE,
  complaint: EmailSendingEvent.COMPLAINT,
  reject: EmailSendingEvent.REJECT,
  deliveryDelay: EmailSendingEvent.DELIVERY_DELAY,
  renderingFailure: EmailSendingEvent.RENDERING_FAILURE,
};

/**
 * The SES events the ledger acts on (the runtime module's list, which the local feeder plays
 * too), with their EventBridge detail-types.
 */
export const SES_EVENTS: readonly { readonly event: EmailSendingEvent; readonly detailType: string }[] =
  SES_PUBLISHED_EVENTS.map((e) => ({ event: SENDING_EVENT[e.matching], detailType: e.detailType }));

export interface SesEventsProps {
  /** Name of the configuration set the sender uses (SES_CONFIGURATION_SET). */
  readonly configurationSetName: string;
  /**
   * Refuse delivery to receiving servers without TLS.
   * @default true
   */
  readonly requireTls?: boolean;
}

/**
 * SES → ledger: the configuration set the e-mail sender sends through, publishing the delivery
 * events to the default EventBridge bus (the only bus SES can target), and the rule that hands
 * this configuration set's events (and no other application's) to the SES events function.
 *
 * Failures are kept: EventBridge retries delivery for a day, Lambda retries a failed invocation
 * twice, and both then park the event in the provider-events dead-letter queue for replay.
 *
 * The sender identity is not created here: verifying a domain (DNS) and leaving the SES sandbox
 * are account prerequisites (docs/deploy.md).
 */
export class SesEvents extends Construct {
  readonly configurationSet: ConfigurationSet;
  readonly configurationSetName: string;

  constructor(scope: Construct, id: string, props: SesEventsProps) {
    super(scope, id);
    this.configurationSetName = props.configurationSetName;
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      configurationSetName: props.configurationSetName,
      tlsPolicy:
        (props.requireTls ?? true) ? ConfigurationSetTlsPolicy.REQUIRE : ConfigurationSetTlsPolicy.OPTIONAL,
      reputationMetrics: true,
      sendingEnabled: true,
      // SES's own account-level list catches what our list has not seen yet (other senders).
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
    });
    this.configurationSet.addEventDestination('ToEventBridge', {
      destination: EventDestination.eventBus(EventBus.fromEventBusName(this, 'DefaultBus', 'default')),
      events: SES_EVENTS.map((e) => e.event),
    });
  }

  /** ARN of the configuration set, for the sender's `ses:SendEmail` grant. */
  get configurationSetArn(): string {
    return Stack.of(this).formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: this.configurationSetName,
    });
  }

  /** Routes this configuration set's events to `handler` (with retries, then `deadLetterQueue`). */
  routeTo(handler: IFunction, deadLetterQueue: IQueue): Rule {
    return new Rule(this, 'Rule', {
      description: `SES events of configuration set ${this.configurationSetName} → notice-ledger`,
      eventPattern: {
        source: ['aws.ses'],
        detailType: SES_EVENTS.map((e) => e.detailType),
        detail: { mail: { tags: { 'ses:configuration-set': [this.configurationSetName] } } },
      },
      targets: [
        new LambdaFunction(handler, {
          deadLetterQueue,
          retryAttempts: 185,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });
  }
}
