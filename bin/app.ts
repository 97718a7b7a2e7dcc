#!/usr/bin/env node
import { ConfigError } from '../lambdas/contract/config-error.ts';
import { createNoticeLedgerApp } from '../lib/app.ts';

// Run by the CDK CLI through `npx tsx bin/app.ts` (cdk.json): TypeScript 7 has no JS API, so
// ts-node cannot load it. Settings come from deploy/settings.json only; the CLI passes the
// account and Region of its credentials (see deploymentEnvironment in lib/app.ts).
try {
  createNoticeLedgerApp({ cli: process.env }).app.synth();
} catch (error) {
  // A settings mistake is the operator's to fix: say which setting, without a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(`notice-ledger: ${error.message}`);
  process.exit(1);
}
