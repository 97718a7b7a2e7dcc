import { Stack, Validations } from 'aws-cdk-lib';
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
 * narrow as v2's `appliesTo`. cdk-nag compares ids as exact strings (no patterns), so a
 * finding that names a resource must be written with {@link acknowledgeWildcardResources}.
 */
export function acknowledge(scope: IConstruct, ...acknowledgements: readonly Acknowledgement[]): void {
  for (const { rule, reason } of acknowledgements) {
    if (reason.trim().length < 40) throw new Error(`acknowledgement of ${rule} needs a specific reason`);
    Validations.of(scope).acknowledge({ id: rule, reason });
  }
}

/**
 * A policy resource as cdk-nag names it in a finding: the resolved CloudFormation value
 * flattened to one string, `Ref` → `<LogicalId>` (pseudo parameters too: `<AWS::Region>`),
 * `Fn::GetAtt` → `<LogicalId.Attr>`, `Fn::Join` joined, `${…}` → `<…>`, anything else as JSON.
 * This is cdk-nag 3's `flattenCfnReference` (lib/utils/flatten-cfn-reference.js), which the
 * package does not export.
 *
 * Rendering from the value the policy is built from is what makes an acknowledgement hold in
 * every environment: environment-agnostic, the ARN carries `<AWS::Partition>`, `<AWS::Region>`
 * and `<AWS::AccountId>`; for a concrete account and Region (`cdk deploy` with credentials)
 * the same code yields `arn:aws:…:eu-west-1:123456789012:…`, or `arn:aws-us-gov:…`.
 *
 * The value must not reference another stack: CDK rewrites cross-stack references during
 * synthesis, after this runs (and refuses to resolve them before, so such a use fails loudly).
 */
export function nagResourceName(scope: IConstruct, resource: string): string {
  return flatten(Stack.of(scope).resolve(resource));
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const fn = node as Record<string, unknown>;
    if (fn['Fn::Join']) {
      const [delimiter, items] = fn['Fn::Join'] as [string, unknown[]];
      return items.map(flatten).join(delimiter);
    }
    if (fn['Fn::Sub']) return flatten(fn['Fn::Sub']);
    if (fn['Fn::GetAtt']) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if (fn['Fn::ImportValue']) return flatten(fn['Fn::ImportValue']);
    if (fn.Ref) return `<${flatten(fn.Ref)}>`;
  }
  return JSON.stringify(node);
}

/**
 * Accepts `AwsSolutions-IAM5` for exactly these wildcard resources of the policy (or role) at
 * `scope`, each named as cdk-nag names it ({@link nagResourceName}). Pass the same values the
 * policy statement is built from.
 */
export function acknowledgeWildcardResources(
  scope: IConstruct,
  resources: readonly string[],
  reason: string,
): void {
  acknowledge(
    scope,
    ...resources.map((resource) => {
      const name = nagResourceName(scope, resource);
      if (!name.includes('*')) throw new Error(`${name} has no wildcard: cdk-nag reports nothing to accept`);
      return { rule: `AwsSolutions-IAM5[Resource::${name}]`, reason };
    }),
  );
}

/** The rule packs the app must pass: AWS Solutions and HIPAA Security. */
export function compliancePacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new HIPAASecurityChecks()];
}
