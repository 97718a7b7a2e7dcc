import { readConfig } from '../edge/config.ts';
import type { WatchDependencies } from '../use-cases/watch-rows.ts';
import { buildAwsClients } from './aws-clients.ts';
import { ledgerTable, watchLedger } from './ledger.ts';
import { once } from './once.ts';

/** The watch function (docs/table-design.md "Watched rows"): the ledger rows and `defer` only. */
export async function buildWatchRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<WatchDependencies> {
  const config = readConfig(env);
  const clients = buildAwsClients('watch');
  return { store: watchLedger(ledgerTable(config, clients.dynamodb)) };
}

export const getWatchRuntime = once(() => buildWatchRuntime());
