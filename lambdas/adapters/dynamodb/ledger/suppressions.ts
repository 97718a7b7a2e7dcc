import { randomUUID } from 'node:crypto';
import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Channel } from '../../../domain/channel.ts';
import {
  SuppressionAction,
  type SuppressionRecord,
  SuppressionSource,
  type SuppressionState,
  type SuppressionTarget,
  supersedes,
  suppressionFactId,
} from '../../../domain/suppression.ts';
import type {
  SuppressionAppend,
  SuppressionHistory,
  Suppressions,
} from '../../../ports/suppressions.port.ts';
import { backOff, type Item, type LedgerTableClient, RETRYABLE_CANCELLATIONS } from './table-client.ts';

/*
 * A destination's suppression partition (docs/table-design.md): `S#<channel>#<fingerprint>`,
 * one `S` item with the effective record (the sender's one cheap read) and the history records
 * `H#<at>#<fact id>` beside it.
 */

const SUPPRESSION_PREFIX = 'S#';
const suppressionPk = (channel: Channel, fingerprint: string) =>
  `${SUPPRESSION_PREFIX}${channel}#${fingerprint}`;
const SUPPRESSION_SK = 'S';
const HISTORY_PREFIX = 'H#';
/** History records sort by time, then by fact id (which also makes a repeated fact one key). */
const suppressionRecordSk = (record: SuppressionRecord) =>
  `${HISTORY_PREFIX}${String(record.at).padStart(15, '0')}#${suppressionFactId(record)}`;
/** Optimistic-concurrency retries of an append racing another append on the same destination. */
const MAX_SUPPRESSION_RACES = 8;

function recordToItem(record: SuppressionRecord): Item {
  return {
    action: record.action,
    reason: record.reason,
    source: record.source,
    actor: record.actor,
    at: record.at,
    code: record.code,
  };
}

/**
 * A history record's item (`S#<channel>#<fingerprint>` / `H#…`) as the archive keeps it (the
 * change stream's inserts): its destination and its record; undefined for any other item.
 */
export function suppressionHistoryOf(item: Item): SuppressionHistoryEntry | undefined {
  const { pk, sk } = item;
  if (typeof pk !== 'string' || typeof sk !== 'string') return undefined;
  if (!pk.startsWith(SUPPRESSION_PREFIX) || !sk.startsWith(HISTORY_PREFIX)) return undefined;
  const channelAndFingerprint = pk.slice(SUPPRESSION_PREFIX.length);
  const split = channelAndFingerprint.indexOf('#');
  return {
    channel: channelAndFingerprint.slice(0, split) as Channel,
    fingerprint: channelAndFingerprint.slice(split + 1),
    masked: typeof item.masked === 'string' ? item.masked : undefined,
    record: recordFromItem(item),
  };
}

/** A suppression history record with its destination; `masked` absent on records written before it was kept there. */
export interface SuppressionHistoryEntry extends Omit<SuppressionTarget, 'masked'> {
  readonly masked?: string | undefined;
  readonly record: SuppressionRecord;
}

function recordFromItem(item: Item): SuppressionRecord {
  return {
    action: item.action as SuppressionRecord['action'],
    reason: item.reason as string,
    source: item.source as SuppressionRecord['source'],
    actor: item.actor as string,
    at: item.at as number,
    ...(item.code !== undefined ? { code: item.code as string } : {}),
  };
}

/**
 * The effective state from the `S` item. An item written before the history existed has
 * `{reason, source, createdAt, detail}` and always meant "suppressed"; its `source` was the
 * provider's name or `operator`, its `detail` a provider code or an operator's free text (not
 * carried over).
 */
function suppressionStateFromItem(channel: Channel, fingerprint: string, item: Item): SuppressionState {
  const legacy = item.action === undefined;
  const latest: SuppressionRecord = legacy
    ? {
        action: SuppressionAction.suppress,
        reason: item.reason as string,
        source: item.source === 'operator' ? SuppressionSource.operator : SuppressionSource.provider,
        actor: item.source as string,
        at: item.createdAt as number,
        ...(item.source !== 'operator' && item.detail !== undefined ? { code: item.detail as string } : {}),
      }
    : recordFromItem(item);
  return { channel, fingerprint, masked: item.masked as string, latest };
}

async function readSuppressionItem(
  table: LedgerTableClient,
  channel: Channel,
  fingerprint: string,
): Promise<Item | undefined> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: suppressionPk(channel, fingerprint), sk: SUPPRESSION_SK },
      ConsistentRead: true,
      ...table.capacityOption,
    }),
  );
  table.meter('getSuppression', out.ConsumedCapacity);
  return out.Item;
}

/** One GetItem of the `S` item (the sender's per-send check). */
async function getSuppression(
  table: LedgerTableClient,
  channel: Channel,
  fingerprint: string,
): Promise<SuppressionState | undefined> {
  const item = await readSuppressionItem(table, channel, fingerprint);
  return item ? suppressionStateFromItem(channel, fingerprint, item) : undefined;
}

