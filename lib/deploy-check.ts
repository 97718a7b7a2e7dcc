import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Token } from 'aws-cdk-lib';
import { FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT, VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import {
  type CliEnvironment,
  cdkJsonContext,
  createNoticeLedgerApp,
  PLACEHOLDER_SENDER_WARNING,
} from './app.ts';

/**
 * `npm run deploy:check` (bin/deploy-check.ts): what `cdk deploy` would reject, found offline.
 * Each target is synthesized in-process through the path bin/app.ts takes
 * ({@link createNoticeLedgerApp}), with the validation plugins `cdk synth` runs (cdk-nag
 * AwsSolutions + HIPAA.Security, CDK's CloudFormation validation, construct annotations); then
 * the templates are checked for creation order and linted with cfn-lint when it is installed.
 */

/** The account a check synthesizes for when the settings pin none (AWS's documentation account). */
export const CHECK_ACCOUNT = '123456789012';

/**
 * Regions checked besides a pinned one: two commercial Regions and one of AWS GovCloud (US), so
 * every acknowledgement is exercised with the `aws` and `aws-us-gov` partitions. The China
 * Regions (`aws-cn`) are no target: Amazon SES does not exist there (CDK's CloudFormation
 * validation rejects AWS::SES::ConfigurationSet, F3006), see test/infra/compliance.test.ts.
 */
export const CHECK_REGIONS = ['eu-west-1', 'us-east-1', 'us-gov-west-1'] as const;

/** Warnings a check reports without failing (they describe the settings, not a defect). */
export const ACCEPTED_WARNINGS: readonly string[] = [`Annotation::${PLACEHOLDER_SENDER_WARNING}`];

export interface Target {
  /** `environment-agnostic` or `<account>/<region>`. */
  readonly label: string;
  /** What the CDK CLI would pass to the app. */
  readonly cli: CliEnvironment;
  /** Settings overrides on top of the settings file (account/region cleared for CLI targets). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/**
 * The environment-agnostic synth (`npm run synth`), and one account-specific synth per Region as
 * `cdk deploy` runs it: the pinned account and Region as they are, the other Regions the way the
 * CLI passes them (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
 */
export function checkTargets(
  fileSettings: Readonly<Record<string, unknown>>,
  extraRegions: readonly string[] = [],
): Target[] {
  const pinnedAccount = typeof fileSettings.account === 'string' ? fileSettings.account.trim() : '';
  const pinnedRegion = typeof fileSettings.region === 'string' ? fileSettings.region.trim() : '';
  const cliSettings = { ...fileSettings, account: '', region: '' };
  const account = pinnedAccount || CHECK_ACCOUNT;
  const targets: Target[] = [{ label: 'environment-agnostic', cli: {}, settings: cliSettings }];
  if (pinnedAccount && pinnedRegion) {
    targets.push({ label: `${pinnedAccount}/${pinnedRegion} (pinned)`, cli: {}, settings: fileSettings });
  }
  for (const region of new Set([...CHECK_REGIONS, ...extraRegions])) {
    if (region === pinnedRegion && pinnedAccount) continue;
    targets.push({
      label: `${account}/${region}`,
      cli: { CDK_DEFAULT_ACCOUNT: account, CDK_DEFAULT_REGION: region },
      settings: cliSettings,
    });
  }
  return targets;
}

export interface SynthesizedStack {
  readonly stackName: string;
  /** Literal Region, or undefined when environment-agnostic. */
  readonly region: string | undefined;
  readonly account: string | undefined;
  readonly templatePath: string;
  readonly template: CfnTemplate;
}

export interface Finding {
  readonly plugin: string;
  readonly rule: string;
  readonly severity: string;
  readonly description: string;
  readonly constructPaths: readonly string[];
}

export interface TargetResult {
  readonly target: Target;
  readonly outdir: string;
  readonly stacks: readonly SynthesizedStack[];
  /** Every violation of the validation report, of any severity. */
  readonly findings: readonly Finding[];
  /** A synthesis that threw (configuration error, bundling failure …). */
  readonly error: string | undefined;
  readonly elapsedMs: number;
}

interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations: readonly {
      readonly ruleName: string;
      readonly description: string;
      readonly severity?: string;
      readonly violatingConstructs: readonly { readonly constructPath: string }[];
    }[];
  }[];
}

