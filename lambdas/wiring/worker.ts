import { templateCatalog } from '../../templates/catalog.ts';
import type { LedgerTableClient } from '../adapters/dynamodb/ledger/table-client.ts';
import type { Config } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { WorkerDependencies, WorkerLedger } from '../use-cases/dependencies.ts';
import type { AwsClients } from './aws-clients.ts';
import { retryPolicyOf, timingOf } from './core.ts';
import { buildSealer } from './envelope.ts';
import { buildEscalations } from './escalations.ts';
import { keyCheckStore, ledgerTable, verifyKeys } from './ledger.ts';
import { buildQueue } from './queue.ts';
import { buildRetryScheduler } from './retries.ts';
import { sendWindowsOf } from './send-windows.ts';

/**
 * What every worker (the senders, the reconciler) is built from: both queues, retry schedules,
 * escalations, envelope opening, and the ledger table (its keys checked against the table's
 * first), of which `store` holds the ports the worker's `ledger` takes (./ledger.ts).
 */
export async function buildWorkerDependencies<L extends WorkerLedger>(
  config: Config,
  clients: AwsClients,
  ledger: (table: LedgerTableClient) => L,
): Promise<{
  readonly table: LedgerTableClient;
  readonly worker: WorkerDependencies & { readonly store: L };
}> {
  const table = ledgerTable(config, clients.dynamodb);
  const { sealer, held } = buildSealer(config, clients);
  await verifyKeys(keyCheckStore(table), held);
  const queue = buildQueue(config, clients.sqs);
  const worker = {
    store: ledger(table),
    queue,
    scheduler: buildRetryScheduler(config, queue, clients),
    escalations: buildEscalations(config, clients),
    sealer,
    catalog: templateCatalog,
    clock: systemClock,
    random: Math.random,
    timing: timingOf(config),
    retryPolicy: retryPolicyOf(config),
    // The send window of a channel a fallback reserves (docs/architecture.md §12).
    sendWindows: sendWindowsOf(config),
  };
  return { table, worker };
}
