import type { z } from 'zod';
import type { ProviderDescriptor } from '../../lambdas/contract/providers.ts';
import { type DeployKeyOf, deployKeyOf } from '../../lambdas/contract/settings.ts';

/**
 * A provider's deployment settings (deploy/settings.json keys), in the one vocabulary of
 * lambdas/contract/settings.ts: a key that sets one of the provider's variables is that
 * variable's name in camelCase (`<ID>_FROM` ↔ `<id>From`, `<ID>_SECRET_ARN` ↔ `<id>SecretArn`),
 * derived here and never written down twice. Keys that set no variable (the
 * IAM scope of a sender identity, a TLS policy, an alarm) are declared as deployment-only.
 */
export interface BindingSetting {
  /** Default; absent: the descriptor's default of the variable, else '' (unset). */
  readonly default?: unknown;
  readonly schema: z.ZodType;
  /** What a deployment adds to the descriptor's meaning (a created resource, a fallback). */
  readonly note?: string;
}

export interface DeploymentOnlySetting {
  readonly default: unknown;
  readonly schema: z.ZodType;
  readonly description: string;
}

export interface BindingSettings {
  /** The descriptor's variables (or its secret variable) a deployment chooses, by variable name. */
  readonly variables: Readonly<Partial<Record<string, BindingSetting>>>;
  /** Keys that set no variable, by key. */
  readonly deploymentOnly: Readonly<Record<string, DeploymentOnlySetting>>;
  /** Every key's default (the variables' under their derived keys). */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** One schema per key (merged into the settings schema of lib/config.ts). */
  readonly shape: Readonly<Record<string, z.ZodType>>;
}

/** A descriptor's variable names: its settings and its secret variable. */
export type VariableOf<D extends ProviderDescriptor> =
  | D['settings'][number]['name']
  | (D['secretVariable'] extends string ? D['secretVariable'] : never);

/** The parsed settings of a binding, by key (`BoundSettings<typeof settings>`). */
export type BoundSettings<S> = S extends {
  readonly variables: infer V;
  readonly deploymentOnly: infer O;
}
  ? {
      readonly [K in keyof V & string as DeployKeyOf<K>]: V[K] extends { schema: infer T extends z.ZodType }
        ? z.output<T>
        : never;
    } & {
      readonly [K in keyof O & string]: O[K] extends { schema: infer T extends z.ZodType }
        ? z.output<T>
        : never;
    }
  : never;

/**
 * Declares a binding's deployment settings over its descriptor's variables. A variable the
 * descriptor does not declare is a programming error, refused when the binding module loads.
 */
export function providerSettings<
  const D extends ProviderDescriptor,
  const V extends { readonly [N in VariableOf<D>]?: BindingSetting },
  const O extends Readonly<Record<string, DeploymentOnlySetting>> = Record<never, DeploymentOnlySetting>,
>(
  descriptor: D,
  variables: V,
  deploymentOnly?: O,
): Omit<BindingSettings, 'variables' | 'deploymentOnly'> & {
  readonly variables: V;
  readonly deploymentOnly: O;
} {
  const declared = new Map(descriptor.settings.map((s) => [s.name, s.default]));
  const only = (deploymentOnly ?? {}) as O;
  const entries = Object.entries(variables as Readonly<Record<string, BindingSetting>>).map(
    ([name, setting]) => {
      if (!declared.has(name) && name !== descriptor.secretVariable) {
        throw new Error(`${descriptor.id} binding: ${name} is not a variable of its descriptor`);
      }
      return { key: deployKeyOf(name), setting, fallback: declared.get(name) ?? '' };
    },
  );
  for (const key of Object.keys(only)) {
    if (entries.some((e) => e.key === key))
      throw new Error(`${descriptor.id} binding: ${key} is declared twice`);
  }
  return {
    variables,
    deploymentOnly: only,
    defaults: {
      ...Object.fromEntries(entries.map(({ key, setting, fallback }) => [key, setting.default ?? fallback])),
      ...Object.fromEntries(Object.entries(only).map(([key, setting]) => [key, setting.default])),
    },
    shape: {
      ...Object.fromEntries(entries.map(({ key, setting }) => [key, setting.schema])),
      ...Object.fromEntries(Object.entries(only).map(([key, setting]) => [key, setting.schema])),
    },
  };
}
