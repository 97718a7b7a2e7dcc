import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  try {
    statSync(abs);
  } catch {
    return [];
  }
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(dir, file));
}

/**
 * Resolves imports exactly as the Lambda bundles will (esbuild), one level deep per file,
 * so a re-export or an `import type` cannot hide a dependency from the check.
 */
async function importGraph(files: string[]): Promise<Map<string, string[]>> {
  const result = await build({
    entryPoints: files.map((file) => join(ROOT, file)),
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: join(ROOT, '.local', 'layering-check'),
    logLevel: 'silent',
  });
  const meta: Metafile = result.metafile;
  const graph = new Map<string, string[]>();
  for (const [input, info] of Object.entries(meta.inputs)) {
    graph.set(
      relative(ROOT, join(ROOT, input)),
      info.imports.map((imp) => (imp.external ? imp.path : relative(ROOT, join(ROOT, imp.path)))),
    );
  }
  return graph;
}

/** esbuild drops `import type`; scan the text too so type-only imports are held to the same rule. */
async function typeImports(file: string): Promise<string[]> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s+type\b[^;]*?from\s+['"]([^'"]+)['"]/gms)].map(
    (m) => m[1] as string,
  );
}

interface Rule {
  readonly layer: string;
  readonly forbidden: readonly RegExp[];
  /** Type-only imports of these are allowed (they vanish from the bundle). */
  readonly typesFrom?: readonly RegExp[];
}

