import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../lambdas/contract/settings.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { SETTING_DEFAULTS } from '../../lib/config.ts';
import { LOCAL_SETTINGS } from '../../local/settings.ts';
import { ROOT, type Synthesized, synthesize } from './synth.ts';

/**
 * docs/deploy.md is followed command by command by someone deploying for the first time: it is
 * checked against the synthesized stacks (names, outputs, index) and as a shell script (every
 * variable set before it is used).
 */
const GUIDE = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');

let synth: Synthesized;
/** stack name → names of the outputs declared in lib/ (not CDK's cross-stack `PublishOutput…`). */
let outputs: Map<string, Set<string>>;

beforeAll(() => {
  synth = synthesize({ bundle: false });
  outputs = new Map(
    [
      [synth.stateful.stackName, synth.statefulTemplate],
      [synth.delivery.stackName, synth.deliveryTemplate],
    ].map(([name, template]) => [
      name as string,
      new Set(
        Object.keys((template as Synthesized['statefulTemplate']).toJSON().Outputs ?? {}).filter(
          (o) => !o.startsWith('PublishOutput'),
        ),
      ),
    ]),
  );
});

/** The guide's ```bash blocks, in order, with `\` continuations joined. */
function bashBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^ *```bash\n([\s\S]*?)^ *```/gm)].map((m) =>
    (m[1] as string).replace(/\\\n\s*/g, ' '),
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
    if (c === '"') quote = quote === '"' ? undefined : '"';
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

describe('docs/deploy.md against the synthesized stacks', () => {
  it('names only stacks that exist', () => {
    const named = new Set([...GUIDE.matchAll(/\bNoticeLedger-[A-Za-z]+/g)].map((m) => m[0]));
    expect([...named].sort()).toEqual([...outputs.keys()].sort());
  });

  it('reads every output from the stack that has it', () => {
    const reads = [...GUIDE.matchAll(/\boutput ([A-Za-z][\w-]*) (\w+)/g)];
    expect(reads.length).toBeGreaterThanOrEqual(6);
    for (const [, stack, name] of reads) {
      expect(outputs.get(stack as string)?.has(name as string), `${name} of ${stack}`).toBe(true);
    }
    // And nothing reads outputs any other way (a --stack-name + OutputKey pair would escape the check).
    expect(GUIDE).not.toMatch(/OutputKey=='[A-Za-z]/);
  });

  it('lists exactly the stacks’ outputs in its outputs table, each under its stack', () => {
    const rows = [...section('What gets deployed').matchAll(/^\| `(NoticeLedger-[A-Za-z]+)` +\| `(\w+)`/gm)];
    const listed = rows.map(([, stack, name]) => `${stack} ${name}`).sort();
    const actual = [...outputs].flatMap(([stack, names]) => [...names].map((n) => `${stack} ${n}`)).sort();
    expect(listed).toEqual(actual);
  });

  it('describes the open-intent index as deployed (keys and projection)', () => {
    const described = GUIDE.match(
      /`([\w-]+)` \(keys `(\w+)`\/`(\w+)`; projection (\w+) ((?:`\w+`(?:, )?)+)\)/,
    );
    expect(described).not.toBeNull();
    const [, name, hash, range, type, attributes] = described as RegExpMatchArray;
    const table = Object.values(synth.statefulTemplate.findResources('AWS::DynamoDB::Table'))[0];
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
    const json = [...section('2. Configure').matchAll(/^\s*"(\w+)":/gm)].map((m) => m[1] as string);
    expect(json.length).toBeGreaterThan(0);
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

describe('docs/deploy.md as one shell session', () => {
  it('sets every variable before it uses it', () => {
    const set = new Set<string>();
    const unset: string[] = [];
    for (const block of bashBlocks(GUIDE)) {
      for (const raw of block.split('\n')) {
        const line = expandable(raw);
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
    for (const name of ['AWS_REGION', 'ACCOUNT_ID', 'API', 'TWILIO_SECRET_ARN', 'OPERATOR_POLICY_NAME']) {
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
