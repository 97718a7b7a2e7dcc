import type { Channel } from '../../domain/channel.ts';
import type { Intent } from '../../domain/intent.ts';
import type { SuppressionRecord, SuppressionTarget } from '../../domain/suppression.ts';
import type { TransitionPlan } from '../../domain/transition.ts';
import type { SendBatch } from '../../ports/batch-records.port.ts';
import type { KeyChecks } from '../../ports/key-checks.port.ts';
import type { LedgerStore } from '../../ports/ledger-store.port.ts';
import { dynamoDbBatchRecords } from './ledger/batch-records.ts';
import {
  dynamoDbIntentReservations,
  dynamoDbIntentTransitions,
  dynamoDbNoticeReader,
} from './ledger/intents.ts';
import { dynamoDbKeyChecks } from './ledger/key-checks.ts';
import { dynamoDbEscalationMarkers, dynamoDbOpenIndex } from './ledger/open-index.ts';
import { dynamoDbRecentFailures } from './ledger/recent-failures.ts';
import { dynamoDbSuppressions } from './ledger/suppressions.ts';
import { LedgerTableClient, type LedgerTableOptions } from './ledger/table-client.ts';
import { dynamoDbThrottleGate } from './ledger/throttle-gate.ts';

export type DynamoDbLedgerStoreOptions = LedgerTableOptions;

/** Every port of the ledger over one table client. */
export function dynamoDbLedger(table: LedgerTableClient): LedgerStore {
  return {
    ...dynamoDbIntentReservations(table),
    ...dynamoDbIntentTransitions(table),
    ...dynamoDbNoticeReader(table),
    ...dynamoDbOpenIndex(table),
    ...dynamoDbEscalationMarkers(table),
    ...dynamoDbSuppressions(table),
    ...dynamoDbBatchRecords(table),
    ...dynamoDbKeyChecks(table),
    ...dynamoDbThrottleGate(table),
    ...dynamoDbRecentFailures(table),
  };
}

/**
 * The whole ledger on DynamoDB, for tests, the local stack and benchmarks. Every method is one
 * request (listing pages and transaction retries aside), written in the part of ./ledger/ that
 * owns its items: intents (reserve = conditional Put, apply = conditional Update, get =
 * GetItem), the open index, suppressions, the throttle gate, batch records, key checks. The
 * functions themselves are composed from those parts alone (lambdas/wiring/).
 */
export class DynamoDbLedgerStore implements LedgerStore {
  readonly tableName: string;
  private readonly ledger: LedgerStore;

  constructor(options: DynamoDbLedgerStoreOptions) {
    this.tableName = options.tableName;
    this.ledger = dynamoDbLedger(new LedgerTableClient(options));
  }

  reserve(intent: Intent) {
    return this.ledger.reserve(intent);
  }
  reserveNotice(intents: readonly Intent[], visible?: (existing: Intent) => boolean) {
    return this.ledger.reserveNotice(intents, visible);
  }
  get(noticeId: string, channel: Channel) {
    return this.ledger.get(noticeId, channel);
  }
  getNotice(noticeId: string) {
    return this.ledger.getNotice(noticeId);
  }
  getRows(keys: readonly { readonly noticeId: string; readonly channel: Channel }[]) {
    return this.ledger.getRows(keys);
  }
  listFailed(since: number, until: number, max: number) {
    return this.ledger.listFailed(since, until, max);
  }
  apply(plan: TransitionPlan) {
    return this.ledger.apply(plan);
  }
  listDue(now: number, options?: { limit?: number; cursor?: string }) {
    return this.ledger.listDue(now, options);
  }
  listOpen(options?: { limit?: number; cursor?: string }) {
    return this.ledger.listOpen(options);
  }
  countOpen() {
    return this.ledger.countOpen();
  }
  defer(noticeId: string, channel: Channel, expectedVersion: number, dueAt: number) {
    return this.ledger.defer(noticeId, channel, expectedVersion, dueAt);
  }
  settleEscalation(
    noticeId: string,
    channel: Channel,
    expectedVersion: number,
    options?: { readonly keepOpen?: boolean; readonly dueAt?: number | undefined },
  ) {
    return this.ledger.settleEscalation(noticeId, channel, expectedVersion, options);
  }
  getSuppression(channel: Channel, fingerprint: string) {
    return this.ledger.getSuppression(channel, fingerprint);
  }
  appendSuppression(target: SuppressionTarget, record: SuppressionRecord) {
    return this.ledger.appendSuppression(target, record);
  }
  getSuppressionHistory(channel: Channel, fingerprint: string, options?: { limit?: number }) {
    return this.ledger.getSuppressionHistory(channel, fingerprint, options);
  }
  recordBatch(batch: SendBatch) {
    return this.ledger.recordBatch(batch);
  }
  getBatch(id: string) {
    return this.ledger.getBatch(id);
  }
  checkKeys(mine: KeyChecks) {
    return this.ledger.checkKeys(mine);
  }
  readGate(channel: Channel) {
    return this.ledger.readGate(channel);
  }
  readHold(channel: Channel) {
    return this.ledger.readHold(channel);
  }
  closeGate(channel: Channel, untilMs: number, reason: string) {
    return this.ledger.closeGate(channel, untilMs, reason);
  }
}
