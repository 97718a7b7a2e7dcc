import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedgerStore } from '../adapters/dynamodb/dynamodb-ledger-store.ts';
import { ConfigError } from '../contract/config-error.ts';
import { keyCheckValue } from '../domain/identity.ts';
import type { Config } from '../edge/config.ts';
import type { KeyChecks, LedgerStore } from '../ports/ledger-store.port.ts';

export function buildLedgerStore(config: Config, client = new DynamoDBClient({})): DynamoDbLedgerStore {
  return new DynamoDbLedgerStore({
    client,
    tableName: config.LEDGER_TABLE_NAME,
    openShards: config.OPEN_INDEX_SHARDS,
    ...(config.LEDGER_RETENTION_DAYS ? { retentionMs: config.LEDGER_RETENTION_DAYS * 86_400_000 } : {}),
  });
}

export interface HeldKey {
  readonly which: keyof Omit<KeyChecks, 'keysFrom'>;
  readonly key: Uint8Array;
  /** The variable it came from, for the message. */
  readonly variable: string;
}

/**
 * Refuses to start when a key this process holds is not the key the table was first used with:
 * a different fingerprint key splits every suppression and duplicate check, a different envelope
 * key makes every open row's envelope unreadable (`envelope_unreadable` for each). The first
 * process to use a table records the check values; every later one compares (one read per
 * start, nothing per notice).
 */
export async function verifyKeys(
  store: Pick<LedgerStore, 'checkKeys'>,
  held: readonly HeldKey[],
): Promise<void> {
  if (held.length === 0) return;
  const mine: KeyChecks = Object.fromEntries(held.map((h) => [h.which, keyCheckValue(h.key)]));
  const { recorded, mismatched } = await store.checkKeys(mine);
  if (mismatched.length === 0) return;
  const names = held.filter((h) => mismatched.includes(h.which)).map((h) => h.variable);
  const from = recorded.keysFrom ? ` (the table's keys are in ${recorded.keysFrom})` : '';
  throw new ConfigError(
    `${names.join(' and ')} ${names.length > 1 ? 'do' : 'does'} not match the key${names.length > 1 ? 's' : ''} ` +
      `this ledger table was first used with${from}: fingerprints or envelopes would not match the ` +
      'rows already written; start with the same keys',
  );
}
