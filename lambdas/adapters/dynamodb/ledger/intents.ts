import { randomUUID } from 'node:crypto';
import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { LedgerTable } from '../../../contract/ledger-table.ts';
import type { Channel } from '../../../domain/channel.ts';
import { type Intent, isSameContent, MUTABLE_INTENT_FIELDS } from '../../../domain/intent.ts';
import { isTerminal } from '../../../domain/state-machine.ts';
import type { TransitionPlan } from '../../../domain/transition.ts';
import type {
  IntentReservations,
  IntentTransitions,
  NoticeReader,
  ReserveResult,
  TransitionResult,
} from '../../../ports/intent-ledger.port.ts';
import {
  channelSk,
  intentFromItem,
  intentPk,
  itemFromIntent,
  storedName,
  toStoredRecord,
} from './intent-items.ts';
import { noteFailure } from './recent-failures.ts';
import { backOff, type Item, type LedgerTableClient, RETRYABLE_CANCELLATIONS } from './table-client.ts';

/*
 * The intent rows: reserve = conditional Put, apply = conditional Update, get = GetItem,
 * getNotice = one Query of the notice's partition. Each is one request.
 */

/** Concurrent transactions on one notice's rows; past this many in a row, the caller gets the error. */
const MAX_TRANSACTION_CONFLICTS = 8;

/** Duplicate or conflict: the row that stood in the way of a reservation, compared with the request. */
function refusedReservation(existing: Intent, requested: Intent): ReserveResult {
  return isSameContent(existing, requested)
    ? { kind: 'duplicate', existing }
    : { kind: 'conflict', existing };
}

/**
 * One conditional Put. The existing row comes back with a refusal (ALL_OLD): duplicate vs
 * conflict without a read.
 */
async function reserve(table: LedgerTableClient, intent: Intent): Promise<ReserveResult> {
  const write = await table.writeIf('reserve', () =>
    table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: itemFromIntent(intent, (id) => table.shardOf(id)),
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...table.capacityOption,
      }),
    ),
  );
  if (write.kind === 'written') return { kind: 'created', intent };
  if (!write.current)
    throw new Error(`reserve of ${intent.noticeId} ${intent.channel} refused without a row`);
  return refusedReservation(intentFromItem(write.current), intent);
}

/**
 * One TransactWriteItems over the channels not yet known to exist. A cancellation names, per
 * channel, whether its condition failed (and carries the existing row, ALL_OLD); those are
 * settled as duplicate/conflict and the rest is tried again as one unit. A cancellation with
 * no failed condition is a concurrent transaction on the same rows: back off and try again.
 * A transaction costs twice the write units of a plain put, so a single channel takes `reserve`.
 */
async function reserveNotice(
  table: LedgerTableClient,
  intents: readonly Intent[],
  visible?: (existing: Intent) => boolean,
): Promise<ReserveResult[]> {
  const results: (ReserveResult | undefined)[] = intents.map(() => undefined);
  // A refusal names a row the caller may not see: nothing more is tried (no write has happened:
  // a round either writes every pending channel or, cancelled, none).
  const stopped = () =>
    visible !== undefined &&
    results.some((r) => (r?.kind === 'duplicate' || r?.kind === 'conflict') && !visible(r.existing));
  for (let conflicts = 0; ; ) {
    if (stopped()) return results.map((r) => r ?? { kind: 'skipped' });
    const pending = intents.flatMap((intent, index) => (results[index] ? [] : [{ intent, index }]));
    if (pending.length === 0) return results as ReserveResult[];
    if (pending.length === 1) {
      const only = pending[0] as { intent: Intent; index: number };
      results[only.index] = await reserve(table, only.intent);
      continue;
    }
    try {
      const out = await table.doc.send(
        new TransactWriteItemsCommand({
          // Explicit so the SDK's own retries of this call replay it instead of failing on our rows.
          ClientRequestToken: randomUUID(),
          TransactItems: pending.map(({ intent }) => ({
            Put: {
              TableName: table.tableName,
              Item: marshall(
                itemFromIntent(intent, (id) => table.shardOf(id)),
                { removeUndefinedValues: true },
              ),
              ConditionExpression: 'attribute_not_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          })),
          ...table.capacityOption,
        }),
      );
      for (const capacity of out.ConsumedCapacity ?? []) table.meter('reserve', capacity);
      for (const { intent, index } of pending) results[index] = { kind: 'created', intent };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      let settled = 0;
      (error.CancellationReasons ?? []).forEach((reason, position) => {
        const entry = pending[position];
        if (!entry || reason.Code !== 'ConditionalCheckFailed' || !reason.Item) return;
        results[entry.index] = refusedReservation(intentFromItem(unmarshall(reason.Item)), entry.intent);
        settled += 1;
      });
      table.meter('reserve', undefined);
      if (settled > 0) continue;
      const transient = (error.CancellationReasons ?? []).every((reason) =>
        RETRYABLE_CANCELLATIONS.has(reason.Code ?? 'None'),
      );
      conflicts += 1;
      if (!transient || conflicts >= MAX_TRANSACTION_CONFLICTS) throw error;
      await backOff(conflicts);
    }
  }
}

async function getIntent(
  table: LedgerTableClient,
  noticeId: string,
  channel: Channel,
): Promise<Intent | undefined> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
      // A worker deciding whether to send must see the latest committed state.
      ConsistentRead: true,
      ...table.capacityOption,
    }),
  );
  table.meter('get', out.ConsumedCapacity);
  return out.Item ? intentFromItem(out.Item) : undefined;
}

