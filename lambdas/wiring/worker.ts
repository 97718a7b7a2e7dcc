import { templateCatalog } from '../../templates/catalog.ts';
import type { Config } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { WorkerDependencies } from '../use-cases/dependencies.ts';
import { type AwsClients, buildAwsClients } from './aws-clients.ts';
import { retryPolicyOf, timingOf } from './core.ts';
import { buildSealer } from './envelope.ts';
import { buildEscalations } from './escalations.ts';
import { buildLedgerStore, verifyKeys } from './ledger.ts';
import { buildQueue } from './queue.ts';
import { buildRetryScheduler } from './retries.ts';

/**
 * What every worker (the senders, the reconciler) is built from: the ledger (its keys checked
 * against the table's first), both queues, retry schedules, escalations, envelope opening.
 */
export async function buildWorkerDependencies(
  config: Config,
  clients: AwsClients = buildAwsClients(),
): Promise<WorkerDependencies> {
  const store = buildLedgerStore(config, clients.dynamodb);
  const { sealer, held } = buildSealer(config);
  await verifyKeys(store, held);
  const queue = buildQueue(config, clients.sqs);
  return {
    store,
    queue,
    scheduler: buildRetryScheduler(config, queue),
    escalations: buildEscalations(config),
    sealer,
    catalog: templateCatalog,
    clock: systemClock,
    random: Math.random,
    timing: timingOf(config),
    retryPolicy: retryPolicyOf(config),
  };
}
