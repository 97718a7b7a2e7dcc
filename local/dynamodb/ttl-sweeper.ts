/**
 * DynamoDB's Time to Live, which DynamoDB Local does not run: it keeps a table's TTL setting and
 * never deletes an item for it. The sweeper plays the service's part: every `intervalMs` one scan
 * finds the items whose TTL attribute is past, and each is deleted with a condition on that same
 * value (an item whose TTL moved since the scan stays), so the table's change stream carries a
 * REMOVE with the item's old image, as AWS's TTL writes one. AWS deletes within days of expiry;
 * the sweeper within one interval.
 *
 * As AWS reads the attribute: a Number, epoch seconds, expired once below the current time; a
 * value more than five years in the past is ignored (AWS: "items with an expiration time older
 * than five years … are not deleted"), and an item without it, or with another type, never
 * expires. The deletes are DynamoDB's own, so no role's IAM policy is checked for them.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { type PeriodicTask, startPeriodicTask } from '../periodic-task.ts';

export interface TtlSweeperOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The table's key attributes (partition key, and sort key when it has one). */
  readonly keyAttributes: readonly string[];
  /** The table's TTL attribute (epoch seconds). */
  readonly ttlAttribute: string;
  readonly intervalMs: number;
  readonly log: (line: string) => void;
  readonly now?: () => number;
}

export interface TtlSweeper {
  /** Items deleted so far. */
  deleted(): number;
  stop(): Promise<void>;
}

/** AWS leaves alone items whose expiry is more than five years in the past. */
const IGNORED_AFTER_S = 5 * 365 * 86_400;
const DELETES_IN_FLIGHT = 16;
const STOP_GRACE_MS = 5_000;

export function startTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  let deleted = 0;
  let failures = 0;
  const task: PeriodicTask = startPeriodicTask({
    intervalMs: options.intervalMs,
    firstRunAfterMs: options.intervalMs,
    run: async () => {
      deleted += await sweepExpired(options);
      failures = 0;
    },
    onError: (error) => {
      failures += 1;
      // A DynamoDB Local that is still starting or already stopping: said once, then every 30th time.
      if (failures === 1 || failures % 30 === 0) {
        options.log(
          `TTL: sweep of ${options.tableName} failed (${failures}×): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
      }
    },
  });
  return { deleted: () => deleted, stop: () => task.stop(STOP_GRACE_MS) };
}

/** One pass: deletes every item expired now (and still carrying the TTL value the scan saw); answers how many. */
export async function sweepExpired(options: Omit<TtlSweeperOptions, 'intervalMs' | 'log'>): Promise<number> {
  const nowS = Math.floor((options.now ?? Date.now)() / 1000);
  const names = Object.fromEntries(options.keyAttributes.map((attribute, i) => [`#k${i}`, attribute]));
  let deleted = 0;
  let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const page = await options.client.send(
      new ScanCommand({
        TableName: options.tableName,
        ProjectionExpression: [...Object.keys(names), '#ttl'].join(', '),
        FilterExpression: '#ttl < :now AND #ttl >= :oldest',
        ExpressionAttributeNames: { ...names, '#ttl': options.ttlAttribute },
        ExpressionAttributeValues: {
          ':now': { N: String(nowS) },
          ':oldest': { N: String(nowS - IGNORED_AFTER_S) },
        },
        ExclusiveStartKey: start,
      }),
    );
    const items = page.Items ?? [];
    for (let i = 0; i < items.length; i += DELETES_IN_FLIGHT) {
      const results = await Promise.all(
        items.slice(i, i + DELETES_IN_FLIGHT).map(async (item) => {
          try {
            await options.client.send(
              new DeleteItemCommand({
                TableName: options.tableName,
                Key: Object.fromEntries(options.keyAttributes.map((a) => [a, item[a] as never])),
                ConditionExpression: '#ttl = :seen',
                ExpressionAttributeNames: { '#ttl': options.ttlAttribute },
                ExpressionAttributeValues: { ':seen': item[options.ttlAttribute] as never },
              }),
            );
            return 1;
          } catch (error) {
            // Written since the scan (a new TTL, or gone): not this pass's to delete.
            if (error instanceof ConditionalCheckFailedException) return 0;
            throw error;
          }
        }),
      );
      deleted += results.reduce((a: number, b) => a + b, 0);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}
