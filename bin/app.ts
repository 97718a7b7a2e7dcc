#!/usr/bin/env node
import { createNoticeLedgerApp } from '../lib/app.ts';

// Run by the CDK CLI through `npx tsx bin/app.ts` (cdk.json): TypeScript 7 has no JS API, so
// ts-node cannot load it. Settings come from deploy/settings.json only; the CLI passes the
// account and Region of its credentials (see deploymentEnvironment in lib/app.ts).
createNoticeLedgerApp({ cli: process.env }).app.synth();
