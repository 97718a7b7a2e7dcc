import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cdkJsonContext, PLACEHOLDER_SENDER_WARNING } from '../../lib/app.ts';
import {
  ACCEPTED_WARNINGS,
  CHECK_ACCOUNT,
  CHECK_REGIONS,
  checkTargets,
  synthesizeTarget,
  type Target,
  type TargetResult,
} from '../../lib/deploy-check.ts';
import { compliancePacks, nagResourceName } from '../../lib/nag.ts';
import { synthesize } from './synth.ts';

interface Finding {
  readonly rule: string;
  readonly path: string;
  readonly severity: string;
}

interface Ack {
  readonly rule: string;
  readonly reason: string;
  readonly path: string;
}

function findings(app: App): Finding[] {
  return compliancePacks().flatMap((pack) =>
    pack.validateScope(app).violations.flatMap((v) =>
      v.violatingResources.map((r) => ({
        rule: v.ruleName,
        path: r.constructPath ?? '',
        severity: v.severity ?? '',
      })),
    ),
  );
}

function acknowledgements(root: IConstruct): Ack[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({
          rule: id.replace(/^annotation::/i, ''),
          reason,
          path: c.node.path,
        })),
      ),
  );
}

let acknowledged: App;
let raw: App;

beforeAll(() => {
  // cdk-nag reads the construct tree and the L1 properties, not the code: no bundling needed.
  acknowledged = synthesize({ bundle: false }).app;
  // The same app with every acknowledgement dropped: what the packs find on their own.
  const spy = vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(() => undefined);
  raw = synthesize({ bundle: false }).app;
  spy.mockRestore();
});

describe('cdk-nag (AwsSolutions, HIPAA.Security)', () => {
  it('leaves no unacknowledged finding, error or warning', () => {
    expect(findings(acknowledged)).toEqual([]);
  });

  it('gives every acknowledgement a specific reason', () => {
    const acks = acknowledgements(acknowledged);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.rule, ack.path).toMatch(/^(AwsSolutions|HIPAA\.Security)-[A-Za-z0-9]+(\[.+\])?$/);
      expect(ack.reason.length, `${ack.rule} at ${ack.path}`).toBeGreaterThanOrEqual(80);
    }
  });

  it('acknowledges wildcard findings one resource at a time, never a whole rule', () => {
    for (const ack of acknowledgements(acknowledged).filter((a) => a.rule.startsWith('AwsSolutions-IAM5'))) {
      expect(ack.rule).toMatch(/^AwsSolutions-IAM5\[Resource::.+\]$/);
    }
  });

  it('acknowledges nothing the packs would not find (no stale acknowledgements)', () => {
    const found = findings(raw);
    for (const ack of acknowledgements(acknowledged)) {
      const matched = found.some(
        (f) => f.rule === ack.rule && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)),
      );
      expect(matched, `${ack.rule} at ${ack.path}`).toBe(true);
    }
  });
});

describe('nagResourceName: a resource as cdk-nag names it', () => {
  it('renders pseudo parameters environment-agnostic and literals for a concrete environment', () => {
    const arn = (stack: Stack) =>
      stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: 'retries/*' });
    // cdk.json's feature flags (enablePartitionLiterals) decide whether the partition is a literal.
    const app = new App({ context: cdkJsonContext() });
    const agnostic = new Stack(app, 'Agnostic');
    expect(nagResourceName(agnostic, arn(agnostic))).toBe(
      'arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/retries/*',
    );
    const gov = new Stack(app, 'Gov', { env: { account: CHECK_ACCOUNT, region: 'us-gov-west-1' } });
    expect(nagResourceName(gov, arn(gov))).toBe(
      `arn:aws-us-gov:scheduler:us-gov-west-1:${CHECK_ACCOUNT}:schedule/retries/*`,
    );
  });
});

