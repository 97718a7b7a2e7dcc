import type { ProviderModule } from '../ports/provider.port.ts';
import { descriptor as eumDescriptor } from './eum/descriptor.ts';
import { eum } from './eum/index.ts';
import { descriptor as infraiDescriptor } from './infrai/descriptor.ts';
import { infrai } from './infrai/index.ts';
import { descriptor as resendDescriptor } from './resend/descriptor.ts';
import { resend } from './resend/index.ts';
import { descriptor as sendgridDescriptor } from './sendgrid/descriptor.ts';
import { sendgrid } from './sendgrid/index.ts';
import { descriptor as sesDescriptor } from './ses/descriptor.ts';
import { ses } from './ses/index.ts';
import { descriptor as twilioDescriptor } from './twilio/descriptor.ts';
import { twilio } from './twilio/index.ts';

export interface RegisteredProvider {
  readonly descriptor: ProviderModule['descriptor'];
  /** `undefined` when this bundle leaves the provider out. */
  readonly load: (() => Promise<ProviderModule>) | undefined;
}

/**
 * Every provider module, one line each. `EMAIL_PROVIDER` / `SMS_PROVIDER` select among them
 * (lambdas/wiring/providers.ts); a row answers to the provider it records.
 *
 * Bundling: each function carries only the providers and facets it uses. The CDK replaces
 * `process.env.NOTICE_LEDGER_OMIT_<ID>` (and `…_OMIT_<FACET>` in the modules' index files) with
 * "1" for what a function must not carry (lib/constructs/bundling.ts), esbuild then drops the
 * module no live code references and everything only it reached. (Static imports of modules
 * without side effects, on purpose: a live dynamic `import()` would turn tree shaking off inside
 * what it reaches — all of the SES client instead of one command.) The descriptors stay in every
 * bundle. test/infra/bundles.test.ts reads the bundles' metafiles to prove it. Run from source (tsx, vitest, the local stack), nothing is
 * replaced and every provider is there.
 */
export const PROVIDERS: readonly RegisteredProvider[] = [
  { descriptor: sesDescriptor, load: process.env.NOTICE_LEDGER_OMIT_SES ? undefined : async () => ses },
  {
    descriptor: twilioDescriptor,
    load: process.env.NOTICE_LEDGER_OMIT_TWILIO ? undefined : async () => twilio,
  },
  {
    descriptor: resendDescriptor,
    load: process.env.NOTICE_LEDGER_OMIT_RESEND ? undefined : async () => resend,
  },
  {
    descriptor: sendgridDescriptor,
    load: process.env.NOTICE_LEDGER_OMIT_SENDGRID ? undefined : async () => sendgrid,
  },
  { descriptor: eumDescriptor, load: process.env.NOTICE_LEDGER_OMIT_EUM ? undefined : async () => eum },
  {
    descriptor: infraiDescriptor,
    load: process.env.NOTICE_LEDGER_OMIT_INFRAI ? undefined : async () => infrai,
  },
];
