import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cruise, getAvailableTranspilers, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractBabelConfig from 'dependency-cruiser/config-utl/extract-babel-config';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { describe, expect, it } from 'vitest';

/*
 * The layering rule (docs/architecture.md §"Layering") is dependency-cruiser's configuration:
 * .dependency-cruiser.mjs (every layer's allowed imports, type-only ones included; no circles) and
 * .dependency-cruiser-runtime.mjs (the client's runtime imports). This file runs both over the
 * repository, then over a fixture tree with planted faults to show that the rules can fail.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURE = join(import.meta.dirname, 'fixtures', 'layering');

interface Pass {
  readonly config: string;
  readonly roots: readonly string[];
}

/** Every import of lambdas/, lib/, client/ and local/, types included. */
const LAYERS: Pass = { config: '.dependency-cruiser.mjs', roots: ['lambdas', 'lib', 'client', 'local'] };
/** What the client loads at run time (type-only imports stripped). */
const CLIENT_RUNTIME: Pass = { config: '.dependency-cruiser-runtime.mjs', roots: ['client'] };

interface Outcome {
  readonly modules: ReadonlyMap<string, readonly string[]>;
  /** `rule: from -> to`, and for a circle `rule: a -> b -> … -> a`. */
  readonly violations: readonly string[];
}

/** An npm package by its name (`npm zod`), wherever node_modules is from the cruise's base. */
function modulePath(path: string): string {
  return path.replace(/^(\.\.\/)*node_modules\/((@[^/]+\/)?[^/]+)\/.*$/, 'npm $2');
}

function describeViolation(v: IViolation): string {
  const path = v.cycle ? [v.from, ...v.cycle.map((step) => step.name)] : [v.from, v.to];
  return `${v.rule.name}: ${path.map(modulePath).join(' -> ')}`;
}

async function check(pass: Pass, baseDir: string): Promise<Outcome> {
  const options = await extractDepcruiseOptions(join(ROOT, pass.config));
  const babelFile = options.babelConfig?.fileName;
  const babelConfig = babelFile ? await extractBabelConfig(join(ROOT, babelFile)) : undefined;
  const roots = pass.roots.filter((root) => existsSync(join(baseDir, root)));
  const { output } = await cruise(roots, { ...options, baseDir }, {}, { babelConfig });
  const result = output as ICruiseResult;
  return {
    modules: new Map(result.modules.map((m) => [m.source, m.dependencies.map((d) => d.resolved)])),
    violations: result.summary.violations.map(describeViolation).sort(),
  };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mts|js|mjs)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => join(dir, file));
}

describe('layering: each layer imports only what it may, and nothing imports in a circle', () => {
  it('the repository keeps the rules', async () => {
    expect(getAvailableTranspilers().find((t) => t.name === 'swc')?.available, 'swc parses TypeScript').toBe(
      true,
    );
    const { modules, violations } = await check(LAYERS, ROOT);
    expect(violations).toEqual([]);
    // Guard against a silently empty analysis: every source file was read, type-only imports too.
    for (const file of LAYERS.roots.flatMap(sourceFiles)) expect(modules.has(file), file).toBe(true);
    expect(modules.get('lambdas/handlers/http/notices.ts')).toContain('lambdas/handlers/http/route.ts');
    expect(modules.get('client/client.ts')).toContain('lambdas/edge/api-responses.ts');
  });

  it("the client's runtime imports carry no server code", async () => {
    const { modules, violations } = await check(CLIENT_RUNTIME, ROOT);
    expect(violations).toEqual([]);
    for (const file of sourceFiles('client')) expect(modules.has(file), file).toBe(true);
    // Babel read the client: its code imports are there, its type-only imports are not.
    expect(modules.get('client/client.ts')).toContain('client/sigv4.ts');
    expect(modules.get('client/client.ts')).not.toContain('lambdas/edge/api-responses.ts');
  });
});

describe('layering: the check fails on planted faults (test/architecture/fixtures/layering)', () => {
  it('reports each forbidden import, type-only ones included, and the circle', async () => {
    const { violations } = await check(LAYERS, FIXTURE);
    expect(violations).toEqual(
      [
        // client: a use case's types and zod; its type import from the edge is allowed.
        'not-in-allowed: client/api.ts -> lambdas/use-cases/run.ts',
        'not-in-allowed: client/api.ts -> npm zod',
        // domain: the SDK, Lambda types, zod, an adapter, a use case's types.
        'not-in-allowed: lambdas/domain/planted.ts -> npm @aws-sdk/client-dynamodb',
        'not-in-allowed: lambdas/domain/planted.ts -> npm @types/aws-lambda',
        'not-in-allowed: lambdas/domain/planted.ts -> npm zod',
        'not-in-allowed: lambdas/domain/planted.ts -> lambdas/adapters/store.ts',
        'not-in-allowed: lambdas/domain/planted.ts -> lambdas/use-cases/run.ts',
        // contract: nothing but itself (a type-only import of the domain).
        'not-in-allowed: lambdas/contract/leak.ts -> lambdas/domain/channel.ts',
        // ports: no adapter, not even its type.
        'not-in-allowed: lambdas/ports/queue.port.ts -> lambdas/adapters/store.ts',
        // use cases: no Powertools, no edge; their port is allowed.
        'not-in-allowed: lambdas/use-cases/run.ts -> lambdas/edge/notice.ts',
        'not-in-allowed: lambdas/use-cases/run.ts -> npm @aws-lambda-powertools/logger',
        // a provider descriptor: the contract only.
        'not-in-allowed: lambdas/providers/ses/descriptor.ts -> lambdas/domain/channel.ts',
        // wiring: never the handlers.
        'not-in-allowed: lambdas/wiring/runtime.ts -> lambdas/handlers/observability.ts',
        // lib: exactly the contract's top-level modules and the descriptors of lambdas/.
        'not-in-allowed: lib/stack.ts -> lambdas/adapters/store.ts',
        'not-in-allowed: lib/stack.ts -> lambdas/contract/nested/deep.ts',
        'not-in-allowed: lib/stack.ts -> lambdas/providers/registry.ts',
        'not-in-allowed: lib/stack.ts -> lambdas/providers/ses/transport.ts',
        // a circle closed by a type-only import (circle-b.ts takes a type from circle-a.ts).
        'no-circular: lambdas/domain/circle-a.ts -> lambdas/domain/circle-b.ts -> lambdas/domain/circle-a.ts',
      ].sort(),
    );
  });

  it("reports the client's runtime import of edge code, not its type imports", async () => {
    const { violations } = await check(CLIENT_RUNTIME, FIXTURE);
    expect(violations).toEqual(['client-runtime-no-server-code: client/api.ts -> lambdas/edge/notice.ts']);
  });
});
