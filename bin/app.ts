#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { buildNoticeLedger } from '../lib/app.ts';

// Run by the CDK CLI through `npx tsx bin/app.ts` (cdk.json): TypeScript 7 has no JS API, so
// ts-node cannot load it. Configuration comes from context only (cdk.json, `-c key=value`).
const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
buildNoticeLedger(app, account && region ? { env: { account, region } } : {});
app.synth();
