import type { ProviderModule } from '../ports/provider.port.ts';
import { descriptor as ses } from './ses/descriptor.ts';
import { descriptor as twilio } from './twilio/descriptor.ts';

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
 * dead `import()` and everything only it reached; test/architecture/bundles.test.ts reads the
 * bundles' metafiles to prove it. Run from source (tsx, vitest, the local stack), nothing is
 * replaced and every provider is there.
 */
export const PROVIDERS: readonly RegisteredProvider[] = [
  {
    descriptor: ses,
    load: process.env.NOTICE_LEDGER_OMIT_SES ? undefined : () => import('./ses/index.ts').then((m) => m.ses),
  },
  {
    descriptor: twilio,
    load: process.env.NOTICE_LEDGER_OMIT_TWILIO
      ? undefined
      : () => import('./twilio/index.ts').then((m) => m.twilio),
  },
];
