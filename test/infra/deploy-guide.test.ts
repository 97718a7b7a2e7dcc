import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { USAGE as CLI_USAGE } from '../../client/cli/main.ts';
import { LedgerTable } from '../../lambdas/contract/ledger-table.ts';
import {
  Metric,
  OPEN_STATES,
  OUTCOME_STATES,
  openMetric,
  outcomeMetric,
} from '../../lambdas/contract/metrics.ts';
import { SETTING_NAMES } from '../../lambdas/contract/settings.ts';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { SETTING_DEFAULTS } from '../../lib/config.ts';
import { pascal, secretFields } from '../../lib/providers/provider-secret.ts';
import { PROVIDER_BINDINGS } from '../../lib/providers/registry.ts';
import { LOCAL_SETTINGS } from '../../local/settings.ts';
import { logicalId, ROOT, type Synthesized, synthesize } from './synth.ts';

/**
 * docs/deploy.md is followed command by command by someone deploying for the first time. It is
 * checked against the synthesized assembly — every stack it names (CloudFormation name or CDK
 * id, each where it belongs), output, alarm, function, construct id, physical name, number it
 * states — and against the commands it quotes (`cdk` with the CLI's own option registry, npm
 * scripts, the repository's CLI), and as a shell script (every variable set before it is used).
 * The AWS CLI commands are not checked here (CI has no AWS CLI model); provider APIs neither.
 */
const GUIDE = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
const COST = readFileSync(join(ROOT, 'docs', 'cost.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};

const ACCOUNT = '111122223333';
const REGION = 'eu-west-1';
/**
 * The deployments the guide describes, each for a concrete account and Region (as `cdk deploy`
 * synthesizes): the defaults, and enough provider selections that every provider is deployed
 * somewhere both selected (its transport) and retained, so that every output, alarm, rule and
 * secret reader a provider adds is in one of them.
 */
const DEPLOYMENTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  defaults: {},
  everyProvider: {
    emailProvider: 'resend',
    smsProvider: 'infrai',
    retainedProviders: ['ses', 'twilio', 'sendgrid', 'eum'],
  },
  sendgridAndEum: { emailProvider: 'sendgrid', smsProvider: 'eum' },
  gatewayAndTwilio: { emailProvider: 'infrai', smsProvider: 'twilio' },
};

interface Deployment {
  readonly synth: Synthesized;
  /** CloudFormation stack name → names of the outputs declared in lib/ (not CDK's `PublishOutput…`). */
  readonly outputs: Map<string, Set<string>>;
}

let deployments: Map<string, Deployment>;
let defaults: Deployment;
/** `{ id, name }` of each stack: the CDK CLI's id and CloudFormation's name. */
let stacks: { id: string; name: string }[];
let alarmLabels: Set<string>;
let functionLabels: Set<string>;
let constructIds: Set<string>;
let physicalNames: Set<string>;
let tagKeys: Set<string>;

/** Every string at `key` (any depth) of a template fragment. */
function stringsAt(value: unknown, accept: (key: string) => boolean, out: Set<string>, key = ''): void {
  if (typeof value === 'string') {
    if (accept(key)) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) stringsAt(v, accept, out, key);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) stringsAt(v, accept, out, k);
  }
}

function templatesOf(d: Deployment) {
  return [d.synth.statefulTemplate.toJSON(), d.synth.deliveryTemplate.toJSON()] as {
    Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    Outputs?: Record<string, { Value: unknown }>;
  }[];
}

beforeAll(() => {
  deployments = new Map(
    Object.entries(DEPLOYMENTS).map(([name, settings]) => {
      const synth = synthesize({
        settings: { account: ACCOUNT, region: REGION, ...settings },
        bundle: false,
      });
      const outputs = new Map(
        [
          [synth.stateful.stackName, synth.statefulTemplate],
          [synth.delivery.stackName, synth.deliveryTemplate],
        ].map(([stack, template]) => [
          stack as string,
          new Set(
            Object.keys((template as Synthesized['statefulTemplate']).toJSON().Outputs ?? {}).filter(
              (o) => !o.startsWith('PublishOutput'),
            ),
          ),
        ]),
      );
      return [name, { synth, outputs }];
    }),
  );
  defaults = deployments.get('defaults') as Deployment;
  stacks = [defaults.synth.stateful, defaults.synth.delivery].map((s) => ({
    id: s.artifactId,
    name: s.stackName,
  }));
  const all = [...deployments.values()];
  alarmLabels = new Set(all.flatMap((d) => d.synth.delivery.monitoring.alarms.map((a) => a.node.id)));
  functionLabels = new Set(Object.values(defaults.synth.delivery.functions).map((f) => f.node.id));
  constructIds = new Set(all.flatMap((d) => d.synth.app.node.findAll().map((c: IConstruct) => c.node.id)));
  physicalNames = new Set();
  tagKeys = new Set();
  for (const d of all) {
    for (const template of templatesOf(d)) {
      for (const resource of Object.values(template.Resources)) {
        stringsAt(resource.Properties, (k) => k.endsWith('Name') || k === 'Value', physicalNames);
        stringsAt(resource.Properties, (k) => k === 'Key', tagKeys);
      }
    }
  }
});

