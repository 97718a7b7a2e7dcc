import { NO_PROVIDER } from '../contract/settings.ts';
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
import {
  answeringProviders,
  type SkippedFacet,
  selectedProvider,
  tryLoadFacet,
  warnSkipped,
} from './providers.ts';
import { buildWorkerDependencies } from './worker.ts';

/**
 * The reconciler: the ledger, both queues, retry schedules, escalations, envelope opening (to
 * render what a lookup matches on) and the lookups and status facets (delivery follow-up) of
 * every provider rows may still answer to.
 */
export interface ReconcilerRuntime {
  readonly config: Config;
  readonly deps: ReconcilerDependencies;
  /** Facets left out because their provider's credentials are still placeholders. */
  readonly skipped: readonly SkippedFacet[];
}

export async function buildReconcilerRuntime(
  env: Record<string, string | undefined> = process.env,
  onRowError?: ReconcilerDependencies['onRowError'],
): Promise<ReconcilerRuntime> {
  const config = readConfig(env);
  const clients = buildAwsClients('reconciler');
  const lookups: Record<string, ProviderLookup> = {};
  const statuses: Record<string, ProviderStatus> = {};
  // A provider whose credentials are still placeholders is skipped (told, counted), not a crash:
  // the other providers' rows are reconciled all the same.
  const skipped: SkippedFacet[] = [];
  for (const provider of answeringProviders(config, env)) {
    const base = { config, env, clock: systemClock, awsClient: clients.adopt };
    const lookup = await tryLoadFacet(provider, 'lookup', base);
    if (lookup.kind === 'loaded') lookups[lookup.loaded.id] = lookup.loaded.facet(lookup.loaded.context);
    if (lookup.kind === 'not_configured') skipped.push(lookup.skipped);
    const status = await tryLoadFacet(provider, 'status', base);
    if (status.kind === 'loaded') statuses[status.loaded.id] = status.loaded.facet(status.loaded.context);
    if (status.kind === 'not_configured') skipped.push(status.skipped);
  }
  const channelProviders = Object.fromEntries(
    // A channel without a provider (`none`) has no rows of its own to ask about; older ones, if
    // any, find no lookup under that name and are settled by policy.
    CHANNELS.map((channel) => [channel, selectedProvider(channel, env)?.descriptor.id ?? NO_PROVIDER]),
  ) as ReconcilerDependencies['channelProviders'];
  const { worker } = await buildWorkerDependencies(config, clients, reconcilerLedger);
  return {
    config,
    skipped,
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

export const getReconcilerRuntime = once(async () => {
  const runtime = await buildReconcilerRuntime(process.env, (ref, error) =>
    logger.error('reconciler row failed', {
      noticeId: ref.noticeId,
      channel: ref.channel,
      errorName: error instanceof Error ? error.name : typeof error,
      errorMessage: error instanceof Error ? error.message : undefined,
    }),
  );
  // Logged once here; counted every run by the handler (a gauge).
  warnSkipped('reconciler', runtime.skipped, { count: false });
  return runtime;
});
