/**
 * The client's runtime imports (docs/architecture.md §"Layering"): the second pass of the
 * layering check, over client/ only. .dependency-cruiser.mjs lets the client import
 * lambdas/edge and lambdas/domain because it takes the API's answer types from there; here Babel
 * strips exactly the type-only imports (`import type`, as TypeScript's verbatimModuleSyntax does),
 * so what remains is what a business system would load: none of it may be server code.
 */

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'client-runtime-no-server-code',
      comment: 'The client may take types from lambdas/, never code: its users would load the server.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^lambdas/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the check cannot resolve is an import it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: 'acorn',
    babelConfig: { fileName: '.dependency-cruiser-runtime.babel.json' },
    doNotFollow: { path: '(^|/)node_modules/' },
  },
};
