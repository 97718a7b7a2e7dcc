import { ConfigError } from '../contract/config-error.ts';
import { FALLBACK_PROVIDER_SETTINGS } from '../contract/failover-settings.ts';
import { CHANNEL_SETTINGS, NO_PROVIDER } from '../contract/settings.ts';
import type { Channel } from '../domain/channel.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { RegisteredProvider } from '../providers/registry.ts';
import type { SenderDependencies, TransportFor } from '../use-cases/dependencies.ts';
import { buildAwsClients } from './aws-clients.ts';
import { workerIdOf } from './core.ts';
import { senderLedger, throttleGateStore } from './ledger.ts';
import { once } from './once.ts';
import {
  type FacetBase,
  type SkippedFacet,
  selectedFallback,
  selectedProvider,
  tryLoadFacet,
  warnSkipped,
} from './providers.ts';
import { buildSendGate } from './send-gate.ts';
import { buildWorkerDependencies } from './worker.ts';

/** A channel sender: the channel's selected provider's transport and nothing of any other. */
export interface SenderRuntime {
  readonly config: Config;
  readonly channel: Channel;
  /** The selected provider's id, recorded on each row it claims. */
  readonly provider: string;
  /**
   * Most messages per provider call: `EMAIL_BATCH_MAX` capped by the transport's own limit where
   * it can send batches (docs/architecture.md §4, "One dispatch path"); 1 = one message per call.
   */
  readonly batchMax: number;
  readonly deps: SenderDependencies;
  /** The transport, when its provider's credentials are still placeholders (the sender has none). */
  readonly skipped: readonly SkippedFacet[];
}

export async function buildSenderRuntime(
  channel: Channel,
  env: Record<string, string | undefined> = process.env,
): Promise<SenderRuntime> {
  const config = readConfig(env);
  const provider = selectedProvider(channel, env);
  if (!provider) {
    throw new ConfigError(
      `${CHANNEL_SETTINGS[channel].provider} is ${NO_PROVIDER}: this deployment sends no ${channel}, so it runs no ${channel} sender`,
    );
  }
  const clients = buildAwsClients(channel === 'email' ? 'sendEmail' : 'sendSms');
  const base = { config, env, clock: systemClock, awsClient: clients.adopt };
  const id = provider.descriptor.id;
  // Credentials still placeholders: the sender runs, and each row of the channel fails as
  // provider_not_configured (escalated) before any claim (lambdas/use-cases/prepare-delivery.ts).
  const { transport, skipped } = await channelTransport(
    provider,
    channel,
    CHANNEL_SETTINGS[channel].provider,
    base,
  );
  // The fallback (docs/architecture.md §"Provider failover"); one still unconfigured is left out
  // (told and counted like any skipped facet): the channel then has no failover.
  const fallbackProvider = selectedFallback(channel, env);
  const fallback = fallbackProvider
    ? await channelTransport(fallbackProvider, channel, FALLBACK_PROVIDER_SETTINGS[channel], base)
    : undefined;
  const batchMax =
    channel === 'email' && transport && 'sendBatch' in transport && transport.sendBatch && transport.maxBatch
      ? Math.max(1, Math.min(config.EMAIL_BATCH_MAX, transport.maxBatch))
      : 1;
  const { table, worker } = await buildWorkerDependencies(config, clients, senderLedger);
  return {
    config,
    channel,
    provider: id,
    batchMax,
    skipped: [skipped, fallback?.skipped].flatMap((x) => x ?? []),
    deps: {
      ...worker,
      transports: transport ? { [channel]: transport } : {},
      ...(fallback?.transport ? { fallbackTransports: { [channel]: fallback.transport } } : {}),
      ...(skipped ? { unconfiguredProviders: { [channel]: { provider: id, detail: skipped.detail } } } : {}),
      workerId: workerIdOf(),
      operatorHoldMs: config.OPERATOR_HOLD_MS,
      gate: buildSendGate(channel, config, throttleGateStore(table), clients.dynamodb),
    },
  };
}

/** A provider's transport for the channel, or why there is none yet (credentials still placeholders). */
async function channelTransport<C extends Channel>(
  provider: RegisteredProvider,
  channel: C,
  variable: string,
  base: FacetBase,
): Promise<{
  readonly transport?: TransportFor<C> | undefined;
  readonly skipped?: SkippedFacet | undefined;
}> {
  const load = await tryLoadFacet(provider, 'transport', base);
  if (load.kind === 'not_configured') return { skipped: load.skipped };
  const create = load.kind === 'loaded' ? load.loaded.facet[channel] : undefined;
  if (load.kind !== 'loaded' || !create) {
    throw new ConfigError(`${variable}: provider "${provider.descriptor.id}" offers no ${channel} transport`);
  }
  return { transport: create(load.loaded.context as never) as TransportFor<C> };
}

async function coldStart(channel: Channel): Promise<SenderRuntime> {
  const runtime = await buildSenderRuntime(channel);
  warnSkipped(channel === 'email' ? 'sendEmail' : 'sendSms', runtime.skipped);
  return runtime;
}

const senders = {
  email: once(() => coldStart('email')),
  sms: once(() => coldStart('sms')),
};

export function getSenderRuntime(channel: Channel): Promise<SenderRuntime> {
  return senders[channel]();
}