/**
 * Synthesizes one target into `outdir`. Validation failures do not throw here (the CDK reports
 * them through `validation-report.json`, which is read back whole, warnings included).
 */
export function synthesizeTarget(
  target: Target,
  options: { readonly outdir: string; readonly bundle: boolean },
): TargetResult {
  const started = performance.now();
  rmSync(options.outdir, { recursive: true, force: true });
  mkdirSync(options.outdir, { recursive: true });
  let error: string | undefined;
  let stacks: SynthesizedStack[] = [];
  try {
    const built = createNoticeLedgerApp({
      cli: target.cli,
      settings: target.settings,
      appProps: {
        outdir: options.outdir,
        context: {
          ...cdkJsonContext(),
          // Same plugins, same report; the report is judged here instead of by a throw.
          [FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT]: false,
          ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
        },
      },
    });
    built.app.synth();
    stacks = [built.stateful, built.delivery].map((stack) => {
      const templatePath = join(options.outdir, stack.templateFile);
      return {
        stackName: stack.stackName,
        region: Token.isUnresolved(stack.region) ? undefined : stack.region,
        account: Token.isUnresolved(stack.account) ? undefined : stack.account,
        templatePath,
        template: JSON.parse(readFileSync(templatePath, 'utf8')) as CfnTemplate,
      };
    });
  } catch (e) {
    error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  }
  const reportPath = join(options.outdir, VALIDATION_REPORT_FILE);
  const report = existsSync(reportPath)
    ? (JSON.parse(readFileSync(reportPath, 'utf8')) as ValidationReport)
    : { pluginReports: [] };
  return {
    target,
    outdir: options.outdir,
    stacks,
    findings: report.pluginReports.flatMap((p) =>
      p.violations.map((v) => ({
        plugin: p.pluginName,
        rule: v.ruleName,
        severity: v.severity ?? 'error',
        description: v.description,
        constructPaths: v.violatingConstructs.map((c) => c.constructPath),
      })),
    ),
    error,
    elapsedMs: performance.now() - started,
  };
}

// ── creation order ───────────────────────────────────────────────────────────────────────────

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | readonly string[];
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
  readonly Outputs?: Record<string, unknown>;
}

export function dependsOnOf(resource: CfnResource | undefined): string[] {
  const d = resource?.DependsOn;
  return d === undefined ? [] : typeof d === 'string' ? [d] : [...d];
}

/** Logical ids a resource refers to in its properties (Ref, Fn::GetAtt, Fn::Sub). */
function referencesOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) referencesOf(item, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string') out.add(inner);
      else if (key === 'Fn::GetAtt' && Array.isArray(inner) && typeof inner[0] === 'string')
        out.add(inner[0]);
      else if (key === 'Fn::Sub') {
        const text = Array.isArray(inner) ? inner[0] : inner;
        for (const m of String(text).matchAll(/\$\{([A-Za-z0-9]+)(\.[^}]*)?\}/g)) out.add(m[1] as string);
        if (Array.isArray(inner)) referencesOf(inner[1], out);
      } else referencesOf(inner, out);
    }
  }
  return out;
}

/** `true` when CloudFormation creates `later` only after `earlier` (DependsOn or references, transitively). */
export function createdAfter(template: CfnTemplate, later: string, earlier: string): boolean {
  const seen = new Set<string>();
  const stack = [later];
  while (stack.length > 0) {
    const id = stack.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    const resource = template.Resources[id];
    if (!resource) continue;
    const next = [...dependsOnOf(resource), ...referencesOf(resource.Properties)];
    if (next.includes(earlier)) return true;
    stack.push(...next.filter((n) => template.Resources[n]));
  }
  return false;
}

/**
 * API Gateway rejects a stage whose RouteSettings name a route that does not exist yet, and
 * nothing but an explicit DependsOn orders a stage after its routes.
 */
