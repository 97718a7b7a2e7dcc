import type { ProviderModule } from '../../ports/provider.port.ts';
import { descriptor } from './descriptor.ts';

/** Facets load lazily; a bundle leaves out those its function does not use (see ../registry.ts). */
export const twilio: ProviderModule = {
  descriptor,
  transport: process.env.NOTICE_LEDGER_OMIT_TRANSPORT
    ? undefined
    : () => import('./transport.ts').then((m) => m.facet),
  lookup: process.env.NOTICE_LEDGER_OMIT_LOOKUP
    ? undefined
    : () => import('./lookup.ts').then((m) => m.facet),
  inbound: process.env.NOTICE_LEDGER_OMIT_INBOUND
    ? undefined
    : () => import('./inbound.ts').then((m) => m.facet),
};
