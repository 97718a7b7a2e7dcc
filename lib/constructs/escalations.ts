import { EventBus, EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** Source and detail-type of escalation events (lambdas/adapters/eventbridge/escalation-publishers.ts). */
export const ESCALATION_SOURCE = 'notice-ledger';
export const ESCALATION_DETAIL_TYPE = 'Notice Escalated';

/**
 * Escalations (deadline exceeded, attempts exhausted, unknown past grace) as events on a bus of
 * their own, so the publishing functions get `events:PutEvents` on this bus only, and other
 * consumers (ticketing, paging) can subscribe with their own rules. One rule forwards them to the
 * alarm topic as a short text: ids and codes only, as the event itself.
 */
export class Escalations extends Construct {
  readonly bus: EventBus;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // No description: AWS::Events::EventBus has no Description property in the AWS GovCloud (US)
    // Regions (cfn-lint E3002 there); the generated name (…EscalationsBus…) says what it is.
    this.bus = new EventBus(this, 'Bus');
  }

  /** Announces every escalation on `topic` (the alarm topic, created after the publishers). */
  notify(topic: ITopic): Rule {
    return new Rule(this, 'ToAlarmTopic', {
      eventBus: this.bus,
      description: 'notice-ledger escalations → alarm topic',
      eventPattern: { source: [ESCALATION_SOURCE], detailType: [ESCALATION_DETAIL_TYPE] },
      targets: [
        new SnsTopic(topic, {
          message: RuleTargetInput.fromText(
            `notice-ledger escalation: ${EventField.fromPath('$.detail.noticeId')} ` +
              `${EventField.fromPath('$.detail.channel')} ${EventField.fromPath('$.detail.state')} ` +
              `(${EventField.fromPath('$.detail.reason')}) at ${EventField.fromPath('$.time')}`,
          ),
        }),
      ],
    });
  }
}
