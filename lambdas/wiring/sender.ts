import { ConfigError } from '../contract/config-error.ts';
import { CHANNEL_SETTINGS } from '../contract/settings.ts';
import type { Channel } from '../domain/channel.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { SenderDependencies } from '../use-cases/dependencies.ts';
import { buildAwsClients } from './aws-clients.ts';
import { workerIdOf } from './core.ts';
import { senderLedger, throttleGateStore } from './ledger.ts';
import { once } from './once.ts';
import { loadFacet, selectedProvider } from './providers.ts';
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
}

export async function buildSenderRuntime(
  channel: Channel,
  env: Record<string, string | undefined> = process.env,
): Promise<SenderRuntime> {
  const config = readConfig(env);
  const provider = selectedProvider(channel, env);
  const clients = buildAwsClients(channel === 'email' ? 'sendEmail' : 'sendSms');
  const loaded = await loadFacet(provider, 'transport', {
    config,
    env,
    clock: systemClock,
    awsClient: clients.adopt,
  });
  const create = loaded?.facet[channel];
  if (!loaded || !create) {
    throw new ConfigError(
      `${CHANNEL_SETTINGS[channel].provider}: provider "${provider.descriptor.id}" offers no ${channel} transport`,
    );
  }
  const transport = create(loaded.context);
  const batchMax =
    channel === 'email' && 'sendBatch' in transport && transport.sendBatch && transport.maxBatch
      ? Math.max(1, Math.min(config.EMAIL_BATCH_MAX, transport.maxBatch))
      : 1;
  const { table, worker } = await buildWorkerDependencies(config, clients, senderLedger);
  return {
    config,
    channel,
    provider: provider.descriptor.id,
    batchMax,
    deps: {
      ...worker,
      transports: { [channel]: transport },
      workerId: workerIdOf(),
      operatorHoldMs: config.OPERATOR_HOLD_MS,
      gate: buildSendGate(channel, config, throttleGateStore(table), clients.dynamodb),
    },
  };
}

const senders = {
  email: once(() => buildSenderRuntime('email')),
  sms: once(() => buildSenderRuntime('sms')),
};

export function getSenderRuntime(channel: Channel): Promise<SenderRuntime> {
  return senders[channel]();
}
