import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { ensureKeyTable } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import { keyTableNameOf } from '../../lambdas/contract/key-table.ts';
import {
  CAPACITY_MODES,
  type CapacityMode,
  TABLE_CAPACITY_DEFAULTS,
  type TableCapacity,
} from '../../lambdas/contract/table-capacity.ts';
import { keyCheckValue } from '../../lambdas/domain/identity.ts';
import { LOCAL_SECRETS_FILE } from '../local-secrets.ts';
import type { LocalService, RunningService } from '../service.ts';
import { LOCAL_SETTINGS } from '../settings.ts';

/** The tables' billing (TABLE_CAPACITY_MODE, local/settings.ts): the deployment's default capacities in that mode. */
function tableCapacityOf(env: Readonly<Record<string, string | undefined>>): TableCapacity {
  const mode = env.TABLE_CAPACITY_MODE || LOCAL_SETTINGS.TABLE_CAPACITY_MODE.default;
  if (!(CAPACITY_MODES as readonly string[]).includes(mode)) {
    throw new ConfigError(`TABLE_CAPACITY_MODE must be one of ${CAPACITY_MODES.join(', ')}`);
  }
  return { ...TABLE_CAPACITY_DEFAULTS, mode: mode as CapacityMode };
}

const b64 = (value: string) => new Uint8Array(Buffer.from(value, 'base64'));

/**
 * The ledger table and its key table (KEY_TABLE_NAME, else the ledger table's name + `-keys`, so
 * each ledger table has its own; both created when missing: stacks may share one DynamoDB), and
 * the keys that go with them. KEY_TABLE_NAME is set for every function either way, as the CDK
 * sets it, so the IAM check names the same table the functions use. A table records check values of the keys it was first used with and where those keys
 * are kept (`keysFrom`: a local-secrets.json path). A stack whose keys differ — two stacks on
 * one DynamoDB started with different data dirs, say — then either adopts the table's keys
 * from that file (when it may: its own keys were generated, not given) or refuses to start,
 * naming FINGERPRINT_KEY and ENVELOPE_LOCAL_KEY. Never does it run with keys that would fail
 * every envelope of the other stack's rows (`envelope_unreadable`) or split fingerprints.
 */
export function ledgerService(options: { readonly keysGiven: boolean }): LocalService {
  return {
    name: 'ledger',
    async start({ env, dataDir, region, log }): Promise<RunningService> {
      const client = new DynamoDBClient({ endpoint: env.AWS_ENDPOINT_URL_DYNAMODB, region });
      try {
        const tableName = env.LEDGER_TABLE_NAME || 'notice-ledger';
        const capacity = tableCapacityOf(env);
        const streamArn = await ensureLedgerTable(client, tableName, capacity);
        const keyTableName = env.KEY_TABLE_NAME || keyTableNameOf(tableName);
        await ensureKeyTable(client, keyTableName, capacity);
        const tables = { LEDGER_TABLE_STREAM_ARN: streamArn, KEY_TABLE_NAME: keyTableName };
        const store = new DynamoDbLedgerStore({ client, tableName });
        const ours = { fingerprint: env.FINGERPRINT_KEY ?? '', envelope: env.ENVELOPE_LOCAL_KEY ?? '' };
        const { recorded, mismatched } = await store.checkKeys({
          fingerprint: keyCheckValue(b64(ours.fingerprint)),
          envelope: keyCheckValue(b64(ours.envelope)),
          keysFrom: join(dataDir, LOCAL_SECRETS_FILE),
        });
        if (mismatched.length === 0)
          return {
            env: tables,
            describe: `table ${tableName}, key records in ${keyTableName}`,
            stop: async () => undefined,
          };
        const adopted = options.keysGiven ? undefined : await adoptable(recorded.keysFrom, recorded);
        if (!adopted) {
          const where = recorded.keysFrom ? ` (kept in ${recorded.keysFrom})` : '';
          throw new ConfigError(
            `the ledger table ${tableName} was first used with other keys${where}: set FINGERPRINT_KEY and ` +
              'ENVELOPE_LOCAL_KEY to those keys, or use another LEDGER_TABLE_NAME; with these keys every ' +
              "fingerprint and envelope of that table's rows would fail to match",
          );
        }
        log(`keys: using the ledger table's keys from ${recorded.keysFrom} (this data dir's differ)`);
        return {
          env: {
            FINGERPRINT_KEY: adopted.fingerprintKey,
            ENVELOPE_LOCAL_KEY: adopted.envelopeKey,
            ...tables,
          },
          describe: `table ${tableName}, key records in ${keyTableName}; keys from ${recorded.keysFrom}`,
          stop: async () => undefined,
        };
      } finally {
        client.destroy();
      }
    },
  };
}

/** The keys in `file` when they are the table's (their check values match), else undefined. */
async function adoptable(
  file: string | undefined,
  recorded: { fingerprint?: string | undefined; envelope?: string | undefined },
): Promise<{ fingerprintKey: string; envelopeKey: string } | undefined> {
  if (!file) return undefined;
  let keys: { fingerprintKey?: unknown; envelopeKey?: unknown };
  try {
    keys = JSON.parse(await readFile(file, 'utf8')) as typeof keys;
  } catch {
    return undefined;
  }
  if (typeof keys.fingerprintKey !== 'string' || typeof keys.envelopeKey !== 'string') return undefined;
  const matches =
    keyCheckValue(b64(keys.fingerprintKey)) === recorded.fingerprint &&
    keyCheckValue(b64(keys.envelopeKey)) === recorded.envelope;
  return matches ? { fingerprintKey: keys.fingerprintKey, envelopeKey: keys.envelopeKey } : undefined;
}
