import type { ProviderModule } from '../../ports/provider.port.ts';
import { descriptor } from './descriptor.ts';
import { facet as inbound } from './inbound.ts';
import { facet as lookup } from './lookup.ts';
import { facet as transport } from './transport.ts';

/** A bundle leaves out the facets its function does not use (see ../registry.ts). */
export const resend: ProviderModule = {
  descriptor,
  transport: process.env.NOTICE_LEDGER_OMIT_TRANSPORT ? undefined : async () => transport,
  lookup: process.env.NOTICE_LEDGER_OMIT_LOOKUP ? undefined : async () => lookup,
  inbound: process.env.NOTICE_LEDGER_OMIT_INBOUND ? undefined : async () => inbound,
};
