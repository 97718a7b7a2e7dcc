import { Duration, Stack } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { acknowledgeWildcardResources } from '../nag.ts';
import { ManagedPolicyRole } from './managed-policy-role.ts';

export interface ReconcilerScheduleProps {
  readonly reconciler: IFunction;
  /**
   * Period of the sweep; the runtime's RECONCILE_INTERVAL_MS must say the same.
   * @default Duration.minutes(1)
   */
  readonly interval?: Duration;
}

/**
 * The recurring EventBridge Scheduler schedule that runs the reconciler (DESIGN §1), in the
 * default schedule group so that the retry group's CreateSchedule grant cannot reach it.
 *
 * A tick that cannot be delivered is not retried: the next tick does the same sweep a minute
 * later, and the OldestUnresolvedAgeSeconds alarm treats missing runs as breaching.
 */
export class ReconcilerSchedule extends Construct {
  readonly schedule: Schedule;
  readonly role: ManagedPolicyRole;

  constructor(scope: Construct, id: string, props: ReconcilerScheduleProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const interval = props.interval ?? Duration.minutes(1);
    this.role = new ManagedPolicyRole(this, 'Role', {
      description: 'Assumed by EventBridge Scheduler to start the notice-ledger reconciler',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': stack.account,
            'aws:SourceArn': stack.formatArn({
              service: 'scheduler',
              resource: 'schedule-group',
              resourceName: 'default',
            }),
          },
        },
      }),
    });
    this.schedule = new Schedule(this, 'Schedule', {
      schedule: ScheduleExpression.rate(interval),
      description: 'notice-ledger reconciler sweep',
      target: new LambdaInvoke(props.reconciler, {
        role: this.role,
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    });
    // Created after the role's policy, so the first tick can already invoke the function.
    this.schedule.node.addDependency(this.role);
    // LambdaInvoke grants lambda:InvokeFunction on the function and on `<function ARN>:*`.
    acknowledgeWildcardResources(
      this.role,
      [`${props.reconciler.functionArn}:*`],
      'CDK grants lambda:InvokeFunction on the function and its qualified ARNs (versions/aliases); the ' +
        'wildcard is limited to qualifiers of this one reconciler function.',
    );
  }
}
