import { templateCatalog } from '../../templates/catalog.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { IntakeDependencies } from '../use-cases/dependencies.ts';
import { timingOf } from './core.ts';
import { buildSealer } from './envelope.ts';
import { loadFingerprintKey } from './fingerprint.ts';
import { buildLedgerStore, verifyKeys } from './ledger.ts';
import { once } from './once.ts';
import { buildQueue } from './queue.ts';

/**
 * The http function (intake, timelines, operator suppressions): the ledger, both channel
 * queues, envelope sealing and the fingerprint key. No provider code: inbound provider events
 * have a function of their own (./provider-events.ts).
 */
export interface HttpRuntime {
  readonly config: Config;
  readonly deps: IntakeDependencies;
}

export async function buildHttpRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<HttpRuntime> {
  const config = readConfig(env);
  const store = buildLedgerStore(config);
  const { sealer, held } = buildSealer(config);
  const fingerprint = await loadFingerprintKey(config);
  await verifyKeys(store, [fingerprint, ...held]);
  return {
    config,
    deps: {
      store,
      queue: buildQueue(config),
      sealer,
      catalog: templateCatalog,
      clock: systemClock,
      fingerprintKey: fingerprint.key,
      timing: timingOf(config),
      defaultDeadlineMs: config.NOTICE_DEFAULT_DEADLINE_MS,
    },
  };
}

export const getHttpRuntime = once(() => buildHttpRuntime());
