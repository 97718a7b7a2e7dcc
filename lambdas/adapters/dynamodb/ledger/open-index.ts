import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LedgerTable } from '../../../contract/ledger-table.ts';
import type { Channel } from '../../../domain/channel.ts';
import type { IntentState } from '../../../domain/state-machine.ts';
import {
  countRefs,
  type EscalationMarkers,
  type OpenIndex,
  type OpenIntentCounts,
  type OpenIntentPage,
  type OpenIntentRef,
} from '../../../ports/open-index.port.ts';
import { channelSk, intentPk } from './intent-items.ts';
import { type Item, type LedgerTableClient, openShardKey } from './table-client.ts';

/*
 * The open-intent index (docs/table-design.md): sparse, keyed by `openShard` / `dueAt`, spread
 * over `openShards` partitions. Reads walk the shards in order; `defer` and `settleEscalation`
 * are conditional updates of the row that move or drop its index item.
 */

type PageOptions = { limit?: number; cursor?: string };

/** An open-index item (keys and the projection of LedgerTable.openIndexProjection) as a ref. */
function refFromIndexItem(item: Item): OpenIntentRef {
  return {
    noticeId: (item.pk as string).slice(2),
    channel: (item.sk as string).slice(2) as Channel,
    dueAt: item.dueAt as number,
    createdAt: item.createdAt as number,
    deadline: item.deadline as number,
    state: item.state as IntentState,
    attempts: (item.attempts as number | undefined) ?? 0,
    ...(item.escAt !== undefined ? { escalatedAt: item.escAt as number } : {}),
    ...(item.escalationPending === true ? { escalationPending: true } : {}),
    ...(item.accAt !== undefined ? { acceptedAt: item.accAt as number } : {}),
  };
}

/**
 * Walks the open-index shards in order. The cursor is `<shard>:<base64 LastEvaluatedKey>`,
 * so a caller can resume across shards without knowing they exist.
 */
async function queryOpen(
  table: LedgerTableClient,
  operation: string,
  dueBefore: number | undefined,
  options: PageOptions,
): Promise<OpenIntentPage> {
  const limit = options.limit ?? 100;
  let shard = 0;
  let startKey: Record<string, unknown> | undefined;
  if (options.cursor) {
    const [shardText, keyText] = options.cursor.split(':', 2);
    shard = Number(shardText);
    startKey = keyText ? JSON.parse(Buffer.from(keyText, 'base64url').toString('utf8')) : undefined;
  }
  const items: OpenIntentRef[] = [];
  while (shard < table.openShards && items.length < limit) {
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: LedgerTable.openIndexName,
        KeyConditionExpression:
          dueBefore === undefined ? 'openShard = :shard' : 'openShard = :shard AND dueAt <= :now',
        ExpressionAttributeValues: {
          ':shard': openShardKey(shard),
          ...(dueBefore === undefined ? {} : { ':now': dueBefore }),
        },
        Limit: limit - items.length,
        ExclusiveStartKey: startKey,
        ...table.capacityOption,
      }),
    );
    table.meter(operation, out.ConsumedCapacity);
    for (const item of out.Items ?? []) items.push(refFromIndexItem(item));
    if (out.LastEvaluatedKey) {
      startKey = out.LastEvaluatedKey;
      if (items.length >= limit) {
        return { items, cursor: `${shard}:${Buffer.from(JSON.stringify(startKey)).toString('base64url')}` };
      }
    } else {
      shard += 1;
      startKey = undefined;
    }
  }
  return { items, cursor: shard < table.openShards ? `${shard}:` : undefined };
}

/**
 * Walks the open index alone: its items project the state, so no row is read (eventually
 * consistent, like every index read: a gauge may lag a transition by a moment). Reads stay
 * proportional to the open rows.
 */
async function countOpen(table: LedgerTableClient): Promise<OpenIntentCounts> {
  const refs: OpenIntentRef[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryOpen(table, 'countOpen', undefined, {
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    refs.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return countRefs(refs);
}

async function defer(
  table: LedgerTableClient,
  noticeId: string,
  channel: Channel,
  expectedVersion: number,
  dueAt: number,
): Promise<boolean> {
  const write = await table.writeIf('defer', () =>
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
        // A watched row enters the index here: whatever defers a row looks at it again then.
        UpdateExpression: 'SET dueAt = :dueAt, openShard = :shard',
        ConditionExpression: 'version = :v AND attribute_exists(dueAt)',
        ExpressionAttributeValues: {
          ':dueAt': dueAt,
          ':v': expectedVersion,
          ':shard': table.shardOf(noticeId),
        },
        ...table.capacityOption,
      }),
    ),
  );
  return write.kind === 'written';
}

async function settleEscalation(
  table: LedgerTableClient,
  noticeId: string,
  channel: Channel,
  expectedVersion: number,
  options: { readonly keepOpen?: boolean; readonly dueAt?: number | undefined } = {},
): Promise<boolean> {
  const write = await table.writeIf('settleEscalation', () =>
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
        // A failed row leaves the open index with the marker: it has nothing left to owe. An
        // escalated `unknown` is still owed an operator's action and stays; a held channel's row
        // stays too, due when its own next step is.
        UpdateExpression:
          options.dueAt !== undefined
            ? 'SET dueAt = :due REMOVE escalationPending'
            : options.keepOpen
              ? 'REMOVE escalationPending'
              : 'REMOVE escalationPending, dueAt, openShard',
        ConditionExpression: 'version = :v AND escalationPending = :yes',
        ExpressionAttributeValues: {
          ':v': expectedVersion,
          ':yes': true,
          ...(options.dueAt === undefined ? {} : { ':due': options.dueAt }),
        },
        ...table.capacityOption,
      }),
    ),
  );
  return write.kind === 'written';
}

/** The reconciler's queries and the operators' list. */
export function dynamoDbOpenIndex(table: LedgerTableClient): OpenIndex {
  return {
    listDue: (now, options = {}) => queryOpen(table, 'listDue', now, options),
    listOpen: (options = {}) => queryOpen(table, 'listOpen', undefined, options),
    countOpen: () => countOpen(table),
    defer: (noticeId, channel, expectedVersion, dueAt) =>
      defer(table, noticeId, channel, expectedVersion, dueAt),
  };
}

/** Publishing an escalation's port: the marker it clears. */
export function dynamoDbEscalationMarkers(table: LedgerTableClient): EscalationMarkers {
  return {
    settleEscalation: (noticeId, channel, expectedVersion, options) =>
      settleEscalation(table, noticeId, channel, expectedVersion, options),
  };
}