/**
 * The acknowledgements must hold wherever `cdk deploy` synthesizes: with credentials the CLI
 * passes a concrete account and Region, and ARNs become literals. Each target goes through
 * createNoticeLedgerApp exactly as bin/app.ts does, with the validation plugins `cdk synth` runs
 * (cdk-nag packs, CDK's CloudFormation validation, annotations), judged from the validation report
 * (warnings included). Documented defaults, not the operator's settings file.
 */
describe('synthesis as `cdk synth` runs it, environment-agnostic and for concrete Regions', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'compliance-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  const synth = (target: Target) =>
    synthesizeTarget(target, { outdir: join(outdir, target.label.replace(/\W+/g, '_')), bundle: false });
  const targets = checkTargets({});
  const failing = (result: TargetResult) =>
    result.findings.filter((f) => !(f.severity === 'warning' && ACCEPTED_WARNINGS.includes(f.rule)));

  it('covers the agnostic synth and at least two Regions, one outside the aws partition', () => {
    expect(targets.map((t) => t.label)).toEqual([
      'environment-agnostic',
      ...CHECK_REGIONS.map((region) => `${CHECK_ACCOUNT}/${region}`),
    ]);
    expect(CHECK_REGIONS.filter((r) => r.startsWith('us-gov-')).length).toBeGreaterThan(0);
  });

  it.each(targets.map((t) => [t.label, t] as const))('%s: no finding of any severity', (_label, target) => {
    const result = synth(target);
    expect(result.error).toBeUndefined();
    expect(failing(result)).toEqual([]);
    const region = target.cli.CDK_DEFAULT_REGION;
    for (const stack of result.stacks) {
      expect(stack.region).toBe(region);
      expect(stack.account).toBe(target.cli.CDK_DEFAULT_ACCOUNT);
    }
    const delivery = JSON.stringify(result.stacks.find((s) => s.stackName.endsWith('-Delivery'))?.template);
    if (region) {
      const partition = region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
      // The wildcard route ARNs are literals here, so acknowledgements written for placeholders would miss.
      expect(delivery).toContain(`arn:${partition}:execute-api:${region}:${CHECK_ACCOUNT}:`);
      expect(result.findings.map((f) => f.rule)).toContain(`Annotation::${PLACEHOLDER_SENDER_WARNING}`);
    } else {
      expect(delivery).toContain('"Ref":"AWS::Region"');
      expect(result.findings).toEqual([]);
    }
  });

  it('fails on an unacknowledged finding (the packs run in this path): without the wildcard acknowledgements', () => {
    const original = Validations.prototype.acknowledge;
    const spy = vi.spyOn(Validations.prototype, 'acknowledge').mockImplementation(function (
      this: Validations,
      ...rules
    ) {
      const kept = rules.filter((r) => !r.id.startsWith('AwsSolutions-IAM5'));
      if (kept.length > 0) original.apply(this, kept);
    });
    try {
      const result = synth(targets[1] as Target);
      const iam5 = failing(result).filter((f) => f.rule.startsWith('AwsSolutions-IAM5'));
      expect(iam5.map((f) => f.rule)).toContain(
        `AwsSolutions-IAM5[Resource::arn:aws:scheduler:eu-west-1:${CHECK_ACCOUNT}:schedule/notice-ledger-retries/*]`,
      );
      expect(iam5.every((f) => f.severity === 'error')).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('is not deployable to the China Regions: SES does not exist there (and nothing else stands in the way)', () => {
    const result = synth({
      label: 'cn-north-1',
      cli: { CDK_DEFAULT_ACCOUNT: CHECK_ACCOUNT, CDK_DEFAULT_REGION: 'cn-north-1' },
      settings: {},
    });
    const errors = failing(result);
    expect(errors.map((f) => `${f.rule} ${f.description}`).sort()).toEqual([
      "F3006 Type: Resource type 'AWS::SES::ConfigurationSet' does not exist in 'cn-north-1'",
      "F3006 Type: Resource type 'AWS::SES::ConfigurationSetEventDestination' does not exist in 'cn-north-1'",
    ]);
  });
});
