#!/usr/bin/env node
// The `notice-ledger` CLI (package.json "bin"; `npx notice-ledger --help` in this repository).
// The sources are TypeScript; this shim runs them through tsx, which `npm ci` installs. Node 20
// has no type stripping of its own, and a build step would leave a bundle that can go stale.
//
// The AWS SDK warns, once per process, that its 2027 releases need Node 22: noise on every signed
// command of an operator's CLI (the README states the Node versions once; vitest.config.ts and
// local/start.ts do the same). Only where the operator has not chosen otherwise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
let register;
try {
  ({ register } = await import('tsx/esm/api'));
} catch {
  process.stderr.write('notice-ledger: tsx is missing; run `npm ci` in the notice-ledger checkout first\n');
  process.exit(2);
}
register();
const { main } = await import('../client/cli/main.ts');
await main();
