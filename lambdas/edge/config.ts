import { z } from 'zod';
import { ConfigError } from '../contract/config-error.ts';
import { parseIsoDuration } from '../contract/duration.ts';
import { retiredNamesMessage } from '../contract/retired-settings.ts';
import {
  type DurationSetting,
  INVARIANTS,
  type NumberSetting,
  SETTINGS,
  type Setting,
  type SettingName,
} from '../contract/settings.ts';

const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

function numberSchema(setting: NumberSetting) {
  const base = z.coerce.number();
  const ranged = (setting.kind === 'integer' ? base.int() : base).min(setting.min).max(setting.max);
  // An empty value means "unset", like an absent one.
  const unset = (v: unknown) => (v === '' ? undefined : v);
  return setting.default === undefined
    ? z.preprocess(unset, ranged.optional())
    : z.preprocess(unset, ranged.default(setting.default));
}

/** An ISO 8601 duration → milliseconds, at least `minMs`. */
function durationSchema(setting: DurationSetting) {
  return optionalText.transform((text, ctx) => {
    const ms = parseIsoDuration(text ?? setting.default);
    if (ms === undefined || ms < setting.minMs) {
      ctx.addIssue({
        code: 'custom',
        message: `must be an ISO 8601 duration of days to seconds (e.g. ${setting.default}), at least ${setting.minMs / 1000} s`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

function schemaOf(setting: Setting) {
  switch (setting.kind) {
    case 'integer':
    case 'number':
      return numberSchema(setting);
    case 'enum':
      return z.enum(setting.values as [string, ...string[]]).default(setting.default);
    case 'url':
      return optionalText.pipe(z.url().optional());
    case 'list':
      return optionalText.transform((v) =>
        (v ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    case 'duration':
      return durationSchema(setting);
    case 'text':
      return setting.default === undefined
        ? optionalText
        : optionalText.transform((v) => v ?? (setting.default as string));
  }
}

type SchemaFor<S> = S extends { kind: 'duration' }
  ? number
  : S extends { kind: 'integer' | 'number'; default: number }
    ? number
    : S extends { kind: 'integer' | 'number' }
      ? number | undefined
      : S extends { kind: 'enum'; values: readonly (infer V)[] }
        ? V
        : S extends { kind: 'list' }
          ? string[]
          : S extends { default: string }
            ? string
            : string | undefined;

/** The runtime configuration: every core setting of lambdas/contract/settings.ts, parsed. */
export type Config = { readonly [K in SettingName]: SchemaFor<(typeof SETTINGS)[K]> };

/** Derived from the plain settings table, so names, defaults and ranges are written once. */
export const ConfigSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([name, setting]) => [name, schemaOf(setting)])),
);

/**
 * Reads the core configuration once per process; every problem is reported at once, each
 * naming its variable. Provider settings are read by the provider modules themselves.
 */
export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  const retired = retiredNamesMessage(
    Object.keys(env).filter((name) => env[name] !== undefined && env[name] !== ''),
  );
  if (retired) throw new ConfigError(`invalid configuration: ${retired}`);
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${fields}`);
  }
  const config = parsed.data as unknown as Config;
  const broken = INVARIANTS.filter((rule) => !rule.holds(config));
  if (broken.length > 0) {
    throw new ConfigError(`invalid configuration: ${broken.map((rule) => rule.message(config)).join('; ')}`);
  }
  return config;
}
