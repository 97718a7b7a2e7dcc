/**
 * The layering rule (docs/architecture.md §"Layering"), checked by dependency-cruiser:
 * `npm run layering`, and in `npm test` by test/architecture/layering.test.ts.
 *
 * Every import must be allowed by one line of `allowed`: each layer lists what it may import,
 * so a new folder or a new package is refused until someone says where it belongs. The files are
 * parsed with swc (TypeScript 7 has no JavaScript API for dependency-cruiser's own TypeScript
 * parser), which reports `import type` like any other import: a type-only import is an import
 * here. The client alone may take types from the service; .dependency-cruiser-runtime.mjs checks
 * that its runtime imports carry no server code.
 */

/** A layer of lambdas/ as a path pattern. */
const layer = (...names) => `^lambdas/(${names.join('|')})/`;

/**
 * npm packages by name or scope (`@aws-sdk/`), as resolved (`aws-lambda` is @types/aws-lambda).
 * Not anchored: from the test's fixture tree, node_modules is a few folders up.
 */
const npm = (...names) =>
  `(^|/)node_modules/(${names.map((n) => (n.endsWith('/') ? n : `${n}/`)).join('|')})`;

const NODE = { dependencyTypes: ['core'] };

/** Modules matching `from` may import those matching a pattern of `to` (and with `node`, node's built-ins). */
function may(comment, from, to, { node = false } = {}) {
  const rules = [{ comment, from, to: { path: to } }];
  if (node) rules.push({ comment: `${comment} (node built-ins)`, from, to: NODE });
  return rules;
}

const DESCRIPTOR = '^lambdas/providers/[^/]+/descriptor\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'No import circle in lambdas/, lib/, client/ or local/, type-only imports included: a circle ' +
        'makes load order matter and the two files one unit that reads as two.',
      severity: 'error',
      from: { path: '^(lambdas|lib|client|local)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import the check cannot resolve is an import it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  allowedSeverity: 'error',
  allowed: [
    // Plain data read by the runtime, the CDK app and the local stack alike: nothing but itself.
    ...may('contract: nothing but the contract', { path: layer('contract') }, [layer('contract')]),

    // The rules of the ledger: pure, no AWS, no zod, no Lambda types, no logging.
    ...may('domain: itself and the contract', { path: layer('domain') }, [layer('domain', 'contract')], {
      node: true,
    }),

    // What the use cases need from the world, in the domain's words.
    ...may('ports: the domain and the contract', { path: layer('ports') }, [
      layer('ports', 'domain', 'contract'),
    ]),

    // The algorithms over the ports: no SDK, no zod, no Lambda types, no Powertools.
    ...may(
      'use-cases: ports, domain, contract',
      { path: layer('use-cases') },
      [layer('use-cases', 'ports', 'domain', 'contract')],
      { node: true },
    ),

    // Parsing and shaping of what crosses the wire (HTTP bodies, queue messages, the environment).
    ...may('edge: the use cases it translates for, zod, API Gateway types', { path: layer('edge') }, [
      layer('edge', 'use-cases', 'ports', 'domain', 'contract'),
      npm('zod', '@types/aws-lambda'),
    ]),

    // The ports implemented over AWS (and in memory for tests and the local stack).
    ...may(
      'adapters: the ports they implement, the AWS SDK, the Standard Webhooks signer',
      { path: layer('adapters') },
      [layer('adapters', 'ports', 'domain', 'contract'), npm('@aws-sdk/', 'standardwebhooks')],
      { node: true },
    ),

    // A provider module: its transport, lookups and webhooks; never the wiring that selects it.
    ...may(
      'providers: ports, domain, contract, their SDK clients, zod',
      { path: layer('providers'), pathNot: DESCRIPTOR },
      [layer('providers', 'ports', 'domain', 'contract'), npm('@aws-sdk/', 'zod')],
      { node: true },
    ),
    // A descriptor is plain data the CDK reads too (lib may import it): the contract only.
    ...may('provider descriptors: the contract only', { path: DESCRIPTOR }, [layer('contract')]),

    // The composition root: builds each runtime's clients, adapters and providers once. Not handlers.
    ...may(
      'wiring: everything below the handlers, the template catalog, AWS clients, Powertools',
      { path: layer('wiring') },
      [
        layer('wiring', 'adapters', 'providers', 'use-cases', 'edge', 'ports', 'domain', 'contract'),
        '^templates/',
        npm('@aws-sdk/', '@aws-lambda-powertools/logger', '@aws-lambda-powertools/metrics'),
      ],
      { node: true },
    ),

    // The Lambda entry points: a few lines each over the wiring, the edge and the use cases.
    ...may(
      'handlers: every lambdas/ layer, the committed OpenAPI document, Powertools, Lambda types, zod',
      { path: layer('handlers') },
      [
        layer('handlers', 'wiring', 'edge', 'use-cases', 'providers', 'ports', 'domain', 'contract'),
        '^docs/openapi\\.json$',
        npm('@aws-lambda-powertools/', '@types/aws-lambda', 'zod'),
      ],
      { node: true },
    ),

    // The message templates the runtime ships with: the domain's template type.
    ...may('templates: the domain', { path: '^templates/' }, ['^templates/', layer('domain')]),

    // The CDK app: of lambdas/ only the plain-data modules, the contract and the descriptors.
    ...may(
      'lib: itself, the contract, provider descriptors, npm packages',
      { path: '^lib/' },
      ['^lib/', '^lambdas/contract/[^/]+\\.ts$', DESCRIPTOR, '(^|/)node_modules/'],
      { node: true },
    ),

    // The API's client and CLI: what a business system imports carries no server code. Types of
    // the answers come from the edge (and the domain); the runtime pass refuses anything more.
    ...may(
      'client: itself, types from lambdas/edge and lambdas/domain, its signer',
      { path: '^client/' },
      ['^client/', layer('edge', 'domain'), npm('@aws-sdk/credential-providers', '@smithy/')],
      { node: true },
    ),

    // The local stack composes every layer as the deployed stack does, plus simulators.
    ...may('local: anything', { path: '^local/' }, ['.']),
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: '(^|/)node_modules/' },
  },
};
