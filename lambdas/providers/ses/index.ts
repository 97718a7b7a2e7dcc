import type { ProviderModule } from '../../ports/provider.port.ts';
import { descriptor } from './descriptor.ts';

/**
 * Facets are imported lazily, and a bundle leaves out the ones its function does not use
 * (the bundler replaces `process.env.NOTICE_LEDGER_OMIT_<FACET>`: lambdas/providers/registry.ts).
 */
export const ses: ProviderModule = {
  descriptor,
  transport: process.env.NOTICE_LEDGER_OMIT_TRANSPORT
    ? undefined
    : () => import('./transport.ts').then((m) => m.facet),
  inbound: process.env.NOTICE_LEDGER_OMIT_INBOUND
    ? undefined
    : () => import('./inbound.ts').then((m) => m.facet),
};