export function stageRouteProblems(template: CfnTemplate): string[] {
  const problems: string[] = [];
  const resources = Object.entries(template.Resources);
  for (const [stageId, stage] of resources.filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Stage')) {
    const settings = (stage.Properties?.RouteSettings ?? {}) as Record<string, unknown>;
    for (const routeKey of Object.keys(settings)) {
      const routes = resources.filter(
        ([, r]) =>
          r.Type === 'AWS::ApiGatewayV2::Route' &&
          r.Properties?.RouteKey === routeKey &&
          JSON.stringify(r.Properties?.ApiId) === JSON.stringify(stage.Properties?.ApiId),
      );
      if (routes.length === 0) {
        problems.push(`${stageId}: RouteSettings names "${routeKey}", which no route of its API has`);
      } else if (!routes.some(([routeId]) => dependsOnOf(stage).includes(routeId))) {
        problems.push(
          `${stageId}: RouteSettings names "${routeKey}" but the stage does not DependsOn its route ` +
            `${routes.map(([id]) => id).join(', ')} (API Gateway rejects the stage if it is created first)`,
        );
      }
    }
  }
  return problems;
}

interface PolicyStatement {
  readonly Effect?: string;
  readonly Action?: string | readonly string[];
  readonly Resource?: unknown;
}

function asList<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...value] : [value as T];
}

