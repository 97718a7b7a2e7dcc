import { Stack } from 'aws-cdk-lib';
import {
  EventBus,
  EventField,
  type IRuleTarget,
  Rule,
  type RuleTargetConfig,
  RuleTargetInput,
} from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

import { ESCALATION_DETAIL_TYPE, ESCALATION_SOURCE } from '../../lambdas/contract/escalations.ts';

export { ESCALATION_DETAIL_TYPE, ESCALATION_SOURCE };

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
        new TopicOfThisRule(
          topic,
          RuleTargetInput.fromText(
            `notice-ledger escalation: ${EventField.fromPath('$.detail.noticeId')} ` +
              `${EventField.fromPath('$.detail.channel')} ${EventField.fromPath('$.detail.state')} ` +
              `(${EventField.fromPath('$.detail.reason')}) at ${EventField.fromPath('$.time')}`,
          ),
        ),
      ],
    });
  }
}

/**
 * The topic as a rule's target, published to under a statement of the topic's policy that names
 * that rule (`aws:SourceArn`) and this account (`aws:SourceAccount`). CDK's own SnsTopic target
 * lets the EventBridge service principal publish with neither, so any rule in any account that
 * learned the topic's ARN could page the operators (the confused deputy).
 */
class TopicOfThisRule implements IRuleTarget {
  constructor(
    private readonly topic: ITopic,
    private readonly message: RuleTargetInput,
  ) {}

  bind(rule: Parameters<IRuleTarget['bind']>[0]): RuleTargetConfig {
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'EscalationsOfThisRule',
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnEquals: { 'aws:SourceArn': rule.ruleRef.ruleArn },
          StringEquals: { 'aws:SourceAccount': Stack.of(rule).account },
        },
      }),
    );
    return { arn: this.topic.topicArn, input: this.message, targetResource: this.topic };
  }
}
