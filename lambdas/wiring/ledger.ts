import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbBatchRecords } from '../adapters/dynamodb/ledger/batch-records.ts';
import {
  dynamoDbIntentReservations,
  dynamoDbIntentTransitions,
  dynamoDbNoticeReader,
} from '../adapters/dynamodb/ledger/intents.ts';
import { dynamoDbKeyChecks } from '../adapters/dynamodb/ledger/key-checks.ts';
import { dynamoDbEscalationMarkers, dynamoDbOpenIndex } from '../adapters/dynamodb/ledger/open-index.ts';
import { dynamoDbRecentFailures } from '../adapters/dynamodb/ledger/recent-failures.ts';
import { dynamoDbSuppressions } from '../adapters/dynamodb/ledger/suppressions.ts';
import { LedgerTableClient } from '../adapters/dynamodb/ledger/table-client.ts';
import { dynamoDbThrottleGate } from '../adapters/dynamodb/ledger/throttle-gate.ts';
import { ConfigError } from '../contract/config-error.ts';
import { keyTableNameOf } from '../contract/key-table.ts';
import { keyCheckValue } from '../domain/identity.ts';
import type { Config } from '../edge/config.ts';
import type { KeyCheckStore, KeyChecks } from '../ports/key-checks.port.ts';
import type { Suppressions } from '../ports/suppressions.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';
import type {
  IntakeLedger,
  OperatorLedger,
  ReconcilerLedger,
  ReportLedger,
  SenderLedger,
} from '../use-cases/dependencies.ts';
import type { WatchDependencies } from '../use-cases/watch-rows.ts';

/** The ledger table over the runtime's DynamoDB client (./aws-clients.ts); each function takes from it the ports it uses. */
export function ledgerTable(config: Config, client: DynamoDBClient): LedgerTableClient {
  return new LedgerTableClient({
    client,
    tableName: config.LEDGER_TABLE_NAME,
    openShards: config.OPEN_INDEX_SHARDS,
    retentionMs: config.HOT_RETENTION,
  });
}

/**
 * The key table (KEY_TABLE_NAME; unset: the ledger table's name + `-keys`) through the same
 * document client and meter as the ledger's: the archiver writes its key records, the http
 * function reads them (lambdas/adapters/dynamodb/key-records.ts).
 */
export function keyTable(config: Config, client: DynamoDBClient): LedgerTableClient {
  return new LedgerTableClient({ client, tableName: keyTableNameIn(config) });
}

/** The key table's name a process uses: KEY_TABLE_NAME, else the one derived from LEDGER_TABLE_NAME. */
export function keyTableNameIn(config: Pick<Config, 'KEY_TABLE_NAME' | 'LEDGER_TABLE_NAME'>): string {
  return config.KEY_TABLE_NAME ?? keyTableNameOf(config.LEDGER_TABLE_NAME);
}

// Each function's ledger: exactly the methods its use cases name (lambdas/use-cases/dependencies.ts).

/** The http function: intake, the timeline, operators' acts and list, suppressions. */
export function httpLedger(table: LedgerTableClient): IntakeLedger & OperatorLedger & Suppressions {
  const { listOpen } = dynamoDbOpenIndex(table);
  return {
    ...dynamoDbIntentReservations(table),
    ...dynamoDbIntentTransitions(table),
    ...dynamoDbNoticeReader(table),
    ...dynamoDbEscalationMarkers(table),
    listOpen,
    ...dynamoDbRecentFailures(table),
    ...dynamoDbSuppressions(table),
  };
}

/** A channel sender (the throttle gate is its send gate's: `throttleGateStore`). */
export function senderLedger(table: LedgerTableClient): SenderLedger {
  const { getSuppression, appendSuppression } = dynamoDbSuppressions(table);
  const { recordBatch } = dynamoDbBatchRecords(table);
  const { defer } = dynamoDbOpenIndex(table);
  // reserve: the other channel of a channel fallback (docs/architecture.md §12).
  const { reserve } = dynamoDbIntentReservations(table);
  return {
    reserve,
    ...dynamoDbIntentTransitions(table),
    ...dynamoDbEscalationMarkers(table),
    getSuppression,
    appendSuppression,
    recordBatch,
    defer,
  };
}

/** The watch function: a row read (listed, then consistently) and `defer`, nothing else. */
export function watchLedger(table: LedgerTableClient): WatchDependencies['store'] {
  const { get } = dynamoDbIntentTransitions(table);
  const { getRows } = dynamoDbNoticeReader(table);
  const { defer } = dynamoDbOpenIndex(table);
  return { get, getRows, defer };
}

/** The throttle gate a sender's send gate reads and closes. */
export function throttleGateStore(table: LedgerTableClient): ThrottleGateStore {
  return dynamoDbThrottleGate(table);
}

/** The reconciler. */
export function reconcilerLedger(table: LedgerTableClient): ReconcilerLedger {
  const { listDue, countOpen, defer } = dynamoDbOpenIndex(table);
  const { appendSuppression } = dynamoDbSuppressions(table);
  const { getBatch } = dynamoDbBatchRecords(table);
  const { readGate } = dynamoDbThrottleGate(table);
  const { reserve } = dynamoDbIntentReservations(table);
  return {
    reserve,
    ...dynamoDbIntentTransitions(table),
    ...dynamoDbEscalationMarkers(table),
    listDue,
    countOpen,
    defer,
    appendSuppression,
    getBatch,
    readGate,
  };
}

/** The provider-events function. */
export function reportLedger(table: LedgerTableClient): ReportLedger {
  const { appendSuppression } = dynamoDbSuppressions(table);
  const { reserve } = dynamoDbIntentReservations(table);
  return { ...dynamoDbIntentTransitions(table), appendSuppression, reserve };
}

/** Every function's cold start: the key check item. */
export function keyCheckStore(table: LedgerTableClient): KeyCheckStore {
  return dynamoDbKeyChecks(table);
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
export async function verifyKeys(store: KeyCheckStore, held: readonly HeldKey[]): Promise<void> {
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
