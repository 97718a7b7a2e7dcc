import { eumLocal } from './eum.ts';
import { infraiLocal } from './infrai.ts';
import type { LocalProvider } from './local-provider.ts';
import { resendLocal } from './resend.ts';
import { sendgridLocal } from './sendgrid.ts';
import { sesLocal } from './ses.ts';
import { twilioLocal } from './twilio.ts';

/**
 * The local part of each provider module, one line each: the stack starts the simulators of the
 * selected providers only (lambdas/providers/registry.ts has the modules themselves).
 */
export const LOCAL_PROVIDERS: readonly LocalProvider[] = [
  sesLocal,
  twilioLocal,
  resendLocal,
  sendgridLocal,
  eumLocal,
  infraiLocal,
];

export function localProvider(id: string): LocalProvider | undefined {
  return LOCAL_PROVIDERS.find((p) => p.id === id);
}
