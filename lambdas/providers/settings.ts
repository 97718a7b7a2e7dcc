import { ConfigError } from '../contract/config-error.ts';
import type { ProviderDescriptor, ProviderFacet, ProviderSettingSpec } from '../contract/providers.ts';
import type { ProviderContext } from '../ports/provider.port.ts';

/**
 * A provider's settings for one facet, or why it cannot have them yet:
 * - `resolved`: every setting the facet requires has a value;
 * - `placeholder`: the provider's secret was read, and what the facet lacks is only credentials
 *   whose fields in it are still placeholders — absent, null, or blank, which is what the
 *   deployment writes into a new provider secret (lib/providers/provider-secret.ts) until a
 *   person fills it in. The facet cannot work, and nothing else is wrong with the deployment.
 */
export type ProviderSettings =
  | { readonly kind: 'resolved'; readonly settings: Record<string, string> }
  | { readonly kind: 'placeholder'; readonly detail: string };

/** A secret field that holds no credential yet: what a new provider secret holds (`""`). */
export function isPlaceholder(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * A provider's settings for one facet, from the environment and (in AWS) its secret: a secret
 * field wins over the plain variable, the variable over the descriptor's default. Every setting
 * the facet requires must end up with a value; what is missing is reported in one error that
 * names each variable (and the secret field that would carry it) — unless it is only credentials
 * still placeholders in a secret that was read (`placeholder`).
 */
export function resolveProviderSettings(
  descriptor: ProviderDescriptor,
  facet: ProviderFacet,
  env: Readonly<Record<string, string | undefined>>,
  secret?: Readonly<Record<string, unknown>>,
): ProviderSettings {
  const settings: Record<string, string> = {};
  const missing: ProviderSettingSpec[] = [];
  const malformed: string[] = [];
  for (const spec of descriptor.settings) {
    const fromSecret = spec.secretField !== undefined ? secret?.[spec.secretField] : undefined;
    const fromEnv = env[spec.name]?.trim();
    const value =
      typeof fromSecret === 'string' && fromSecret.trim() !== ''
        ? fromSecret.trim()
        : fromEnv !== undefined && fromEnv !== ''
          ? fromEnv
          : spec.default;
    if (value === undefined) {
      if (spec.requiredBy?.includes(facet)) missing.push(spec);
      continue;
    }
    if (spec.url && !URL.canParse(value)) malformed.push(`${spec.name} must be a URL`);
    settings[spec.name] = value;
  }
  const placeholders =
    secret !== undefined &&
    malformed.length === 0 &&
    missing.length > 0 &&
    missing.every((s) => s.secretField !== undefined && isPlaceholder(secret[s.secretField]));
  if (placeholders) {
    const fields = missing.map((s) => s.secretField).join(', ');
    return {
      kind: 'placeholder',
      detail: `the ${descriptor.id} ${facet} has no credentials yet: field${missing.length > 1 ? 's' : ''} ${fields} of the secret ${descriptor.secretVariable} names ${missing.length > 1 ? 'are' : 'is'} still empty`,
    };
  }
  const problems = [...malformed];
  if (missing.length > 0) {
    const names = missing.map((s) => s.name);
    const fields = missing.flatMap((s) => (s.secretField !== undefined ? [s.secretField] : []));
    const viaSecret =
      descriptor.secretVariable && fields.length > 0
        ? ` (in AWS: field${fields.length > 1 ? 's' : ''} ${fields.join(', ')} of the secret ${descriptor.secretVariable} names)`
        : '';
    problems.unshift(
      `${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} required by the ${descriptor.id} ${facet}${viaSecret}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return { kind: 'resolved', settings };
}

/** A setting the facet requires; resolveProviderSettings has checked it is there. */
export function setting(context: ProviderContext, name: string): string {
  const value = context.settings[name];
  if (value === undefined) throw new ConfigError(`${name} is required`);
  return value;
}
