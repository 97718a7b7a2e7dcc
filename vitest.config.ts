import { configDefaults, defineConfig } from 'vitest/config';
import { ALL_TESTS, FAST_TESTS } from './test/tiers.ts';

// Two tiers (test/tiers.ts): `npm run test:fast` runs the fast project, `npm test` both.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    allowOnly: false,
    // The SDK warns once per process that its 2027 releases need Node 22; the deployed
    // functions run Node 24 (lib/constructs/notice-function.ts), and one warning per test
    // worker and child stack only buries real output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: [...FAST_TESTS],
          // One module graph for the whole tier: importing the runtime once instead of once per
          // file is most of what makes it fast. No global setup: nothing starts DynamoDB Local.
          isolate: false,
          provide: { testTier: 'fast' },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [ALL_TESTS],
          exclude: [...configDefaults.exclude, ...FAST_TESTS],
          // DynamoDB Local is one JVM shared by every integration test file; starting it
          // per file would cost ~3 s each on a 2-core machine.
          globalSetup: ['test/helpers/global-setup.ts'],
          provide: { testTier: 'integration' },
        },
      },
    ],
  },
});
