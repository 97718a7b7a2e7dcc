import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LedgerTable } from '../../../contract/ledger-table.ts';
import type { Channel } from '../../../domain/channel.ts';
import type { Intent } from '../../../domain/intent.ts';
import type { FailedRef, RecentFailures } from '../../../ports/recent-failures.port.ts';
import type { Item, LedgerTableClient } from './table-client.ts';

/*
 * The recent-failures list (docs/table-design.md "Recent failures"): one item per channel that
 * fails, `F#<UTC day>#<shard>` / `<failedAt, 15 digits>#<noticeId>#<channel>`, holding what the
 * open index projects for a row (so a list reads these items alone) and expiring two windows
 * after the failure. Spread over the open index's shard count, so a burst of failures does not
 * land on one partition; a list reads the window's days × shards, newest first.
 */

const DAY_MS = 86_400_000;
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

const failedPk = (day: string, bucket: number) => `F#${day}#${bucket}`;
const failedSk = (at: number, noticeId: string, channel: Channel) =>
  `${String(at).padStart(15, '0')}#${noticeId}#${channel}`;

/**
 * Lists a row that just failed (`failedAt`: the failing record's time). One PutItem after the
 * failing write, about 250 bytes (1 WCU); best effort: the ledger row is the truth, and a failure
 * whose list item could not be written is missing from the list only.
 */
export async function noteFailure(table: LedgerTableClient, row: Intent, failedAt: number): Promise<void> {
  const reason = row.transitions.at(-1)?.reason ?? 'failed';
  try {
    const out = await table.doc.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: failedPk(dayOf(failedAt), table.bucketOf(row.noticeId)),
          sk: failedSk(failedAt, row.noticeId, row.channel),
          noticeId: row.noticeId,
          channel: row.channel,
          state: 'failed',
          reason,
          failedAt,
          createdAt: row.createdAt,
          deadline: row.deadline,
          attempts: row.attempts,
          [LedgerTable.ttlAttribute]: Math.ceil((failedAt + 2 * LedgerTable.recentFailures.windowMs) / 1000),
        },
        ...table.capacityOption,
      }),
    );
    table.meter('noteFailure', out.ConsumedCapacity);
  } catch {
    // Best effort (above).
  }
}

function failedRef(item: Item): FailedRef {
  return {
    noticeId: item.noticeId as string,
    channel: item.channel as Channel,
    failedAt: item.failedAt as number,
    createdAt: item.createdAt as number,
    deadline: item.deadline as number,
    attempts: (item.attempts as number | undefined) ?? 0,
    reason: item.reason as string,
  };
}

/** Newest first within since…until: each (day, shard) partition read newest first, at most `max` each. */
async function listFailed(
  table: LedgerTableClient,
  since: number,
  until: number,
  max: number,
): Promise<FailedRef[]> {
  const days: string[] = [];
  for (let at = since; dayOf(at) <= dayOf(until); at += DAY_MS) days.push(dayOf(at));
  if (days.at(-1) !== dayOf(until)) days.push(dayOf(until));
  const found: FailedRef[] = [];
  for (const day of days) {
    for (let bucket = 0; bucket < table.openShards; bucket++) {
      let startKey: Record<string, unknown> | undefined;
      let taken = 0;
      do {
        const out = await table.doc.send(
          new QueryCommand({
            TableName: table.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :since AND :until',
            ExpressionAttributeValues: {
              ':pk': failedPk(day, bucket),
              ':since': String(since).padStart(15, '0'),
              // Every key of `until`'s millisecond sorts before this one.
              ':until': `${String(until).padStart(15, '0')}$`,
            },
            ScanIndexForward: false,
            Limit: max - taken,
            ExclusiveStartKey: startKey,
            ...table.capacityOption,
          }),
        );
        table.meter('listFailed', out.ConsumedCapacity);
        for (const item of out.Items ?? []) found.push(failedRef(item));
        taken += out.Items?.length ?? 0;
        startKey = out.LastEvaluatedKey;
      } while (startKey && taken < max);
    }
  }
  return found.sort((a, b) => b.failedAt - a.failedAt || (a.noticeId < b.noticeId ? -1 : 1)).slice(0, max);
}

export function dynamoDbRecentFailures(table: LedgerTableClient): RecentFailures {
  return { listFailed: (since, until, max) => listFailed(table, since, until, max) };
}
