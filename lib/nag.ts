import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, HIPAASecurityChecks, type NagPack } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** One accepted cdk-nag finding: the rule id (with `[finding]` when the rule reports several). */
export interface Acknowledgement {
  readonly rule: string;
  /** Why the finding is acceptable here, specific to this resource. */
  readonly reason: string;
}

/**
 * Records accepted findings on a construct (cdk-nag 3 reads CDK's native acknowledgements; the
 * `NagSuppressions` API of cdk-nag 2 is gone). Each finding of a multi-finding rule such as
 * `AwsSolutions-IAM5[Resource::…]` must be named individually, which keeps acknowledgements as
 * narrow as v2's `appliesTo`.
 */
export function acknowledge(scope: IConstruct, ...acknowledgements: readonly Acknowledgement[]): void {
  for (const { rule, reason } of acknowledgements) {
    if (reason.trim().length < 40) throw new Error(`acknowledgement of ${rule} needs a specific reason`);
    Validations.of(scope).acknowledge({ id: rule, reason });
  }
}

/** The rule packs the app must pass: AWS Solutions and HIPAA Security. */
export function compliancePacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new HIPAASecurityChecks()];
}
