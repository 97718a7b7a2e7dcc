import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { InboundEvent, InboundRequest, InboundVerdict } from '../ports/provider.port.ts';
import type { ReportDependencies } from '../use-cases/dependencies.ts';
import { type AwsClients, awsClientAdopter } from './aws-clients.ts';
import { publicBaseUrlOf, timingOf } from './core.ts';
import { ledgerTable, reportLedger } from './ledger.ts';
import { once } from './once.ts';
import {
  answeringProviders,
  type LoadedFacet,
  type SkippedFacet,
  tryLoadFacet,
  warnSkipped,
} from './providers.ts';
import { sendWindowsOf } from './send-windows.ts';

export interface Webhook {
  readonly contentType: string;
  readonly handle: (request: InboundRequest) => InboundVerdict;
}

export interface EventReader {
  readonly provider: string;
  readonly handle: (event: InboundEvent) => InboundVerdict;
}

/**
 * Inbound provider events (webhooks and EventBridge events) of every provider rows may still
 * answer to, and the ledger. Nothing else: no queue, no envelope key, no fingerprint key (a
 * suppression is keyed by the fingerprint the row already holds).
 */
export interface ProviderEventsRuntime {
  readonly config: Config;
  readonly deps: ReportDependencies;
  /** Webhooks by provider id (the `{provider}` path segment). */
  readonly webhooks: ReadonlyMap<string, Webhook>;
  /** EventBridge readers by event `source`. */
  readonly eventReaders: ReadonlyMap<string, EventReader>;
  /**
   * PUBLIC_BASE_URL without a trailing slash: the origin providers call, when the deployment names
   * one (the API's endpoint, a domain of the operator's, the local gateway). Unset behind the
   * function's own URL, which the function cannot be given (its URL is created after it).
   */
  readonly publicBaseUrl: string | undefined;
  /** Inbound facets left out because their provider's credentials are still placeholders. */
  readonly skipped: readonly SkippedFacet[];
}

/** Assembles the runtime from loaded inbound facets (tests give their own ledger). */
export function providerEventsRuntime(
  config: Config,
  deps: ReportDependencies,
  inbound: readonly LoadedFacet<'inbound'>[],
): ProviderEventsRuntime {
  const webhooks = new Map<string, Webhook>();
  const eventReaders = new Map<string, EventReader>();
  for (const { id, facet, context } of inbound) {
    if (facet.kind === 'webhook') {
      // Signatures may cover the URL the provider called: PUBLIC_BASE_URL's origin, or where the
      // request arrived (the function's own URL: lambdas/handlers/provider-events.ts).
      webhooks.set(id, { contentType: facet.contentType, handle: facet.create(context) });
    } else {
      const handle = facet.create(context);
      for (const source of facet.sources) eventReaders.set(source, { provider: id, handle });
    }
  }
  return { config, deps, webhooks, eventReaders, publicBaseUrl: publicBaseUrlOf(config), skipped: [] };
}

/**
 * The inbound facets of every provider rows may still answer to (see answeringProviders); those
 * of a provider whose credentials are still placeholders are left out (its webhook answers 404)
 * and listed in `skipped`.
 */
export async function loadAnswering(
  config: Config,
  env: Record<string, string | undefined>,
  clients?: Pick<AwsClients, 'adopt'>,
): Promise<{ readonly loaded: LoadedFacet<'inbound'>[]; readonly skipped: SkippedFacet[] }> {
  const loaded: LoadedFacet<'inbound'>[] = [];
  const skipped: SkippedFacet[] = [];
  for (const provider of answeringProviders(config, env)) {
    const facet = await tryLoadFacet(provider, 'inbound', {
      config,
      env,
      clock: systemClock,
      ...(clients ? { awsClient: clients.adopt } : {}),
    });
    if (facet.kind === 'loaded') loaded.push(facet.loaded);
    if (facet.kind === 'not_configured') skipped.push(facet.skipped);
  }
  return { loaded, skipped };
}

/** The inbound facets this function serves (tests build their runtime from them). */
export async function loadInbound(
  config: Config,
  env: Record<string, string | undefined>,
  clients?: Pick<AwsClients, 'adopt'>,
): Promise<LoadedFacet<'inbound'>[]> {
  return (await loadAnswering(config, env, clients)).loaded;
}

export async function buildProviderEventsRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<ProviderEventsRuntime> {
  const config = readConfig(env);
  // The ledger's client only: this function enqueues nothing (its bundle carries no SQS client).
  const adopt = awsClientAdopter('providerEvents');
  const { loaded, skipped } = await loadAnswering(config, env, { adopt });
  const deps = {
    store: reportLedger(ledgerTable(config, adopt(new DynamoDBClient({})))),
    clock: systemClock,
    timing: timingOf(config),
    sendWindows: sendWindowsOf(config),
  };
  return { ...providerEventsRuntime(config, deps, loaded), skipped };
}

export const getProviderEventsRuntime = once(async () => {
  const runtime = await buildProviderEventsRuntime();
  warnSkipped('providerEvents', runtime.skipped);
  return runtime;
});
