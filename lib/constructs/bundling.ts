import { join } from 'node:path';
import { type BundlingOptions, LogLevel, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { FUNCTIONS, type FunctionName } from '../../lambdas/contract/functions.ts';
import { PROVIDER_FACETS, type ProviderFacet } from '../../lambdas/contract/providers.ts';
import { BUNDLE_SWITCH_PREFIX } from '../../lambdas/contract/settings.ts';

/** Repository root: the esbuild project root and the home of `lambdas/handlers`. */
export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/**
 * What one function's bundle carries: the provider modules (ids) and facets it uses, and whether
 * it may read secrets (it holds a grant on one). Everything else is left out of the bundle.
 */
export interface BundleSelection {
  readonly providers: readonly string[];
  readonly facets: readonly ProviderFacet[];
  readonly secrets: boolean;
}

/**
 * The one source of the bundle options: NodejsFunction's (`cdkBundling`) and the plain esbuild
 * build the bundle test runs (`esbuildOptions`) are both made from these, so the test reads the
 * metafile of exactly what the stack ships.
 *
 * ESM with the documented `require` shim (CommonJS dependencies inside an ESM bundle need a real
 * `require`), minified, source maps without embedded sources (line mappings are enough for stack
 * traces; embedded sources would ship the code twice), the SDK bundled (the SDK tested is the SDK
 * shipped).
 */
export const BUNDLE = {
  target: 'node24',
  mainFields: ['module', 'main'],
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  minify: true,
  sourcemap: true,
  sourcesContent: false,
} as const;

/** `process.env.NOTICE_LEDGER_OMIT_<WHAT>`: the bundle-time switches of lambdas/providers/registry.ts. */
export function omitSwitch(what: string): string {
  return `process.env.${BUNDLE_SWITCH_PREFIX}${what.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * esbuild `define`s that leave out of the bundle every registered provider, facet and the secrets
 * adapter the function does not use: each switch becomes `"1"`, the guarded reference is dead
 * code, and esbuild drops the module it referenced with everything only it reached (the package
 * declares `"sideEffects": false`, so an import nothing uses costs nothing).
 */
export function bundleDefines(
  selection: BundleSelection,
  registered: readonly string[],
): Record<string, string> {
  const omit = [
    ...registered.filter((id) => !selection.providers.includes(id)),
    ...PROVIDER_FACETS.filter((facet) => !selection.facets.includes(facet)),
    ...(selection.secrets ? [] : ['secrets']),
  ];
  return Object.fromEntries(omit.map((what) => [omitSwitch(what), '"1"']));
}

export function handlerEntry(fn: FunctionName): string {
  return join(REPO_ROOT, 'lambdas', 'handlers', FUNCTIONS[fn].handler);
}

/** NodejsFunction's bundling for one function. */
export function cdkBundling(selection: BundleSelection, registered: readonly string[]): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    banner: BUNDLE.banner,
    minify: BUNDLE.minify,
    sourceMap: BUNDLE.sourcemap,
    sourcesContent: BUNDLE.sourcesContent,
    define: bundleDefines(selection, registered),
    bundleAwsSDK: true,
    externalModules: [],
    forceDockerBundling: false,
    logLevel: LogLevel.ERROR,
  };
}

/** The same bundle as a plain esbuild build (the bundle test; writes nothing, returns a metafile). */
export function esbuildOptions(
  fn: FunctionName,
  selection: BundleSelection,
  registered: readonly string[],
): BuildOptions & { metafile: true; write: false } {
  return {
    entryPoints: [handlerEntry(fn)],
    absWorkingDir: REPO_ROOT,
    outfile: join(REPO_ROOT, '.local', 'bundles', fn, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    banner: { js: BUNDLE.banner },
    minify: BUNDLE.minify,
    sourcemap: BUNDLE.sourcemap,
    sourcesContent: BUNDLE.sourcesContent,
    define: bundleDefines(selection, registered),
    metafile: true,
    write: false,
    logLevel: 'silent',
  };
}