const RULES: readonly Rule[] = [
  {
    layer: 'lambdas/domain',
    forbidden: [
      /^@aws-sdk\//,
      /^aws-lambda$/,
      /^@types\/aws-lambda/,
      /^zod/,
      /^@aws-lambda-powertools\//,
      /^aws-cdk-lib/,
      /lambdas\/(adapters|handlers|ports|use-cases|edge)\//,
      /^lib\//,
    ],
  },
  {
    layer: 'lambdas/ports',
    forbidden: [/^@aws-sdk\//, /^aws-lambda$/, /^zod/, /lambdas\/(adapters|handlers|use-cases|edge)\//],
  },
  {
    layer: 'lambdas/use-cases',
    forbidden: [
      /^@aws-sdk\//,
      /^aws-lambda$/,
      /^zod/,
      /^@aws-lambda-powertools\//,
      /lambdas\/(adapters|handlers|edge)\//,
    ],
  },
  {
    // The CDK may read exactly the plain-data modules: the contract and the providers' descriptors.
    layer: 'lib',
    forbidden: [/lambdas\/(?!contract\/[^/]+\.ts$|providers\/[^/]+\/descriptor\.ts$)/],
  },
  {
    // Plain data, read by runtime, CDK and local stack alike: nothing but each other.
    layer: 'lambdas/contract',
    forbidden: [/^(?!lambdas\/contract\/)/],
  },
  {
    layer: 'lambdas/providers',
    forbidden: [/lambdas\/(handlers|use-cases|wiring)\//, /^@aws-lambda-powertools\//],
  },
  {
    // The API's client and CLI: what a business system imports carries no server code.
    layer: 'client',
    forbidden: [
      /lambdas\//,
      /^zod/,
      /^aws-lambda$/,
      /^@aws-sdk\/client-/,
      /^@aws-lambda-powertools\//,
      /^aws-cdk-lib/,
    ],
    typesFrom: [/^lambdas\/(edge|domain)\//],
  },
];

/** Provider descriptors are plain data too (lib reads them): they may import only the contract. */
const DESCRIPTOR_RULE: Rule = { layer: 'lambdas/providers', forbidden: [/^(?!lambdas\/contract\/)/] };

function violations(rule: Rule, graph: Map<string, string[]>, typeOnly: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith(`${rule.layer}/`)) continue;
    const resolve = (imp: string) =>
      imp.startsWith('.') ? relative(ROOT, join(ROOT, file, '..', imp)) : imp;
    const types = (typeOnly.get(file) ?? [])
      .map(resolve)
      .filter((target) => !(rule.typesFrom ?? []).some((pattern) => pattern.test(target)));
    for (const target of [...imports.map(resolve), ...types]) {
      if (rule.forbidden.some((pattern) => pattern.test(target))) found.push(`${file} -> ${target}`);
    }
  }
  return found;
}

describe('layering (lambdas/domain is pure; ports and use cases know no AWS; lib and client know no runtime code)', () => {
  for (const rule of RULES) {
    it(`${rule.layer} imports nothing it must not`, async () => {
      const files = sourceFiles(rule.layer);
      if (files.length === 0) return;
      const graph = await importGraph(files);
      // Guard against a silently empty analysis: every layer file must have been resolved.
      for (const file of files) expect(graph.has(file), file).toBe(true);
      const typeOnly = new Map(await Promise.all(files.map(async (f) => [f, await typeImports(f)] as const)));
      expect(violations(rule, graph, typeOnly)).toEqual([]);
    });
  }

  it('provider descriptors import nothing but the contract (plain data for the CDK)', async () => {
    const files = sourceFiles('lambdas/providers').filter((f) => f.endsWith('/descriptor.ts'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    const graph = await importGraph(files);
    const only = new Map([...graph].filter(([file]) => files.includes(file)));
    const typeOnly = new Map(await Promise.all(files.map(async (f) => [f, await typeImports(f)] as const)));
    expect(violations(DESCRIPTOR_RULE, only, typeOnly)).toEqual([]);
  });

  it('the lib rule lets through exactly the contract and the descriptors', () => {
    const lib = RULES.find((r) => r.layer === 'lib') as Rule;
    const graph = new Map([
      [
        'lib/x.ts',
        [
          'lambdas/contract/routes.ts',
          'lambdas/providers/ses/descriptor.ts',
          'lambdas/providers/ses/transport.ts',
          'lambdas/providers/registry.ts',
          'lambdas/adapters/dynamodb/ledger-table.ts',
          'lambdas/contract/nested/x.ts',
        ],
      ],
    ]);
    expect(violations(lib, graph, new Map())).toEqual([
      'lib/x.ts -> lambdas/providers/ses/transport.ts',
      'lib/x.ts -> lambdas/providers/registry.ts',
      'lib/x.ts -> lambdas/adapters/dynamodb/ledger-table.ts',
      'lib/x.ts -> lambdas/contract/nested/x.ts',
    ]);
  });

  it('client: types from the service are allowed, its code is not', () => {
    const client = RULES.find((r) => r.layer === 'client') as Rule;
    const graph = new Map([['client/x.ts', ['lambdas/edge/timeline.ts', '@smithy/signature-v4']]]);
    const typeOnly = new Map([['client/x.ts', ['../lambdas/edge/timeline.ts', '../lambdas/use-cases/y.ts']]]);
    expect(violations(client, graph, typeOnly)).toEqual([
      'client/x.ts -> lambdas/edge/timeline.ts',
      'client/x.ts -> lambdas/use-cases/y.ts',
    ]);
  });

  it('the check itself catches a forbidden import', () => {
    const graph = new Map([
      ['lambdas/domain/x.ts', ['@aws-sdk/client-dynamodb', 'zod', 'lambdas/adapters/y.ts']],
    ]);
    expect(violations(RULES[0] as Rule, graph, new Map())).toHaveLength(3);
    const typeOnly = new Map([['lambdas/domain/x.ts', ['aws-lambda', '../adapters/dynamodb/z.ts']]]);
    expect(violations(RULES[0] as Rule, new Map([['lambdas/domain/x.ts', []]]), typeOnly)).toEqual([
      'lambdas/domain/x.ts -> aws-lambda',
      'lambdas/domain/x.ts -> lambdas/adapters/dynamodb/z.ts',
    ]);
  });
});
