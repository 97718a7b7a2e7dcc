import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  CHECK_ACCOUNT,
  CHECK_REGIONS,
  checkTargets,
  createdAfter,
  dependsOnOf,
  orderingProblems,
  parseCfnLintJson,
  runCfnLint,
} from '../../lib/deploy-check.ts';
import { synthesize } from './synth.ts';

let delivery: CfnTemplate;
let stateful: CfnTemplate;

beforeAll(() => {
  const synth = synthesize({ bundle: false });
  delivery = synth.deliveryTemplate.toJSON() as CfnTemplate;
  stateful = synth.statefulTemplate.toJSON() as CfnTemplate;
});

/** A deep copy of a template with one resource changed. */
function withResource(
  template: CfnTemplate,
  type: string,
  change: (resource: Record<string, unknown>) => void,
): CfnTemplate {
  const copy = structuredClone(template) as CfnTemplate;
  const entry = Object.values(copy.Resources).find((r) => r.Type === type);
  change(entry as unknown as Record<string, unknown>);
  return copy;
}

describe('deploy:check ordering rules', () => {
  it('find nothing wrong with the synthesized stacks', () => {
    expect(orderingProblems(delivery)).toEqual([]);
    expect(orderingProblems(stateful)).toEqual([]);
  });

  it('catch a stage created without waiting for a route its RouteSettings name', () => {
    const broken = withResource(delivery, 'AWS::ApiGatewayV2::Stage', (stage) => {
      delete stage.DependsOn;
    });
    expect(orderingProblems(broken)).toEqual([
      expect.stringMatching(
        /RouteSettings names "POST \/v1\/provider-events\/twilio" but the stage does not DependsOn/,
      ),
    ]);
  });

  it('catch RouteSettings naming a route the API does not have', () => {
    const broken = withResource(delivery, 'AWS::ApiGatewayV2::Stage', (stage) => {
      (stage.Properties as { RouteSettings: Record<string, unknown> }).RouteSettings = {
        'POST /v1/provider-events/resend': {},
      };
    });
    expect(orderingProblems(broken)).toEqual([
      expect.stringMatching(/"POST \/v1\/provider-events\/resend", which no route/),
    ]);
  });

  it('catch an SQS event source mapping that may be created before its consume grant', () => {
    // The mapping waits for the function, which waits for the role's policy; cut that link.
    const mapping = Object.values(delivery.Resources).find(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping',
    );
    const functionId = (mapping?.Properties?.FunctionName as { Ref: string } | undefined)?.Ref as string;
    const broken = structuredClone(delivery) as CfnTemplate;
    const fn = broken.Resources[functionId] as { DependsOn?: string[] };
    fn.DependsOn = dependsOnOf(fn as never).filter(
      (id) => broken.Resources[id]?.Type !== 'AWS::IAM::ManagedPolicy',
    );
    // Every mapping of that function is caught: one per lane queue (standard, critical, bulk).
    const mappings = Object.entries(delivery.Resources)
      .filter(
        ([, r]) =>
          r.Type === 'AWS::Lambda::EventSourceMapping' &&
          (r.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref === functionId,
      )
      .map(([id]) => id);
    expect(mappings).toHaveLength(3);
    const problems = orderingProblems(broken);
    expect(problems).toHaveLength(3 * mappings.length);
    for (const id of mappings) {
      for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes']) {
        expect(
          problems.some(
            (p) => p.startsWith(`${id}:`) && p.includes(action) && p.includes('may be created before'),
          ),
          `${id} ${action}`,
        ).toBe(true);
      }
    }
  });

  it('catch a function whose dead-letter queue its role may not send to', () => {
    const dlqFunction = Object.entries(delivery.Resources).find(
      ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties?.DeadLetterConfig,
    )?.[0] as string;
    const broken = structuredClone(delivery) as CfnTemplate;
    for (const resource of Object.values(broken.Resources)) {
      if (resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
      const doc = resource.Properties?.PolicyDocument as { Statement: { Action: string | string[] }[] };
      doc.Statement = doc.Statement.filter((st) => ![st.Action].flat().includes('sqs:SendMessage'));
    }
    expect(orderingProblems(broken)).toContainEqual(
      expect.stringMatching(new RegExp(`^${dlqFunction}: role .* is granted no sqs:SendMessage`)),
    );
  });

  it('follow references and DependsOn transitively', () => {
    const t: CfnTemplate = {
      Resources: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudFormation Fn::Sub string
        A: { Type: 'X', Properties: { P: { 'Fn::Sub': 'x-${B.Arn}' } } },
        B: { Type: 'X', DependsOn: 'C' },
        C: { Type: 'X' },
      },
    };
    expect(createdAfter(t, 'A', 'C')).toBe(true);
    expect(createdAfter(t, 'C', 'A')).toBe(false);
  });
});

describe('deploy:check targets', () => {
  it('are the agnostic synth and each check Region as the CLI passes it, when nothing is pinned', () => {
    const targets = checkTargets({ sesFromAddress: 'notices@example.org' });
    expect(targets.map((t) => [t.label, t.cli])).toEqual([
      ['environment-agnostic', {}],
      ...CHECK_REGIONS.map((region) => [
        `${CHECK_ACCOUNT}/${region}`,
        { CDK_DEFAULT_ACCOUNT: CHECK_ACCOUNT, CDK_DEFAULT_REGION: region },
      ]),
    ]);
    expect(targets.every((t) => t.settings.sesFromAddress === 'notices@example.org')).toBe(true);
  });

  it('include the pinned account and Region as the settings say, and the other Regions for that account', () => {
    const pinned = { account: '111122223333', region: 'eu-west-1' };
    const targets = checkTargets(pinned, ['ap-south-1']);
    expect(targets.map((t) => t.label)).toEqual([
      'environment-agnostic',
      '111122223333/eu-west-1 (pinned)',
      '111122223333/us-east-1',
      '111122223333/us-gov-west-1',
      '111122223333/ap-south-1',
    ]);
    expect(targets[1]?.settings).toEqual(pinned);
    expect(targets[2]?.settings).toMatchObject({ account: '', region: '' });
  });
});

describe('deploy:check cfn-lint', () => {
  it('reports a missing cfn-lint as missing (the check then prints that it skipped the lint)', async () => {
    const result = await runCfnLint(['x.json'], ['eu-west-1'], 'cfn-lint-that-is-not-installed');
    expect(result.status).toBe('missing');
  });

  it('reads cfn-lint’s JSON output, whatever its exit code', async () => {
    // A stand-in with cfn-lint's interface: exits 2 (errors found) after printing one match.
    const dir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
    const fake = join(dir, 'cfn-lint');
    const match = {
      Filename: 'a.template.json',
      Level: 'Error',
      Location: { Start: { LineNumber: 226, ColumnNumber: 5 }, End: { LineNumber: 226, ColumnNumber: 18 } },
      Message: "Additional properties are not allowed ('Description' was unexpected)",
      Rule: { Id: 'E3002' },
    };
    writeFileSync(
      fake,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo 'cfn-lint 1.51.0'; exit 0; fi\ncat <<'EOF'\n${JSON.stringify([match])}\nEOF\nexit 2\n`,
    );
    chmodSync(fake, 0o755);
    const result = await runCfnLint(['a.template.json'], ['us-gov-west-1'], fake);
    expect(result).toEqual({
      status: 'ran',
      version: 'cfn-lint 1.51.0',
      matches: [
        { level: 'Error', rule: 'E3002', message: match.Message, file: 'a.template.json', line: 226 },
      ],
    });
    expect(parseCfnLintJson('[]')).toEqual([]);
  });
});