async function getNotice(table: LedgerTableClient, noticeId: string): Promise<Intent[]> {
  const out = await table.doc.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': intentPk(noticeId) },
      ConsistentRead: true,
      ...table.capacityOption,
    }),
  );
  table.meter('getNotice', out.ConsumedCapacity);
  return (out.Items ?? []).map(intentFromItem);
}

/** Rows read at once for a list (requests in flight). */
const ROWS_IN_FLIGHT = 16;

/**
 * The rows a list shows: one GetItem per row, eventually consistent (0.5 RCU per row up to 4 KB,
 * what a BatchGetItem would cost; a page has at most 200 rows), 16 at a time. GetItem keeps the
 * http function's grant as it is (no BatchGetItem).
 */
async function getRows(
  table: LedgerTableClient,
  keys: readonly { readonly noticeId: string; readonly channel: Channel }[],
): Promise<Intent[]> {
  const rows: (Intent | undefined)[] = keys.map(() => undefined);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(ROWS_IN_FLIGHT, keys.length) }, async () => {
      while (next < keys.length) {
        const index = next++;
        const key = keys[index] as (typeof keys)[number];
        const out = await table.doc.send(
          new GetCommand({
            TableName: table.tableName,
            Key: { pk: intentPk(key.noticeId), sk: channelSk(key.channel) },
            ...table.capacityOption,
          }),
        );
        table.meter('getRows', out.ConsumedCapacity);
        rows[index] = out.Item ? intentFromItem(out.Item) : undefined;
      }
    }),
  );
  return rows.filter((row): row is Intent => row !== undefined);
}

/**
 * The update a plan makes:
 *   SET  every mutable field the plan defines, transitions = list_append(transitions, [record])
 *   REMOVE every mutable field the plan clears (lease, envelope, index keys …)
 * and, on a terminal row with a retention, its TTL. Earlier records are never touched: the only
 * list operation is an append.
 */
function transitionUpdate(table: LedgerTableClient, plan: TransitionPlan) {
  const next: Item = itemFromIntent(plan.next, (id) => table.shardOf(id));
  // The index keys follow `dueAt`: set with it, removed with it; `watched` is stored as the
  // absence of `openShard` (./intent-items.ts).
  const mutable = [
    ...MUTABLE_INTENT_FIELDS.filter((field) => field !== 'watched').map(storedName),
    'openShard',
  ];
  const names: Record<string, string> = {
    '#transitions': 'transitions',
    '#state': 'state',
    '#version': 'version',
  };
  const values: Record<string, unknown> = {
    ':record': [toStoredRecord(plan.record)],
    ':expectedState': plan.expected.state,
    ':expectedVersion': plan.expected.version,
  };
  const sets = ['#transitions = list_append(#transitions, :record)'];
  const removes: string[] = [];
  for (const field of mutable) {
    names[`#${field}`] = field;
    const value = next[field];
    if (value === undefined) removes.push(`#${field}`);
    else {
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
  }
  if (isTerminal(plan.next.state) && table.retentionMs !== undefined) {
    names['#expiresAt'] = LedgerTable.ttlAttribute;
    values[':expiresAt'] = Math.ceil((plan.record.at + table.retentionMs) / 1000);
    sets.push('#expiresAt = :expiresAt');
  }
  return {
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** One conditional Update on the plan's expected state and version; a refusal returns the row as it is. */
async function apply(table: LedgerTableClient, plan: TransitionPlan): Promise<TransitionResult> {
  const write = await table.writeIf(`apply:${plan.record.to}`, () =>
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: intentPk(plan.next.noticeId), sk: channelSk(plan.next.channel) },
        ...transitionUpdate(table, plan),
        ConditionExpression: '#state = :expectedState AND #version = :expectedVersion',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        ...table.capacityOption,
      }),
    ),
  );
  if (write.kind === 'written') {
    // A channel that just failed is listed among the recent failures (./recent-failures.ts).
    if (plan.next.state === 'failed' && plan.record.from !== 'failed')
      await noteFailure(table, plan.next, plan.record.at);
    return { kind: 'applied', intent: plan.next };
  }
  return { kind: 'stale', current: write.current ? intentFromItem(write.current) : undefined };
}

/** Intake's port. */
export function dynamoDbIntentReservations(table: LedgerTableClient): IntentReservations {
  return {
    reserve: (intent) => reserve(table, intent),
    reserveNotice: (intents, visible) => reserveNotice(table, intents, visible),
  };
}

/** Claim, outcome and every other transition's port. */
export function dynamoDbIntentTransitions(table: LedgerTableClient): IntentTransitions {
  return {
    get: (noticeId, channel) => getIntent(table, noticeId, channel),
    apply: (plan) => apply(table, plan),
  };
}

/** The timeline's and a cancel's port. */
export function dynamoDbNoticeReader(table: LedgerTableClient): NoticeReader {
  return { getNotice: (noticeId) => getNotice(table, noticeId), getRows: (keys) => getRows(table, keys) };
}