/**
 * The transaction that appends `record` to what was read (`head`, the `S` item or none): the
 * history record, only if its key is new, and, first when the `S` item predates the history, its
 * record copied into the history; then the `S` item rewritten with the effective record,
 * conditional on the version read.
 */
function appendTransaction(
  table: LedgerTableClient,
  target: SuppressionTarget,
  record: SuppressionRecord,
  head: Item | undefined,
) {
  const pk = suppressionPk(target.channel, target.fingerprint);
  const current = head ? suppressionStateFromItem(target.channel, target.fingerprint, head) : undefined;
  const version = head?.ver as number | undefined;
  const latest = supersedes(record, current?.latest) ? record : (current?.latest as SuppressionRecord);
  const history = [record];
  if (current && version === undefined) history.push(current.latest);
  const historyPuts = history.map((entry) => ({
    Put: {
      TableName: table.tableName,
      Item: marshall(
        // The masked form too: the archive's suppression facts carry it (docs/archive.md).
        { pk, sk: suppressionRecordSk(entry), masked: target.masked, ...recordToItem(entry) },
        { removeUndefinedValues: true },
      ),
      ConditionExpression: 'attribute_not_exists(sk)',
    },
  }));
  const headPut = {
    Put: {
      TableName: table.tableName,
      Item: marshall(
        { pk, sk: SUPPRESSION_SK, masked: target.masked, ...recordToItem(latest), ver: (version ?? 0) + 1 },
        { removeUndefinedValues: true },
      ),
      ConditionExpression: head
        ? version === undefined
          ? 'attribute_exists(pk) AND attribute_not_exists(ver)'
          : 'ver = :ver'
        : 'attribute_not_exists(pk)',
      ...(version !== undefined ? { ExpressionAttributeValues: marshall({ ':ver': version }) } : {}),
    },
  };
  const state: SuppressionState = { ...target, latest };
  return { state, items: [...historyPuts, headPut] };
}

/**
 * Read the `S` item, then one TransactWriteItems (`appendTransaction`). A repeated fact is
 * cancelled on its history key: nothing is written. A concurrent append is cancelled on the
 * version: read again and retry.
 */
async function appendSuppression(
  table: LedgerTableClient,
  target: SuppressionTarget,
  record: SuppressionRecord,
): Promise<SuppressionAppend> {
  for (let race = 0; ; race++) {
    const head = await readSuppressionItem(table, target.channel, target.fingerprint);
    const { state, items } = appendTransaction(table, target, record, head);
    try {
      const out = await table.doc.send(
        new TransactWriteItemsCommand({
          ClientRequestToken: randomUUID(),
          TransactItems: items,
          ...table.capacityOption,
        }),
      );
      for (const capacity of out.ConsumedCapacity ?? []) table.meter('appendSuppression', capacity);
      return { state, appended: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      table.meter('appendSuppression', undefined);
      const reasons = error.CancellationReasons ?? [];
      if (reasons[0]?.Code === 'ConditionalCheckFailed') {
        // This very fact is already recorded.
        const now = await getSuppression(table, target.channel, target.fingerprint);
        return { state: now ?? state, appended: false };
      }
      const transient = reasons.every(
        (reason) =>
          reason.Code === 'ConditionalCheckFailed' || RETRYABLE_CANCELLATIONS.has(reason.Code ?? 'None'),
      );
      if (!transient || race + 1 >= MAX_SUPPRESSION_RACES) throw error;
      await backOff(race + 1);
    }
  }
}

/**
 * One Query of the destination's partition, newest first: the `S` item sorts after every
 * `H#…` record, so it comes first, then the newest `limit` records (one more tells whether
 * older ones exist).
 */
async function getSuppressionHistory(
  table: LedgerTableClient,
  channel: Channel,
  fingerprint: string,
  options: { limit?: number } = {},
): Promise<SuppressionHistory | undefined> {
  const limit = options.limit ?? 100;
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': suppressionPk(channel, fingerprint) },
      ScanIndexForward: false,
      Limit: limit + 2,
      ConsistentRead: true,
      ...table.capacityOption,
    }),
  );
  table.meter('getSuppressionHistory', out.ConsumedCapacity);
  const items = out.Items ?? [];
  const head = items.find((item) => item.sk === SUPPRESSION_SK);
  if (!head) return undefined;
  const state = suppressionStateFromItem(channel, fingerprint, head);
  const newestFirst = items.filter((item) => item.sk !== SUPPRESSION_SK).map(recordFromItem);
  // An `S` item from before the history is its own only record.
  const records = newestFirst.length === 0 ? [state.latest] : newestFirst.slice(0, limit).reverse();
  return { state, records, truncated: newestFirst.length > limit };
}

export function dynamoDbSuppressions(table: LedgerTableClient): Suppressions {
  return {
    getSuppression: (channel, fingerprint) => getSuppression(table, channel, fingerprint),
    appendSuppression: (target, record) => appendSuppression(table, target, record),
    getSuppressionHistory: (channel, fingerprint, options) =>
      getSuppressionHistory(table, channel, fingerprint, options),
  };
}
