import {
  type AddToPrincipalPolicyResult,
  ManagedPolicy,
  type PolicyStatement,
  Role,
  type RoleProps,
} from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/**
 * A role whose every permission lives in one customer-managed policy of its own, instead of the
 * inline `DefaultPolicy` CDK grants normally write (HIPAA.Security-IAMNoInlinePolicy: managed
 * policies are versioned and reviewable on their own).
 *
 * Grants keep working unchanged (`table.grant(role, …)`, `queue.grantConsumeMessages(fn)`,
 * event sources, DLQs): they all end in `addToPrincipalPolicy`, which lands here. The policy is
 * a child of the role, so whatever depends on the role (the function) also waits for it.
 */
export class ManagedPolicyRole extends Role {
  private policy: ManagedPolicy | undefined;

  constructor(scope: Construct, id: string, props: RoleProps) {
    super(scope, id, props);
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    // Created on first use: a managed policy without statements fails to deploy.
    this.policy ??= new ManagedPolicy(this, 'Policy', {
      roles: [this],
      description: `Permissions of ${this.node.path}`,
    });
    this.policy.addStatements(statement);
    return { statementAdded: true, policyDependable: this.policy };
  }
}
