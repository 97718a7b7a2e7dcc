import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as secretsManager from '../adapters/secrets/secrets-manager.ts';
import { ConfigError } from '../contract/config-error.ts';
import { FALLBACK_PROVIDER_SETTINGS } from '../contract/failover-settings.ts';
import { Metric } from '../contract/metrics.ts';
import type { ProviderFacet } from '../contract/providers.ts';
import { CHANNEL_SETTINGS, NO_PROVIDER } from '../contract/settings.ts';
import { CHANNELS, type Channel } from '../domain/channel.ts';
import type { Config } from '../edge/config.ts';
import type { Clock } from '../ports/clock.port.ts';
import type {
  InboundFacet,
  LookupFacet,
  ProviderContext,
  ProviderModule,
  StatusFacet,
  TransportFacet,
} from '../ports/provider.port.ts';
import { PROVIDERS, type RegisteredProvider } from '../providers/registry.ts';
import { resolveProviderSettings } from '../providers/settings.ts';
import { publicBaseUrlOf } from './core.ts';
import { logger, metrics } from './observability.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** Replaced by "1" in bundles whose function holds no secret grant (lib/constructs/bundling.ts). */
const secretsAdapter = process.env.NOTICE_LEDGER_OMIT_SECRETS ? undefined : async () => secretsManager;

function registered(id: string): RegisteredProvider | undefined {
  return PROVIDERS.find((p) => p.descriptor.id === id);
}

function ids(): string {
  return PROVIDERS.map((p) => p.descriptor.id).join(', ');
}

/**
 * The provider of a channel: `<CHANNEL>_PROVIDER`, or the module that declares itself the
 * channel's default; `undefined` when it is `none` (the channel is not configured). An unknown id,
 * or one that does not serve the channel, stops the start with a message naming the variable.
 */
export function selectedProvider(channel: Channel, env: Env): RegisteredProvider | undefined {
  const variable = CHANNEL_SETTINGS[channel].provider;
  const id = env[variable]?.trim();
  if (id === NO_PROVIDER) return undefined;
  if (!id) {
    const fallback = PROVIDERS.find((p) =>
      (p.descriptor.defaultFor as readonly string[] | undefined)?.includes(channel),
    );
    if (!fallback) throw new ConfigError(`${variable} is required (no provider is the ${channel} default)`);
    return fallback;
  }
  const provider = registered(id);
  if (!provider) throw new ConfigError(`${variable}: no provider "${id}" (registered: ${ids()})`);
  if (!(provider.descriptor.channels as readonly string[]).includes(channel)) {
    throw new ConfigError(`${variable}: provider "${id}" does not send ${channel}`);
  }
  return provider;
}

/**
 * The fallback provider of a channel (`<CHANNEL>_FALLBACK_PROVIDER`; docs/architecture.md
 * §"Provider failover"), `undefined` when unset. It must be registered, serve the channel and
 * differ from the primary; a channel without a primary (`none`) cannot have one. Anything else
 * stops the start with a message naming the variable.
 */
export function selectedFallback(channel: Channel, env: Env): RegisteredProvider | undefined {
  const variable = FALLBACK_PROVIDER_SETTINGS[channel];
  const id = env[variable]?.trim();
  if (!id) return undefined;
  const primary = selectedProvider(channel, env);
  if (!primary) {
    throw new ConfigError(
      `${variable}: ${CHANNEL_SETTINGS[channel].provider} is ${NO_PROVIDER}, so there is nothing to fail over from`,
    );
  }
  const provider = registered(id);
  if (!provider) throw new ConfigError(`${variable}: no provider "${id}" (registered: ${ids()})`);
  if (!(provider.descriptor.channels as readonly string[]).includes(channel)) {
    throw new ConfigError(`${variable}: provider "${id}" does not send ${channel}`);
  }
  if (provider === primary) {
    throw new ConfigError(
      `${variable}: provider "${id}" is already the ${channel} provider (${CHANNEL_SETTINGS[channel].provider}); a fallback must be another one`,
    );
  }
  return provider;
}

/** The providers selected for any configured channel, primaries and fallbacks, each once. */
export function selectedProviders(env: Env): RegisteredProvider[] {
  return unique(
    CHANNELS.flatMap((channel) => [selectedProvider(channel, env), selectedFallback(channel, env)]).flatMap(
      (p) => p ?? [],
    ),
  );
}

/**
 * The providers whose lookups and inbound events this process must serve: the selected ones,
 * the retained ones (RETAINED_PROVIDERS: no longer selected, but rows sent through them may
 * still be open), and any other registered provider whose credentials are all present (the
 * local stack's way of keeping a provider it started with answerable after a switch). A row
 * answers to the provider it records; docs/architecture.md §"Switching providers".
 */
export function answeringProviders(config: Config, env: Env): RegisteredProvider[] {
  const retained = config.RETAINED_PROVIDERS.map((id) => {
    const provider = registered(id);
    if (!provider) throw new ConfigError(`RETAINED_PROVIDERS: no provider "${id}" (registered: ${ids()})`);
    return provider;
  });
  const configured = PROVIDERS.filter((p) => {
    const credentials = p.descriptor.settings.filter(
      (s) => 'secretField' in s && s.secretField !== undefined,
    );
    const secretVariable = p.descriptor.secretVariable;
    if (secretVariable && env[secretVariable]?.trim()) return true;
    return credentials.length > 0 && credentials.every((s) => env[s.name]?.trim());
  });
  return unique([...selectedProviders(env), ...retained, ...configured]).filter((p) => p.load !== undefined);
}