/** Outputs of `stack` in any deployment. */
function anyOutputs(stack: string): Set<string> {
  return new Set([...deployments.values()].flatMap((d) => [...(d.outputs.get(stack) ?? [])]));
}

/** The guide's ```bash blocks, in order, with `\` continuations joined. */
function bashBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^ *```bash\n([\s\S]*?)^ *```/gm)].map((m) =>
    (m[1] as string).replace(/\\\n\s*/g, ' '),
  );
}

/** The guide's inline code spans (outside fenced blocks), line breaks as spaces. */
function inlineCode(markdown: string): string[] {
  const prose = markdown.replace(/^ *```[\s\S]*?^ *```/gm, '');
  return [...prose.matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\s*\n\s*/g, ' '));
}

/** Every place a command may be quoted: each line of a bash block, each inline code span. */
function commandTexts(markdown: string): string[] {
  return [...bashBlocks(markdown).flatMap((b) => b.split('\n')), ...inlineCode(markdown)];
}

/** The words of `tool`'s invocations in `text`, up to a shell operator or comment. */
function invocations(text: string, tool: RegExp): string[][] {
  return [...text.matchAll(new RegExp(`(?:^|[\\s("$])${tool.source}((?:\\s+[^\\s;&|#)\`]+)+)`, 'g'))].map(
    (m) =>
      (m[1] as string)
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((w) => w.replace(/^["']|["']$/g, '')),
  );
}

/** `text` with single-quoted strings and comments blanked (no expansion happens there). */
function expandable(line: string): string {
  let out = '';
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (quote === undefined && c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) break;
    if (quote === undefined && c === "'") {
      quote = "'";
      continue;
    }
    if (c === '"' && line[i - 1] !== '\\') quote = quote === '"' ? undefined : '"';
    out += c;
  }
  return out;
}

/** What `eval "$(aws configure export-credentials --format env)"` exports. */
const EXPORTED_CREDENTIALS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

function section(title: string): string {
  const start = GUIDE.indexOf(`\n## ${title}`);
  expect(start, title).toBeGreaterThan(0);
  const end = GUIDE.indexOf('\n## ', start + 1);
  return GUIDE.slice(start, end < 0 ? undefined : end);
}

/** Rows of the markdown tables in `text`, as trimmed cells (separator rows left out). */
function tableRows(text: string): string[][] {
  return [...text.matchAll(/^ *\|(.+)\| *$/gm)]
    .map((m) => (m[1] as string).split('|').map((c) => c.trim()))
    .filter((cells) => !cells.every((c) => /^-+$/.test(c)));
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/** `*` as any run of characters, the rest literal. */
const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/** `a-{b,c}-d` → `a-b-d`, `a-c-d`. */
function braces(pattern: string): string[] {
  const m = /\{([^{}]*)\}/.exec(pattern);
  if (!m) return [pattern];
  return (m[1] as string)
    .split(',')
    .flatMap((alt) => braces(pattern.slice(0, m.index) + alt + pattern.slice(m.index + m[0].length)));
}

describe('docs/deploy.md against the synthesized stacks', () => {
  it('names only stacks that exist: CloudFormation names where CloudFormation reads them, CDK ids where the CDK CLI does', () => {
    const names = new Set([...GUIDE.matchAll(/\bNoticeLedger-[A-Za-z]+/g)].map((m) => m[0]));
    expect([...names].sort()).toEqual(stacks.map((s) => s.name).sort());
    for (const m of GUIDE.matchAll(/--stack-name "?([\w-]+)/g)) {
      expect(
        stacks.map((s) => s.name),
        m[0],
      ).toContain(m[1]);
    }
    const ids = inlineCode(GUIDE).filter((c) => /^NoticeLedger[A-Z]\w*$/.test(c));
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids)
      expect(
        stacks.map((s) => s.id),
        id,
      ).toContain(id);
  });

  it('reads every output from the stack that has it', () => {
    const reads = [...GUIDE.matchAll(/\boutput ([A-Za-z][\w-]*) (\w+)/g)];
    expect(reads.length).toBeGreaterThanOrEqual(6);
    for (const [, stack, name] of reads) {
      expect(anyOutputs(stack as string).has(name as string), `${name} of ${stack}`).toBe(true);
    }
    // And nothing reads outputs any other way (a --stack-name + OutputKey pair would escape the check).
    expect(GUIDE).not.toMatch(/OutputKey=='[A-Za-z]/);
  });

  it('lists exactly the stacks’ outputs in its outputs table, each under its stack, a provider’s own marked', () => {
    const rows = tableRows(section('What gets deployed'))
      .map(([stack, output, purpose]) => ({
        stack: /^`(NoticeLedger-[A-Za-z]+)`$/.exec(stack ?? '')?.[1],
        output: /^`(\w+)`$/.exec(output ?? '')?.[1],
        purpose: purpose ?? '',
      }))
      .filter((r) => r.stack && r.output);
    const listed = rows.map((r) => `${r.stack} ${r.output}`).sort();
    const actual = stacks.flatMap(({ name }) => [...anyOutputs(name)].map((o) => `${name} ${o}`)).sort();
    expect(listed).toEqual(actual);
    // Rows in italics (`_with … deployed_`) are exactly the outputs the defaults do not have.
    for (const row of rows) {
      const inDefaults = defaults.outputs.get(row.stack as string)?.has(row.output as string);
      expect(row.purpose.startsWith('_with'), `${row.output}: marked as a provider's`).toBe(!inDefaults);
    }
  });

  it('describes the open-intent index as deployed (keys and projection)', () => {
    const described = GUIDE.match(
      /`([\w-]+)` \(keys `(\w+)`\/`(\w+)`; projection (\w+) ((?:`\w+`(?:, )?)+)\)/,
    );
    expect(described).not.toBeNull();
    const [, name, hash, range, type, attributes] = described as RegExpMatchArray;
    const table = Object.values(defaults.synth.statefulTemplate.findResources('AWS::DynamoDB::Table'))[0];
    const index = table?.Properties.GlobalSecondaryIndexes.find(
      (i: { IndexName: string }) => i.IndexName === name,
    );
    expect(index, name).toBeDefined();
    expect(index.KeySchema).toEqual([
      { AttributeName: hash, KeyType: 'HASH' },
      { AttributeName: range, KeyType: 'RANGE' },
    ]);
    expect(index.Projection).toEqual({
      ProjectionType: type,
      NonKeyAttributes: [...(attributes as string).matchAll(/`(\w+)`/g)].map((m) => m[1]),
    });
  });

  it('names the deployed functions, and only those', () => {
    const row = tableRows(section('What gets deployed')).find((cells) =>
      /Lambda functions/.test(cells[0] ?? ''),
    );
    expect(row).toBeDefined();
    const [what, notes] = row as string[];
    expect(Number(/^(\d+) Lambda functions/.exec(what as string)?.[1])).toBe(functionLabels.size);
    expect(new Set(backticked(notes as string).filter((t) => /^[A-Z]/.test(t)))).toEqual(functionLabels);
  });

  it('names only things the assembly has: outputs, alarms, functions, constructs, metrics (backticked PascalCase)', () => {
    const metrics = new Set<string>([
      ...Object.values(Metric),
      ...OPEN_STATES.map(openMetric),
      ...OUTCOME_STATES.map(outcomeMetric),
    ]);
    // AWS's own words the guide quotes (a CloudFormation attribute, a field of an API answer).
    const awsWords = new Set(['DependsOn', 'VerifiedDestinationNumberId', 'DDBStreamBatchInfo']);
    const known = (name: string) =>
      stacks.some((s) => anyOutputs(s.name).has(name)) ||
      alarmLabels.has(name) ||
      functionLabels.has(name) ||
      constructIds.has(name) ||
      metrics.has(name) ||
      // A setting's default names something of AWS's (`Default`, the opt-out list) or the prefix.
      Object.values(SETTING_DEFAULTS).includes(name) ||
      awsWords.has(name);
    const names = inlineCode(GUIDE).filter(
      (c) => /^[A-Z][A-Za-z0-9]*(?:_[a-z_]+)?$/.test(c) && /[a-z]/.test(c),
    );
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((n) => !known(n))).toEqual([]);
  });

  it('names only settings, ledger attributes and functions that exist (backticked camelCase, outside the vocabulary change)', () => {
    const exported = new Set<string>();
    const sources = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(ROOT, dir, f));
    for (const file of ['lib', 'local', 'lambdas'].flatMap(sources)) {
      for (const m of readFileSync(file, 'utf8').matchAll(/export (?:async )?function (\w+)/g))
        exported.add(m[1] as string);
    }
    const attributes = new Set<string>(
      (Object.values(LedgerTable).flat() as unknown[]).filter((v): v is string => typeof v === 'string'),
    );
    const vocabulary = section('Vocabulary change');
    const names = inlineCode(GUIDE.replace(vocabulary, '')).filter((c) =>
      /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(c),
    );
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((n) => !(n in SETTING_DEFAULTS) && !attributes.has(n) && !exported.has(n))).toEqual(
      [],
    );
  });

  it('quotes physical names, tag keys and warning ids the assembly has', () => {
    const warnings = new Set(
      PROVIDER_BINDINGS.flatMap((b) => b.acceptedWarnings ?? []).map((w) => w.replace(/^Annotation::/, '')),
    );
    const quoted = inlineCode(GUIDE).filter((c) => /^(alias\/)?notice-ledger[^\s]*$/.test(c));
    expect(quoted.length).toBeGreaterThan(8);
    for (const name of quoted) {
      if (name.includes(':')) {
        expect(warnings.has(name) || tagKeys.has(name), name).toBe(true);
        continue;
      }
      for (const pattern of braces(name.replace(/<region>/g, REGION).replace(/<[^>]+>/g, '*'))) {
        expect(
          [...physicalNames].some((n) => glob(pattern).test(n)),
          `${name} (${pattern})`,
        ).toBe(true);
      }
    }
  });

  it('lists every alarm in its runbook, and no alarm that does not exist', () => {
    const rows = tableRows(section('When an alarm fires')).slice(1);
    const listed = rows.flatMap(([alarm]) => backticked(alarm ?? ''));
    expect(new Set(listed)).toEqual(alarmLabels);
    expect(listed).toHaveLength(alarmLabels.size);
  });

  it('redrives with start-message-move-task only queues that are some queue’s dead-letter target', () => {
    // start-message-move-task without a destination returns messages to the queue whose redrive
    // policy names the DLQ; the provider events' DLQ is no queue's (EventBridge and Lambda park
    // events there), so it has to be replayed to its function.
    const templates = [...deployments.values()].flatMap(templatesOf);
    const redriveTargets = new Set<string>();
    for (const template of templates) {
      for (const r of Object.values(template.Resources)) {
        const policy = r.Properties?.RedrivePolicy as
          | { deadLetterTargetArn?: { 'Fn::GetAtt'?: string[] } }
          | undefined;
        const target = policy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0];
        if (r.Type === 'AWS::SQS::Queue' && target) redriveTargets.add(target);
      }
    }
    // The six work queues' DLQs, the watch queue's and the outcome webhooks' (the stream failures'
    // is no redrive target).
    expect(redriveTargets.size).toBe(8);
    /** The queue an output's value is the ARN of. */
    const queueOfOutput = (name: string): string | undefined =>
      templates
        .map((t) => (t.Outputs?.[name]?.Value as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt'])
        .find((getAtt) => getAtt?.[1] === 'Arn')?.[0];
    // Each dead-letter alarm has an output of its queue's ARN under the same label, and watches it.
    const alarms = defaults.synth.deliveryTemplate.findResources('AWS::CloudWatch::Alarm');
    for (const label of [...alarmLabels].filter((l) => l.endsWith('DeadLetters'))) {
      const output = `${label.slice(0, -'DeadLetters'.length)}DeadLetterQueueArn`;
      const queue = queueOfOutput(output);
      expect(queue, output).toBeDefined();
      const alarm = Object.entries(alarms).find(([id]) =>
        new RegExp(`^Monitoring${label}[0-9A-F]{8}$`).test(id),
      );
      expect(JSON.stringify(alarm?.[1].Properties.Dimensions), `${label} watches ${queue}`).toContain(queue);
    }
    const redrivable = (label: string) =>
      redriveTargets.has(queueOfOutput(`${label.replace(/DeadLetters$/, '')}DeadLetterQueueArn`) ?? '');
    // The runbook: a row that prescribes the move task names only redrivable dead letters.
    const rows = tableRows(section('When an alarm fires')).slice(1);
    for (const cells of rows.filter((c) => c.join(' ').includes('start-message-move-task'))) {
      for (const label of backticked(cells[0] ?? ''))
        expect(redrivable(label), `${label}: redrive`).toBe(true);
    }
    // The commands: each --source-arn is an output holding a redrivable DLQ's ARN.
    const variables = new Map<string, string>();
    for (const block of bashBlocks(GUIDE)) {
      for (const m of block.matchAll(/(\w+)=\$\(output [\w-]+ (\w+)\)/g))
        variables.set(m[1] as string, m[2] as string);
    }
    const moves = [...GUIDE.matchAll(/start-message-move-task --source-arn "?\$\{?(\w+)/g)];
    expect(moves.length).toBeGreaterThan(0);
    for (const [, variable] of moves) {
      const output = variables.get(variable as string) ?? '';
      expect(redriveTargets.has(queueOfOutput(output) ?? ''), `${variable} = ${output}: a redrive DLQ`).toBe(
        true,
      );
    }
    // And the provider events' dead letters, which are not, go back to their function.
    expect(redrivable('ProviderEventsDeadLetters')).toBe(false);
    expect(section('When an alarm fires')).toMatch(
      /aws lambda invoke --function-name "\$PROVIDER_EVENTS_FUNCTION" --invocation-type Event/,
    );
    expect(GUIDE).toMatch(
      /PROVIDER_EVENTS_FUNCTION=\$\(output NoticeLedger-Delivery ProviderEventsFunctionName\)/,
    );
  });

  it('tells who reads each secret, for every secret an output names', () => {
    const rows = tableRows(section('4. After the first deploy'))
      .map(([output, shape, readers]) => ({
        output: /^`(\w+SecretArn)`$/.exec(output ?? '')?.[1],
        shape,
        readers,
      }))
      .filter((r) => r.output);
    const secretOutputs = [...anyOutputs(defaults.synth.stateful.stackName)].filter((o) =>
      o.endsWith('SecretArn'),
    );
    expect(rows.map((r) => r.output).sort()).toEqual(secretOutputs.sort());
    for (const { output, shape, readers } of rows) {
      const provider = PROVIDERS.find((p) => `${pascal(p.descriptor.id)}SecretArn` === output)?.descriptor;
      const variable = provider ? provider.secretVariable : 'FINGERPRINT_KEY_SECRET_ARN';
      const reading = new Set<string>();
      for (const d of deployments.values()) {
        for (const fn of Object.values(d.synth.delivery.functions)) {
          const resource =
            d.synth.deliveryTemplate.findResources('AWS::Lambda::Function')[logicalId(fn.function)];
          if (variable && variable in (resource?.Properties.Environment?.Variables ?? {}))
            reading.add(fn.node.id);
        }
      }
      const listed = new Set(backticked(readers ?? '').filter((t) => functionLabels.has(t)));
      expect(listed, `${output} read by`).toEqual(reading);
      if (provider) {
        expect(new Set([...(shape ?? '').matchAll(/"(\w+)"/g)].map((m) => m[1])), `${output} fields`).toEqual(
          new Set(secretFields(provider)),
        );
      }
    }
  });

  it('states the counts the assembly has: functions, event sources, queues, keys, alarms, senders’ concurrency', () => {
    const delivery = defaults.synth.deliveryTemplate;
    // The queues' event sources (the ledger stream's, of the outcome events, is listed apart).
    const mappings = Object.values(delivery.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => !JSON.stringify(m.Properties.EventSourceArn).includes('StreamArn'),
    );
    // The senders' (the watch's event source is no sender's).
    const concurrency = mappings
      .filter((m) => !JSON.stringify(m.Properties.EventSourceArn).includes('WatchQueue'))
      .reduce((sum, m) => sum + m.Properties.ScalingConfig.MaximumConcurrency, 0);
    const alarms = Object.keys(delivery.findResources('AWS::CloudWatch::Alarm')).length;
    const stated = (pattern: RegExp, text = GUIDE) => {
      const all = [...text.matchAll(new RegExp(pattern.source, 'g'))].map((m) => Number(m[1]));
      expect(all.length, String(pattern)).toBeGreaterThan(0);
      return new Set(all);
    };
    expect(stated(/senders (?:alone )?may (?:use|take)(?: up to)? (\d+)/)).toEqual(new Set([concurrency]));
    expect(stated(/senders may take up to (\d+) concurrent executions/)).toEqual(new Set([concurrency]));
    const perLane = GUIDE.match(/maximum concurrency (\d+) per e-mail lane and (\d+) per SMS lane/);
    const byQueue = (channel: string) =>
      new Set(
        Object.entries(delivery.findResources('AWS::Lambda::EventSourceMapping'))
          .filter(([id]) => id.startsWith(channel))
          .map(([, m]) => m.Properties.ScalingConfig.MaximumConcurrency),
      );
    expect(perLane).not.toBeNull();
    expect(byQueue('SendEmail')).toEqual(new Set([Number(perLane?.[1])]));
    expect(byQueue('SendSms')).toEqual(new Set([Number(perLane?.[2])]));
    expect(stated(/(\d+) SQS event sources/)).toEqual(new Set([mappings.length]));
    expect(stated(/(\d+) Lambda functions/)).toEqual(
      new Set([Object.keys(delivery.findResources('AWS::Lambda::Function')).length]),
    );
    expect(stated(/\((\d+) queues\)/)).toEqual(
      new Set([Object.keys(defaults.synth.statefulTemplate.findResources('AWS::SQS::Queue')).length]),
    );
    expect(stated(/(\d+) KMS keys/)).toEqual(
      new Set([Object.keys(defaults.synth.statefulTemplate.findResources('AWS::KMS::Key')).length]),
    );
    expect(stated(/(\d+) CloudWatch alarms/)).toEqual(new Set([alarms]));
  });

  it('states the idle cost from the assembly’s counts, as docs/cost.md does', () => {
    const alarms = Object.keys(
      defaults.synth.deliveryTemplate.findResources('AWS::CloudWatch::Alarm'),
    ).length;
    const secrets = Object.keys(
      defaults.synth.statefulTemplate.findResources('AWS::SecretsManager::Secret'),
    ).length;
    // What the reconciler publishes every run (lambdas/handlers/reconciler.ts): one metric per
    // addMetric call, the one inside the loop once per open state.
    const handler = readFileSync(join(ROOT, 'lambdas', 'handlers', 'reconciler.ts'), 'utf8');
    const calls = [...handler.matchAll(/metrics\.addMetric\(\s*([^,]+),/g)].map((m) => m[1] as string);
    const metrics = calls.reduce(
      (n, name) => n + (name.startsWith('openMetric(') ? OPEN_STATES.length : 1),
      0,
    );
    expect(metrics).toBeGreaterThan(OPEN_STATES.length);
    const idle = section('What it costs idle');
    expect(idle).toMatch(new RegExp(`\\b${alarms} alarms\\b`));
    expect(idle).toMatch(new RegExp(`\\b${metrics} metrics\\b`));
    expect(idle).toMatch(new RegExp(`\\b${secrets} secrets\\b`));
    expect(COST).toMatch(new RegExp(`\\(${alarms}\\s+alarms,`));
    expect(COST).toMatch(new RegExp(`${secrets} secrets with the default providers`));
    expect(COST).toMatch(new RegExp(`\\(${metrics} metrics,`));
    expect(COST).toMatch(new RegExp(`\\| ${alarms} × \\$0\\.10`));
    expect(COST).toMatch(new RegExp(`\\| ${metrics} × \\$0\\.30`));
    // The dollars: the guide's are cost.md's.
    const total = /≈ \$([\d.]+)–([\d.]+) \/ month/.exec(COST);
    expect(total).not.toBeNull();
    expect(idle).toContain(`About $${Math.round(Number(total?.[2]))} a month`);
  });

  it('documents every setting (the generated reference), and names no setting that does not exist', () => {
    // The reference is docs/configuration.md, generated from the settings data: every key is in
    // one of its tables' first two columns (variable, deploy key; or a deployment-only key). The guide's own section names keys only in prose and
    // examples; each must exist.
    const reference = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const documented = new Set(
      [...reference.matchAll(/^\| ([^|]+)\|([^|]+)\|/gm)].flatMap((row) =>
        [...`${row[1]}${row[2]}`.matchAll(/`(\w+)`/g)].map((m) => m[1]),
      ),
    );
    for (const key of Object.keys(SETTING_DEFAULTS)) expect(documented.has(key), key).toBe(true);
    // Keys in the settings example, and in `"key": value` spans anywhere but the CI notes (cdk.json's own keys).
    const json = [
      ...section('2. Configure').matchAll(/^\s*"(\w+)":/gm),
      ...GUIDE.replace(section('Synth offline / CI'), '').matchAll(/`"(\w+)": [^`]+`/g),
    ].map((m) => m[1] as string);
    expect(json.length).toBeGreaterThan(5);
    for (const key of json) expect(key in SETTING_DEFAULTS, key).toBe(true);
  });

  it('lists the vocabulary change: every new name exists, every old one is gone (unless the row says it was reused)', () => {
    const current = new Set<string>([
      ...Object.keys(SETTING_DEFAULTS),
      ...SETTING_NAMES,
      ...Object.keys(LOCAL_SETTINGS),
      ...PROVIDERS.flatMap(({ descriptor }) => descriptor.settings.map((s) => s.name)),
    ]);
    const names = (cell: string) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1] as string);
    const rows = [...section('Vocabulary change').matchAll(/^\| (.+?) +\| (.+?) +\| (.+?) +\|$/gm)]
      .slice(2)
      .map(([, old, renamed]) => ({ old: old as string, renamed: renamed as string }));
    expect(rows.length).toBeGreaterThanOrEqual(8);
    for (const { old, renamed } of rows) {
      for (const name of names(renamed)) expect(current.has(name), `${name} (new name)`).toBe(true);
      if (/now means/.test(renamed)) continue;
      for (const name of names(old)) expect(current.has(name), `${name} (old name)`).toBe(false);
    }
  });

  it('configures through deploy/settings.json, never with -c, and updates from the same file', () => {
    for (const block of bashBlocks(GUIDE)) expect(block).not.toMatch(/\s-c\s+\w+=/);
    const updating = section('Updating, destroying');
    expect(updating).toContain('deploy/settings.json');
    expect(updating).toContain('npx cdk deploy --all');
  });
});

describe('docs/deploy.md: what a newcomer needs', () => {
  it('sets up every provider: its selection, its secret’s fields, its webhook', () => {
    const prerequisites = section('1. Prerequisites');
    for (const { descriptor } of PROVIDER_BINDINGS) {
      const selected = descriptor.channels.some((channel) =>
        prerequisites.includes(`"${channel}Provider": "${descriptor.id}"`),
      );
      expect(selected, `${descriptor.id}: how to select it`).toBe(true);
      if (descriptor.inbound === 'webhook')
        expect(GUIDE, `${descriptor.id}: its webhook`).toContain(`/v1/provider-events/${descriptor.id}`);
    }
    // A webhook the provider must be told about is created in the guide, at the URL its output
    // names once the stack exists (the function URL or the API's route, lib/providers/webhook-ingress.ts);
    // the events it subscribes are those the provider's module acts on.
    const resendEvents = new Set(
      [
        ...readFileSync(join(ROOT, 'lambdas', 'providers', 'resend', 'inbound.ts'), 'utf8').matchAll(
          /case '(email\.\w+)'/g,
        ),
      ].map((m) => m[1]),
    );
    const resend = GUIDE.match(
      /-d "\{\\"endpoint\\":\\"\$\(output NoticeLedger-Delivery ResendWebhookUrl\)\\",\\"events\\":\[([^\]]+)\]/,
    );
    expect(resend).not.toBeNull();
    expect(new Set([...(resend?.[1] ?? '').matchAll(/\\"([\w.]+)\\"/g)].map((m) => m[1]))).toEqual(
      resendEvents,
    );
    const sendgridEvents = new Set(
      [
        ...readFileSync(join(ROOT, 'lambdas', 'providers', 'sendgrid', 'inbound.ts'), 'utf8').matchAll(
          /case '(\w+)'/g,
        ),
      ].map((m) => (m[1] === 'spamreport' ? 'spam_report' : m[1])),
    );
    const sendgrid = GUIDE.match(
      /\\"url\\":\\"\$\(output NoticeLedger-Delivery SendgridWebhookUrl\)\\"([^"]*(?:\\"[^"]*)*)\}"/,
    );
    expect(sendgrid).not.toBeNull();
    expect(new Set([...(sendgrid?.[1] ?? '').matchAll(/\\"(\w+)\\":true/g)].map((m) => m[1]))).toEqual(
      sendgridEvents,
    );
  });

  it('covers a custom domain for publicBaseUrl, mapped to the API the ApiId output names', () => {
    const domain = GUIDE.slice(GUIDE.indexOf('### A custom domain (`publicBaseUrl`)'));
    expect(domain).toMatch(/create-api-mapping [^\n]*--api-id "\$API_ID" --stage '\$default'/);
    expect(domain).toContain('"publicBaseUrl": "https://');
    expect(GUIDE).toMatch(/API_ID=\$\(output NoticeLedger-Delivery ApiId\)/);
  });

  it('shows the example notice’s id as intake derives it', () => {
    const body = GUIDE.match(
      /"eventId": "([^"]+)",\s*"eventType": "([^"]+)",\s*"recipient": \{ "id": "([^"]+)"/,
    );
    expect(body).not.toBeNull();
    const [, eventId, eventType, recipientId] = body as RegExpMatchArray;
    const shown = new Set([...GUIDE.matchAll(/\b(ntc_[a-z2-7]{26})\b/g)].map((m) => m[1]));
    expect(shown).toEqual(
      new Set([deriveNoticeId(eventType as string, eventId as string, recipientId as string)]),
    );
  });
});

describe('docs/deploy.md: the commands it quotes exist', () => {
  const registry = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', 'aws-cdk', 'lib', 'cli', 'cli-type-registry.json'), 'utf8'),
  ) as {
    globalOptions: Record<string, CdkOption>;
    commands: Record<
      string,
      { options?: Record<string, CdkOption>; arg?: { name: string }; aliases?: string[] }
    >;
  };
  interface CdkOption {
    readonly type: string;
    readonly alias?: string | string[];
    readonly choices?: string[];
  }

  /** Problems of one `cdk …` invocation, checked as the CDK CLI parses it. */
  function cdkProblems(words: readonly string[]): string[] {
    const [verb, ...rest] = words;
    const entry = Object.entries(registry.commands).find(
      ([name, c]) => name === verb || (c.aliases ?? []).includes(verb as string),
    );
    if (!entry) return [`cdk ${verb}: no such command`];
    const [name, command] = entry;
    const options = { ...registry.globalOptions, ...(command.options ?? {}) };
    const option = (flag: string): CdkOption | undefined =>
      options[flag] ??
      Object.values(options).find((o) => [o.alias ?? []].flat().includes(flag)) ??
      (flag.startsWith('no-') && options[flag.slice(3)]?.type === 'boolean'
        ? options[flag.slice(3)]
        : undefined);
    const problems: string[] = [];
    for (let i = 0; i < rest.length; i++) {
      const word = rest[i] as string;
      if (word.startsWith('-')) {
        const [flag, inline] = word.replace(/^--?/, '').split('=');
        const spec = option(flag as string);
        if (!spec) {
          problems.push(`cdk ${name} ${word}: no such option`);
          continue;
        }
        if (spec.type === 'boolean') continue;
        const value = inline ?? rest[++i];
        if (spec.choices && !spec.choices.includes(value as string))
          problems.push(`cdk ${name} ${word} ${value}: not one of ${spec.choices.join(', ')}`);
      } else if (command.arg?.name === 'STACKS' || command.arg?.name === 'STACK') {
        // The CLI selects by the stack's id (its construct path), never by CloudFormation's name.
        if (!stacks.some((s) => glob(word).test(s.id)))
          problems.push(`cdk ${name} ${word}: no stack has this id`);
      }
    }
    return problems;
  }

  it('runs cdk commands the CLI has, with its options and stack ids', () => {
    const quoted = commandTexts(GUIDE).flatMap((t) => invocations(t, /(?:npx )?cdk/));
    expect(quoted.length).toBeGreaterThan(10);
    expect(quoted.flatMap(cdkProblems)).toEqual([]);
    // The selectors a newcomer copies: one per stack, in the CLI's terms.
    const selected = new Set(quoted.flatMap((w) => w.slice(1).filter((x) => x.startsWith('NoticeLedger'))));
    expect([...selected].sort()).toEqual(stacks.map((s) => s.id).sort());
    // Scripts cannot answer the approval prompt; the guide says how to deploy there.
    expect(quoted.some((w) => w[0] === 'deploy' && w.join(' ').includes('--require-approval never'))).toBe(
      true,
    );
  });

  it('runs npm scripts package.json has', () => {
    const quoted = commandTexts(GUIDE).flatMap((t) => invocations(t, /npm/));
    expect(quoted.length).toBeGreaterThan(5);
    for (const words of quoted) {
      const script = words[0] === 'run' ? words[1] : words[0];
      if (words[0] !== 'run' && ['ci', 'install'].includes(script as string)) continue;
      expect(PACKAGE.scripts, `npm ${words.join(' ')}`).toHaveProperty([script as string]);
    }
  });

  it('runs npx binaries and tsx files that exist', () => {
    const quoted = commandTexts(GUIDE).flatMap((t) => invocations(t, /npx/));
    expect(quoted.length).toBeGreaterThan(5);
    for (const [bin, file] of quoted) {
      expect(
        existsSync(join(ROOT, 'node_modules', '.bin', bin as string)) || bin === Object.keys(PACKAGE.bin)[0],
        `npx ${bin}`,
      ).toBe(true);
      if (bin === 'tsx') expect(existsSync(join(ROOT, file as string)), `npx tsx ${file}`).toBe(true);
    }
  });

  it('runs notice-ledger commands and options the CLI has', () => {
    const commands = new Set(
      [
        ...CLI_USAGE.slice(CLI_USAGE.indexOf('\ncommands\n'), CLI_USAGE.indexOf('\noptions\n')).matchAll(
          /^ {2}([a-z]+)\b/gm,
        ),
      ].map((m) => m[1]),
    );
    const options = new Set([...CLI_USAGE.matchAll(/(--[a-z0-9-]+)/g)].map((m) => m[1]));
    // An option followed by one space and a word takes that word (`--endpoint URL`, `--state S`).
    const valued = new Set([...CLI_USAGE.matchAll(/(--[a-z0-9-]+) (?! )[^\s\]]/g)].map((m) => m[1]));
    const quoted = commandTexts(GUIDE).flatMap((t) => invocations(t, /(?:npx )?notice-ledger(?= [a-z-])/));
    expect(quoted.length).toBeGreaterThanOrEqual(2);
    for (const words of quoted) {
      let command: string | undefined;
      for (let i = 0; i < words.length; i++) {
        const word = words[i] as string;
        if (word.startsWith('--')) {
          expect(options.has(word), `notice-ledger ${word}`).toBe(true);
          if (valued.has(word)) i++;
        } else if (command === undefined) command = word;
      }
      if (command?.endsWith(':')) continue; // `notice-ledger escalation: …` is a message, not a command
      expect(commands.has(command), `notice-ledger ${words.join(' ')}`).toBe(true);
    }
  });
});

describe('docs/deploy.md as one shell session', () => {
  it('sets every variable before it uses it', () => {
    const set = new Set<string>();
    const unset: string[] = [];
    for (const block of bashBlocks(GUIDE)) {
      for (const raw of block.split('\n')) {
        const line = expandable(raw);
        // `read [-opts] NAME…` assigns before anything after it on the line runs.
        for (const m of line.matchAll(/\bread\s+(?:-\w+\s+)*((?:[A-Za-z_]\w*\s*)+)/g))
          for (const name of (m[1] as string).trim().split(/\s+/)) set.add(name);
        for (const m of line.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)(:[-+])?/g)) {
          const [, name, guarded] = m;
          if (!guarded && !set.has(name as string)) unset.push(`${name} in: ${raw.trim()}`);
        }
        for (const m of line.matchAll(/(?:^|[;&|(]|\bexport)\s*([A-Za-z_][A-Za-z0-9_]*)=/g))
          set.add(m[1] as string);
        for (const m of line.matchAll(/\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b/g)) set.add(m[1] as string);
        if (/eval "\$\(aws configure export-credentials --format env\)"/.test(line)) {
          for (const name of EXPORTED_CREDENTIALS) set.add(name);
        }
      }
    }
    expect(unset).toEqual([]);
    // The check itself sees the variables the guide depends on.
    for (const name of [
      'AWS_REGION',
      'ACCOUNT_ID',
      'API',
      'API_ID',
      'LEDGER_TABLE',
      'TWILIO_SECRET_ARN',
      'OPERATOR_POLICY_NAME',
      'RESEND_API_KEY',
      'PROVIDER_EVENTS_FUNCTION',
      'RECEIPT',
    ]) {
      expect(set.has(name), name).toBe(true);
    }
  });

  it('covers IAM Identity Center callers with a customer-managed policy reference, not attach-role-policy', () => {
    const callers = section('4. After the first deploy');
    expect(callers).toContain('attach-customer-managed-policy-reference-to-permission-set');
    expect(callers).toContain('provision-permission-set');
    expect(callers).toMatch(/Name=\$OPERATOR_POLICY_NAME,Path=\//);
  });
});
