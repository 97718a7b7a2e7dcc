import { createHash, randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConditionalCheckFailedException,
  type ConsumedCapacity,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

export interface LedgerTableOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * How many partitions the open index is spread over. One GSI partition key takes about
   * 1000 writes/s; every unresolved write lands on the index, so a busy ledger needs several.
   * @default 4
   */
  readonly openShards?: number;
  /** Terminal rows get a TTL this far in the future; undefined keeps them forever. */
  readonly retentionMs?: number;
  /** Called with the capacity each request consumed (benchmarks, cost reports). */
  readonly onConsumedCapacity?: (operation: string, capacity: ConsumedCapacity | undefined) => void;
}

/** An item as the document client reads and writes it. */
export type Item = Record<string, unknown>;

/** What a conditional write came to: written, or refused with the item as it stood (when asked for). */
export type ConditionalWrite =
  | { readonly kind: 'written' }
  | { readonly kind: 'refused'; readonly current: Item | undefined };

/** Transaction cancellation codes worth another try; anything else (validation, size limits) is a bug to surface. */
export const RETRYABLE_CANCELLATIONS: ReadonlySet<string> = new Set([
  'None',
  'TransactionConflict',
  'ThrottlingError',
]);

/** A jittered pause, growing with each race lost, before a transaction is tried again. */
export function backOff(racesLost: number): Promise<void> {
  return sleep(randomInt(5, 20 * 2 ** Math.min(racesLost, 5)));
}

/**
 * The ledger table as every part of the DynamoDB adapter reaches it (./intents.ts,
 * ./open-index.ts, ./suppressions.ts, ./throttle-gate.ts, ./batch-records.ts, ./key-checks.ts):
 * one document client, the table's name, the open index's shards, the retention of terminal
 * rows and the capacity meter.
 */
export class LedgerTableClient {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly openShards: number;
  readonly retentionMs: number | undefined;
  private readonly onConsumedCapacity: LedgerTableOptions['onConsumedCapacity'];

  constructor(options: LedgerTableOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.tableName = options.tableName;
    this.openShards = options.openShards ?? 4;
    this.retentionMs = options.retentionMs;
    this.onConsumedCapacity = options.onConsumedCapacity;
  }

  /** The open-index partition a row's index item lands in (docs/table-design.md). */
  shardOf(noticeId: string): string {
    return openShardKey(this.bucketOf(noticeId));
  }

  /** Which of the `openShards` partitions a notice's items spread over land in. */
  bucketOf(noticeId: string): number {
    return createHash('sha256').update(noticeId).digest().readUInt32BE(0) % this.openShards;
  }

  meter(operation: string, capacity: ConsumedCapacity | undefined): void {
    this.onConsumedCapacity?.(operation, capacity);
  }

  /** Asks DynamoDB for the consumed capacity only when someone meters it. */
  get capacityOption() {
    return this.onConsumedCapacity ? ({ ReturnConsumedCapacity: 'TOTAL' } as const) : {};
  }

  /**
   * A conditional write answered as a value, never as an error: `written`, or `refused` with the
   * item as it stands when the write asked for it (`ReturnValuesOnConditionCheckFailure:
   * ALL_OLD`). Both are metered; a refused write still costs a write unit, though the exception
   * carries no capacity figure.
   */
  async writeIf(
    operation: string,
    send: () => Promise<{ readonly ConsumedCapacity?: ConsumedCapacity | undefined }>,
  ): Promise<ConditionalWrite> {
    try {
      const out = await send();
      this.meter(operation, out.ConsumedCapacity);
      return { kind: 'written' };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.meter(operation, undefined);
      return { kind: 'refused', current: error.Item ? unmarshall(error.Item) : undefined };
    }
  }
}

/** The partition key of open-index shard `bucket`. */
export function openShardKey(bucket: number): string {
  return `open#${bucket}`;
}
