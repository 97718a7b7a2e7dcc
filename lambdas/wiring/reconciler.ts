import { CHANNELS } from '../domain/channel.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { ProviderStatus } from '../ports/provider.port.ts';
import type { ProviderLookup } from '../ports/provider-lookup.port.ts';
import type { ReconcilerDependencies } from '../use-cases/reconcile.ts';
import { buildAwsClients } from './aws-clients.ts';
import { buildDeadlineRisk } from './deadline-risk.ts';
import { reconcilerLedger } from './ledger.ts';
import { logger } from './observability.ts';
import { once } from './once.ts';
import { answeringProviders, loadFacet, selectedProvider } from './providers.ts';
import { buildWorkerDependencies } from './worker.ts';

/**
 * The reconciler: the ledger, both queues, retry schedules, escalations, envelope opening (to
 * render what a lookup matches on) and the lookups and status facets (delivery follow-up) of
 * every provider rows may still answer to.
 */
export interface ReconcilerRuntime {
  readonly config: Config;
  readonly deps: ReconcilerDependencies;
}

export async function buildReconcilerRuntime(
  env: Record<string, string | undefined> = process.env,
  onRowError?: ReconcilerDependencies['onRowError'],
): Promise<ReconcilerRuntime> {
  const config = readConfig(env);
  const clients = buildAwsClients('reconciler');
  const lookups: Record<string, ProviderLookup> = {};
  const statuses: Record<string, ProviderStatus> = {};
  for (const provider of answeringProviders(config, env)) {
    const base = { config, env, clock: systemClock, awsClient: clients.adopt };
    const loaded = await loadFacet(provider, 'lookup', base);
    if (loaded) lookups[loaded.id] = loaded.facet(loaded.context);
    const status = await loadFacet(provider, 'status', base);
    if (status) statuses[status.id] = status.facet(status.context);
  }
  const channelProviders = Object.fromEntries(
    CHANNELS.map((channel) => [channel, selectedProvider(channel, env).descriptor.id]),
  ) as ReconcilerDependencies['channelProviders'];
  const { worker } = await buildWorkerDependencies(config, clients, reconcilerLedger);
  return {
    config,
    deps: {
      ...worker,
      lookups,
      statuses,
      followUp: {
        graceMs: config.DELIVERY_REPORT_GRACE_MS,
        deadlineMs: config.DELIVERY_REPORT_DEADLINE_MS,
      },
      statusPullsPerRun: config.STATUS_PULLS_PER_RUN,
      channelProviders,
      unknownGraceMs: config.UNKNOWN_GRACE_MS,
      unknownPolicy: config.UNKNOWN_POLICY,
      recheckMs: config.RECONCILE_INTERVAL_MS,
      ...buildDeadlineRisk(config, clients, worker.escalations),
      ...(onRowError ? { onRowError } : {}),
    },
  };
}

export const getReconcilerRuntime = once(() =>
  buildReconcilerRuntime(process.env, (ref, error) =>
    logger.error('reconciler row failed', {
      noticeId: ref.noticeId,
      channel: ref.channel,
      errorName: error instanceof Error ? error.name : typeof error,
      errorMessage: error instanceof Error ? error.message : undefined,
    }),
  ),
);
