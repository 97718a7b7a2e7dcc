import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ManagedPolicyRole } from './managed-policy-role.ts';

export interface RetrySchedulerProps {
  /** Name of the schedule group (SCHEDULE_GROUP_NAME). */
  readonly groupName: string;
  /** The channel queues schedules may target. */
  readonly targetQueues: readonly IQueue[];
}

/**
 * EventBridge Scheduler for retries: the schedule group that holds the one-time `at(...)`
 * schedules the senders and reconciler create (one per intent and attempt, deleted after
 * firing), and the role Scheduler assumes to put the retry message back on the channel queue.
 *
 * The group holds nothing else (the reconciler's recurring schedule lives in the default group),
 * so `scheduler:CreateSchedule` on `schedule/<group>/*` cannot touch any other schedule.
 */
export class RetryScheduler extends Construct {
  readonly group: ScheduleGroup;
  /** Passed as `Target.RoleArn` (SCHEDULER_ROLE_ARN). */
  readonly role: ManagedPolicyRole;
  readonly groupName: string;

  constructor(scope: Construct, id: string, props: RetrySchedulerProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.groupName = props.groupName;
    this.group = new ScheduleGroup(this, 'Group', {
      scheduleGroupName: props.groupName,
      // Pending retries live here; losing them costs a reconciler sweep, not a notice, but a
      // stack deletion should not silently drop them either.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.role = new ManagedPolicyRole(this, 'Role', {
      description: 'Assumed by EventBridge Scheduler to enqueue notice-ledger retries',
      // Confused-deputy guard: Scheduler names the schedule group as the source; only this
      // account's retry group may use the role.
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
    });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'EnqueueRetries',
        actions: ['sqs:SendMessage'],
        resources: props.targetQueues.map((q) => q.queueArn),
      }),
    );
  }

  /** ARN pattern of every schedule in the retry group. */
  schedulesArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
    });
  }

  /**
   * Lets `grantee` create retry schedules in the group and hand them this role, nothing more:
   * no update, no delete (schedules delete themselves after firing), no other group.
   */
  grantCreateSchedules(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'CreateRetrySchedules',
        actions: ['scheduler:CreateSchedule'],
        resources: [this.schedulesArn()],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'PassSchedulerRole',
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }
}
