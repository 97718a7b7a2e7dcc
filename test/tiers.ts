/**
 * The two test tiers, one vitest project each (vitest.config.ts); every test file is in exactly one.
 *
 * - fast (`npm run test:fast`): the inner loop. Domain, use cases on the memory adapters, the
 *   architecture rules, the handlers, the edge and the client, in the test process: no DynamoDB
 *   Local (no JVM), no local SQS, no child stack, no browser, no CDK synthesis or bundling (10–30 s
 *   alone on a loaded 2-core machine). Under a minute there; its files share one module graph
 *   (`isolate: false`), so a test must leave no global state behind.
 * - integration (the rest of `npm test`, which CI runs): every file that starts a service, the CDK
 *   app (test/infra), the provider adapters against their simulators, the end-to-end stacks.
 *
 * A test that needs a service is refused in the fast tier (test/helpers/tier.ts); split such a
 * file so that its in-memory half stays here (e.g. test/adapters/memory-ledger-store.test.ts).
 */
export const FAST_TESTS = [
  'test/domain/**/*.test.ts',
  'test/use-cases/**/*.test.ts',
  'test/architecture/**/*.test.ts',
  'test/handlers/**/*.test.ts',
  'test/edge/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/adapters/memory-*.test.ts',
  'test/docs/**/*.test.ts',
] as const;

export const ALL_TESTS = 'test/**/*.test.ts';

export type TestTier = 'fast' | 'integration';