function actionMatches(pattern: string, action: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`, 'i').test(action);
}

/** Logical ids of the policies (or the role itself, for inline policies) granting `action` on `resource` to a role. */
function grantsTo(template: CfnTemplate, roleId: string, action: string, resource: unknown): string[] {
  const target = JSON.stringify(resource);
  const grants = (statements: readonly PolicyStatement[]) =>
    statements.some(
      (st) =>
        st.Effect === 'Allow' &&
        asList(st.Action).some((a) => actionMatches(a, action)) &&
        asList(st.Resource).some((r) => JSON.stringify(r) === target || r === '*'),
    );
  const out: string[] = [];
  for (const [id, r] of Object.entries(template.Resources)) {
    if (r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::IAM::Policy') {
      const roles = asList(r.Properties?.Roles as unknown[] | undefined).map((x) => JSON.stringify(x));
      const document = r.Properties?.PolicyDocument as { Statement?: PolicyStatement[] } | undefined;
      if (roles.includes(JSON.stringify({ Ref: roleId })) && grants(document?.Statement ?? [])) out.push(id);
    }
  }
  const role = template.Resources[roleId];
  const inline = (role?.Properties?.Policies ?? []) as {
    PolicyDocument?: { Statement?: PolicyStatement[] };
  }[];
  if (inline.some((p) => grants(p.PolicyDocument?.Statement ?? []))) out.push(roleId);
  return out;
}

function roleOfFunction(template: CfnTemplate, functionId: string): string | undefined {
  const role = template.Resources[functionId]?.Properties?.Role as
    | { 'Fn::GetAtt'?: [string, string] }
    | undefined;
  return role?.['Fn::GetAtt']?.[0];
}

/**
 * Lambda checks the execution role when it creates an SQS event source mapping (ReceiveMessage,
 * DeleteMessage, GetQueueAttributes) and a function with an SQS dead-letter queue (SendMessage):
 * "The provided execution role does not have permissions …". Each must therefore be created after
 * the policy that grants it, not merely after the role.
 */
export function lambdaPermissionOrderProblems(template: CfnTemplate): string[] {
  const problems: string[] = [];
  const require = (dependent: string, functionId: string, actions: readonly string[], resource: unknown) => {
    const roleId = roleOfFunction(template, functionId);
    if (!roleId) return;
    for (const action of actions) {
      const granting = grantsTo(template, roleId, action, resource);
      if (granting.length === 0) {
        problems.push(
          `${dependent}: role ${roleId} of ${functionId} is granted no ${action} on ${JSON.stringify(resource)}`,
        );
      } else if (!granting.some((policy) => createdAfter(template, dependent, policy))) {
        problems.push(`${dependent}: may be created before ${granting.join(' / ')}, which grants ${action}`);
      }
    }
  };
  for (const [id, r] of Object.entries(template.Resources)) {
    if (r.Type === 'AWS::Lambda::EventSourceMapping') {
      const arn = r.Properties?.EventSourceArn;
      const fn = (r.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref;
      if (fn && isQueueArn(template, arn)) {
        require(id, fn, ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], arn);
      }
    }
    if (r.Type === 'AWS::Lambda::Function') {
      const dlq = (r.Properties?.DeadLetterConfig as { TargetArn?: unknown } | undefined)?.TargetArn;
      if (dlq !== undefined && isQueueArn(template, dlq)) require(id, id, ['sqs:SendMessage'], dlq);
    }
  }
  return problems;
}

/**
 * An SQS queue ARN: `Fn::GetAtt` of a queue of this template, a literal `arn:…:sqs:…`, or another
 * stack's output whose name says Queue (CDK names cross-stack outputs after the referenced path).
 */
function isQueueArn(template: CfnTemplate, arn: unknown): boolean {
  const getAtt = (arn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
  if (getAtt) return template.Resources[getAtt[0]]?.Type === 'AWS::SQS::Queue';
  return /Queue|:sqs:/.test(JSON.stringify(arn));
}

/** Every ordering rule over one template. */
export function orderingProblems(template: CfnTemplate): string[] {
  return [...stageRouteProblems(template), ...lambdaPermissionOrderProblems(template)];
}

// ── cfn-lint ─────────────────────────────────────────────────────────────────────────────────

export interface LintMatch {
  readonly level: 'Error' | 'Warning' | 'Informational';
  readonly rule: string;
  readonly message: string;
  readonly file: string;
  readonly line: number | undefined;
}

export type LintResult =
  | { readonly status: 'missing'; readonly reason: string }
  | { readonly status: 'ran'; readonly version: string; readonly matches: readonly LintMatch[] }
  | { readonly status: 'failed'; readonly reason: string };

const execFileAsync = promisify(execFile);

/** Parses `cfn-lint --format json` output. */
export function parseCfnLintJson(stdout: string): LintMatch[] {
  const raw = JSON.parse(stdout || '[]') as {
    Level: LintMatch['level'];
    Rule: { Id: string };
    Message: string;
    Filename: string;
    Location?: { Start?: { LineNumber?: number } };
  }[];
  return raw.map((m) => ({
    level: m.Level,
    rule: m.Rule.Id,
    message: m.Message,
    file: m.Filename,
    line: m.Location?.Start?.LineNumber,
  }));
}

/**
 * cfn-lint over `templates` for `regions`. cfn-lint is a Python tool (pip) that is not packaged
 * for Debian 12 and not on npm, so a fresh machine may not have it: then the result says
 * `missing`, and the caller prints that the lint was skipped.
 */
export async function runCfnLint(
  templates: readonly string[],
  regions: readonly string[],
  command = 'cfn-lint',
): Promise<LintResult> {
  let version: string;
  try {
    version = (await execFileAsync(command, ['--version'])).stdout.trim();
  } catch (e) {
    return {
      status: 'missing',
      reason: `${command} --version failed (${(e as Error).message.split('\n')[0]})`,
    };
  }
  const args = ['--format', 'json', '--regions', ...regions, '--', ...templates];
  try {
    const { stdout } = await execFileAsync(command, args, { maxBuffer: 64 * 1024 * 1024 });
    return { status: 'ran', version, matches: parseCfnLintJson(stdout) };
  } catch (e) {
    // cfn-lint exits non-zero when it finds anything (2 errors, 4 warnings, 8 informational).
    const failure = e as { stdout?: string; stderr?: string; code?: number };
    try {
      return { status: 'ran', version, matches: parseCfnLintJson(failure.stdout ?? '') };
    } catch {
      return {
        status: 'failed',
        reason: `exit ${failure.code}: ${(failure.stderr ?? '').trim().slice(0, 2000)}`,
      };
    }
  }
}
