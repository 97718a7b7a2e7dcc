import { ConfigError } from '../contract/config-error.ts';
import type { ProviderDescriptor, ProviderFacet } from '../contract/providers.ts';
import type { ProviderContext } from '../ports/provider.port.ts';

/**
 * A provider's settings for one facet, from the environment and (in AWS) its secret: a secret
 * field wins over the plain variable, the variable over the descriptor's default. Every setting
 * the facet requires must end up with a value; what is missing is reported in one error that
 * names each variable (and the secret field that would carry it).
 */
export function resolveProviderSettings(
  descriptor: ProviderDescriptor,
  facet: ProviderFacet,
  env: Readonly<Record<string, string | undefined>>,
  secret?: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const settings: Record<string, string> = {};
  const missing: string[] = [];
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
      if (spec.requiredBy?.includes(facet)) missing.push(spec.name);
      continue;
    }
    if (spec.url && !URL.canParse(value)) malformed.push(`${spec.name} must be a URL`);
    settings[spec.name] = value;
  }
  const problems = [...malformed];
  if (missing.length > 0) {
    const fields = descriptor.settings
      .filter((s) => missing.includes(s.name) && s.secretField !== undefined)
      .map((s) => s.secretField);
    const viaSecret =
      descriptor.secretVariable && fields.length > 0
        ? ` (in AWS: field${fields.length > 1 ? 's' : ''} ${fields.join(', ')} of the secret ${descriptor.secretVariable} names)`
        : '';
    problems.unshift(
      `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required by the ${descriptor.id} ${facet}${viaSecret}`,
    );
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return settings;
}

/** A setting the facet requires; resolveProviderSettings has checked it is there. */
export function setting(context: ProviderContext, name: string): string {
  const value = context.settings[name];
  if (value === undefined) throw new ConfigError(`${name} is required`);
  return value;
}
