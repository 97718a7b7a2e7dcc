#!/usr/bin/env node
// The `notice-ledger` CLI (package.json "bin"; `npx notice-ledger --help` in this repository).
// The sources are TypeScript; this shim runs them through tsx, which `npm ci` installs. Node 20
// has no type stripping of its own, and a build step would leave a bundle that can go stale.
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
