import { NO_PROVIDER } from '../../lambdas/contract/settings.ts';
import type { ProviderBinding } from './binding.ts';
import { eumBinding } from './eum/binding.ts';
import { infraiBinding } from './infrai/binding.ts';
import { resendBinding } from './resend/binding.ts';
import { sendgridBinding } from './sendgrid/binding.ts';
import { sesBinding } from './ses/binding.ts';
import { twilioBinding } from './twilio/binding.ts';

/**
 * The CDK binding of every provider module, one line each (lambdas/providers/registry.ts has the
 * runtime modules; test/providers/registries.test.ts keeps the two in step).
 */
export const PROVIDER_BINDINGS: readonly ProviderBinding[] = [
  sesBinding,
  twilioBinding,
  resendBinding,
  sendgridBinding,
  eumBinding,
  infraiBinding,
];

export function bindingOf(id: string): ProviderBinding | undefined {
  return PROVIDER_BINDINGS.find((b) => b.descriptor.id === id);
}

/** Every id the runtime registry may hold: what a bundle leaves out unless it uses it. */
export const REGISTERED_PROVIDER_IDS: readonly string[] = PROVIDER_BINDINGS.map((b) => b.descriptor.id);

/**
 * The providers a deployment carries: each configured channel's (a channel whose provider is
 * `none` carries none) and its fallback's, and the retained ones (rows sent through a provider no longer selected
 * still answer to it). Nothing of any other provider is deployed.
 */
export function deployedBindings(providers: {
  readonly email: string;
  readonly sms: string;
  readonly retained: readonly string[];
  readonly fallbacks?: Readonly<Partial<Record<'email' | 'sms', string>>>;
}): ProviderBinding[] {
  const fallbacks = Object.values(providers.fallbacks ?? {});
  const ids = [...new Set([providers.email, providers.sms, ...fallbacks, ...providers.retained])].filter(
    (id) => id !== NO_PROVIDER,
  );
  return ids.map((id) => {
    const binding = bindingOf(id);
    if (!binding) throw new Error(`no CDK binding for provider ${id}`);
    return binding;
  });
}