function unique(providers: readonly RegisteredProvider[]): RegisteredProvider[] {
  return [...new Set(providers)];
}

export interface FacetBase {
  readonly config: Config;
  readonly env: Env;
  readonly clock: Clock;
  /** The function's `adopt` (./aws-clients.ts) for the clients a module builds; absent: as built (tests). */
  readonly awsClient?: ProviderContext['awsClient'];
}

const asBuilt: ProviderContext['awsClient'] = (client) => client;

type FacetOf<F extends ProviderFacet> = F extends 'transport'
  ? TransportFacet
  : F extends 'lookup'
    ? LookupFacet
    : F extends 'status'
      ? StatusFacet
      : InboundFacet;

export interface LoadedFacet<F extends ProviderFacet> {
  readonly id: string;
  readonly facet: FacetOf<F>;
  readonly context: ProviderContext;
}

async function moduleOf(provider: RegisteredProvider): Promise<ProviderModule> {
  if (!provider.load) {
    throw new ConfigError(
      `provider "${provider.descriptor.id}" is not part of this function's bundle: the deployment ` +
        'settings select another one (lib/providers/)',
    );
  }
  return provider.load();
}

async function secretOf(
  provider: RegisteredProvider,
  env: Env,
  awsClient: ProviderContext['awsClient'],
): Promise<Record<string, unknown> | undefined> {
  const variable = provider.descriptor.secretVariable;
  const arn = variable ? env[variable]?.trim() : undefined;
  if (!variable || !arn) return undefined;
  if (!secretsAdapter) {
    throw new ConfigError(`${variable} is set, but this function was built without access to secrets`);
  }
  return (await secretsAdapter()).secretJsonReader(awsClient)(arn, variable);
}

/** A facet a function leaves out because its provider's credentials are still placeholders. */
export interface SkippedFacet {
  readonly provider: string;
  readonly facet: ProviderFacet;
  /** Names the secret fields still empty; never a value. */
  readonly detail: string;
}

export type FacetLoad<F extends ProviderFacet> =
  | { readonly kind: 'loaded'; readonly loaded: LoadedFacet<F> }
  /** The module does not offer the facet (or this bundle leaves it out). */
  | { readonly kind: 'not_offered' }
  /** The provider's secret still holds the placeholders the deployment wrote. */
  | { readonly kind: 'not_configured'; readonly skipped: SkippedFacet };

/**
 * One facet of a provider module with its settings resolved, or why there is none: not offered,
 * or not configured yet (credentials still placeholders in its secret: lambdas/providers/settings.ts
 * `isPlaceholder`). Anything else wrong (a missing variable, a malformed URL) is a ConfigError
 * naming the variable.
 */
export async function tryLoadFacet<F extends ProviderFacet>(
  provider: RegisteredProvider,
  facet: F,
  base: FacetBase,
): Promise<FacetLoad<F>> {
  const module = await moduleOf(provider);
  const load = module[facet] as (() => Promise<FacetOf<F>>) | undefined;
  if (!load) return { kind: 'not_offered' };
  const awsClient = base.awsClient ?? asBuilt;
  const resolved = resolveProviderSettings(
    provider.descriptor,
    facet,
    base.env,
    await secretOf(provider, base.env, awsClient),
  );
  const id = provider.descriptor.id;
  if (resolved.kind === 'placeholder') {
    return { kind: 'not_configured', skipped: { provider: id, facet, detail: resolved.detail } };
  }
  const context: ProviderContext = {
    settings: resolved.settings,
    timeoutMs: base.config.PROVIDER_TIMEOUT_MS,
    publicBaseUrl: publicBaseUrlOf(base.config),
    clock: base.clock,
    awsClient,
  };
  return { kind: 'loaded', loaded: { id, facet: await load(), context } };
}

/**
 * One facet of a provider module with its settings resolved, or `undefined` when the module does
 * not offer it; a provider not configured yet is a ConfigError here (tests, and callers that
 * cannot do without the facet).
 */
export async function loadFacet<F extends ProviderFacet>(
  provider: RegisteredProvider,
  facet: F,
  base: FacetBase,
): Promise<LoadedFacet<F> | undefined> {
  const result = await tryLoadFacet(provider, facet, base);
  if (result.kind === 'not_configured') throw new ConfigError(result.skipped.detail);
  return result.kind === 'loaded' ? result.loaded : undefined;
}

/**
 * Told once per cold start: each facet a function left out because its provider is not
 * configured yet, as a warning and (unless the function publishes it as a gauge of its own, as
 * the reconciler does every run) in the `ProvidersNotConfigured` count.
 */
export function warnSkipped(
  fn: string,
  skipped: readonly SkippedFacet[],
  { count = true }: { readonly count?: boolean } = {},
): void {
  for (const s of skipped) {
    logger.warn('provider not configured: facet skipped', { function: fn, ...s });
  }
  if (count && skipped.length > 0) {
    metrics.addMetric(Metric.providersNotConfigured, MetricUnit.Count, skipped.length);
  }
}
