import { join } from 'node:path';
import { type App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { cdkJsonContext, createNoticeLedgerApp, type NoticeLedgerStacks } from '../../lib/app.ts';
import { CHECK_ACCOUNT } from '../../lib/deploy-check.ts';
import { requireIntegrationTier } from '../helpers/tier.ts';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface Synthesized extends NoticeLedgerStacks {
  readonly app: App;
  readonly statefulTemplate: Template;
  readonly deliveryTemplate: Template;
}

/**
 * Builds the whole app in-process through the path bin/app.ts takes, from the documented
 * defaults (or `settings`) rather than the operator's deploy/settings.json, and without the
 * validation plugins (tests run the packs themselves). `bundle: false` skips esbuild (context
 * `aws:cdk:bundling-stacks: []`) for tests that do not look at code; a bundled build takes ~7 s
 * on two cores for the five functions, so each test file builds once, in `beforeAll`.
 */
export function synthesize(
  options: { settings?: Record<string, unknown>; bundle?: boolean } = {},
): Synthesized {
  // 10–30 s on a loaded 2-core machine: the fast tier never builds the app.
  requireIntegrationTier('The CDK app');
  const stacks = createNoticeLedgerApp({
    settings: options.settings ?? {},
    compliance: false,
    appProps: {
      context: {
        ...cdkJsonContext(),
        ...(options.bundle === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
      },
    },
  });
  return {
    ...stacks,
    statefulTemplate: Template.fromStack(stacks.stateful),
    deliveryTemplate: Template.fromStack(stacks.delivery),
  };
}

/**
 * The app pinned to `region` (and deploy:check's account), as `cdk deploy` synthesizes it there:
 * what depends on the Region (the webhooks' ingress, lib/providers/webhook-ingress.ts) resolves.
 */
export function synthesizeIn(region: string, settings: Record<string, unknown> = {}): Synthesized {
  return synthesize({ settings: { account: CHECK_ACCOUNT, region, ...settings }, bundle: false });
}

/** Logical id of an L2 construct's resource (or of an L1 itself). */
export function logicalId(construct: IConstruct): string {
  const element = (construct.node.defaultChild ?? construct) as CfnElement;
  return Stack.of(construct).getLogicalId(element);
}

export interface Statement {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Every statement of every identity policy (managed, inline, role inline) in a template. */
export function identityStatements(template: Template): Statement[] {
  const out: Statement[] = [];
  for (const type of ['AWS::IAM::ManagedPolicy', 'AWS::IAM::Policy']) {
    for (const resource of Object.values(template.findResources(type))) {
      out.push(...(resource.Properties.PolicyDocument.Statement as Statement[]));
    }
  }
  for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
    for (const policy of (role.Properties.Policies ?? []) as {
      PolicyDocument: { Statement: Statement[] };
    }[]) {
      out.push(...policy.PolicyDocument.Statement);
    }
  }
  return out;
}

/** Statements of the managed policy attached to the role with this logical id. */
export function roleStatements(template: Template, roleLogicalId: string): Statement[] {
  const policies = Object.values(template.findResources('AWS::IAM::ManagedPolicy')).filter((p) =>
    ((p.Properties.Roles ?? []) as { Ref: string }[]).some((r) => r.Ref === roleLogicalId),
  );
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/** `{ action → resources }` of a role, resources as JSON so tokens compare by shape. */
export function grantsOf(statements: readonly Statement[]): Map<string, string[]> {
  const grants = new Map<string, string[]>();
  for (const st of statements) {
    const resources = (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map((r) =>
      JSON.stringify(r),
    );
    for (const action of actionsOf(st)) grants.set(action, [...(grants.get(action) ?? []), ...resources]);
  }
  return grants;
}
