import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local is one JVM shared by every integration test file; starting it
    // per file would cost ~3 s each on a 2-core machine.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    allowOnly: false,
    // The SDK warns once per process that its 2027 releases need Node 22; the deployed
    // functions run Node 24 (lib/constructs/notice-function.ts), and one warning per test
    // worker and child stack only buries real output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
