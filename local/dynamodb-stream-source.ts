/**
 * Plays Lambda's DynamoDB Streams event-source mapping for one stream (DynamoDB Local's): reads
 * every shard in order (parents before children), hands records to the handler as a
 * `DynamoDBStreamEvent` (Lambda's shape: `ApproximateCreationDateTime` in epoch seconds), and
 * checkpoints after each batch the handler took. Records are gathered up to `batchSize` or for at
 * most `maxBatchingWindowMs` (Lambda's MaximumBatchingWindowInSeconds), whichever comes first. A
 * batch answered with `batchItemFailures` is read again from the first failed record, after a
 * back-off, bisected as Lambda's `BisectBatchOnFunctionError` does when `bisectOnError` is set; after
 * `retryAttempts` the failing records go to the on-failure destination (their positions, as Lambda
 * sends them) and the source moves on. Several sources may read one stream, each with its own
 * checkpoint, as several mappings do.
 *
 * The checkpoint (last sequence number per shard, shards finished) is a file in the data dir,
 * written after the batch, so a kill -9 between the handler and the write hands that batch again
 * on restart: at least once, as in AWS. A new stream starts from its TRIM_HORIZON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { JsonFileState } from './json-file-state.ts';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamSourceOptions {
  readonly client: DynamoDBStreamsClient;
  readonly streamArn: string;
  readonly region: string;
  readonly handler: StreamHandler;
  /** Where the checkpoint is kept. */
  readonly checkpointFile: string;
  /** What a batch that failed `retryAttempts` times is sent to (Lambda's on-failure destination). */
  readonly onFailure: (failure: {
    streamArn: string;
    shardId: string;
    first: string;
    last: string;
    records: number;
  }) => Promise<void>;
  readonly log: (line: string) => void;
  /** Its log lines start with it, e.g. `outcome stream`. */
  readonly name: string;
  /** @default 100 */
  readonly batchSize?: number;
  /** How long records are gathered before a batch smaller than `batchSize` is handed over. @default 0 */
  readonly maxBatchingWindowMs?: number;
  /** Lambda's BisectBatchOnFunctionError. @default true */
  readonly bisectOnError?: boolean;
  /** -1: retried until it is taken, as Lambda's -1. @default 10 */
  readonly retryAttempts?: number;
  /**
   * The mapping's event filter (Lambda's FilterCriteria, as a predicate on the record): records it
   * refuses are never handed over, and the checkpoint moves past them.
   */
  readonly filter?: (record: _Record) => boolean;
  /** An idle shard is read again after this long. @default 250 */
  readonly pollIntervalMs?: number;
}

export interface StreamSource {
  stop(): Promise<void>;
  /** Records handed to the handler so far (retries included). */
  readonly delivered: () => number;
}

interface Checkpoint {
  readonly streamArn: string;
  /** Per shard: the sequence number of the last record the handler took. */
  readonly positions: Record<string, string>;
  readonly finished: string[];
}

const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 5_000;

export function startStreamSource(options: StreamSourceOptions): StreamSource {
  const batchSize = options.batchSize ?? 100;
  const windowMs = options.maxBatchingWindowMs ?? 0;
  const bisect = options.bisectOnError ?? true;
  const retryAttempts = options.retryAttempts ?? 10;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const state = new JsonFileState<Checkpoint>(options.checkpointFile, () => ({
    streamArn: options.streamArn,
    positions: {},
    finished: [],
  }));
  const write = (next: Checkpoint) => {
    state.value = next;
    state.save();
  };
  const stopController = new AbortController();
  let delivered = 0;

  const pause = async (ms: number) => {
    try {
      await sleep(ms, undefined, { signal: stopController.signal });
    } catch {
      // Stopping.
    }
  };

  function checkpoint(): Checkpoint {
    const current = state.value;
    // Another stream (the table was made anew): its positions mean nothing here.
    if (current.streamArn !== options.streamArn) {
      const fresh = { streamArn: options.streamArn, positions: {}, finished: [] };
      write(fresh);
      return fresh;
    }
    return current;
  }

  async function shards(): Promise<Shard[]> {
    const all: Shard[] = [];
    let start: string | undefined;
    do {
      const out = await options.client.send(
        new DescribeStreamCommand({ StreamArn: options.streamArn, ExclusiveStartShardId: start }),
      );
      all.push(...(out.StreamDescription?.Shards ?? []));
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return all;
  }

  async function iterator(shardId: string, after: string | undefined): Promise<string | undefined> {
    try {
      const out = await options.client.send(
        new GetShardIteratorCommand({
          StreamArn: options.streamArn,
          ShardId: shardId,
          ...(after
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      return out.ShardIterator;
    } catch (error) {
      // Past the stream's retention: what is left starts at its horizon.
      if (error instanceof TrimmedDataAccessException && after) return iterator(shardId, undefined);
      throw error;
    }
  }

  function eventOf(records: readonly _Record[]): DynamoDBStreamEvent {
    return {
      Records: records.map(
        (r) =>
          ({
            eventID: r.eventID,
            eventName: r.eventName,
            eventVersion: r.eventVersion,
            eventSource: 'aws:dynamodb',
            awsRegion: options.region,
            eventSourceARN: options.streamArn,
            dynamodb: {
              ...r.dynamodb,
              // The Streams API answers a Date; Lambda hands the function epoch seconds.
              ...(r.dynamodb?.ApproximateCreationDateTime
                ? {
                    ApproximateCreationDateTime: Math.floor(
                      r.dynamodb.ApproximateCreationDateTime.getTime() / 1000,
                    ),
                  }
                : {}),
            },
          }) as DynamoDBRecord,
      ),
    };
  }

  /**
   * Hands `records` to the handler until every one is taken or has exhausted its retries;
   * answers the sequence number of the last record done with (taken or sent to the destination).
   */
  async function deliver(shardId: string, records: readonly _Record[]): Promise<void> {
    let pending = [...records];
    let failures = 0;
    while (pending.length > 0 && !stopController.signal.aborted) {
      // Bisect on error: after a failure, half of what is left, as Lambda does; without it, all of it again.
      const size =
        failures === 0 || !bisect ? pending.length : Math.max(1, Math.ceil(pending.length / 2 ** failures));
      const batch = pending.slice(0, size);
      delivered += batch.length;
      let failedAt: number;
      try {
        const answer = await options.handler(eventOf(batch));
        const first = answer?.batchItemFailures?.[0]?.itemIdentifier;
        failedAt = first === undefined ? -1 : batch.findIndex((r) => r.dynamodb?.SequenceNumber === first);
        if (first !== undefined && failedAt < 0) failedAt = 0;
      } catch (error) {
        options.log(`${options.name}: handler failed: ${error instanceof Error ? error.name : 'Error'}`);
        failedAt = 0;
      }
      const done = failedAt < 0 ? batch : batch.slice(0, failedAt);
      if (done.length > 0) {
        await advance(shardId, done[done.length - 1]?.dynamodb?.SequenceNumber);
        pending = pending.slice(done.length);
        failures = 0;
        continue;
      }
      failures += 1;
      if (retryAttempts >= 0 && failures > retryAttempts) {
        const lost = batch;
        await options.onFailure({
          streamArn: options.streamArn,
          shardId,
          first: lost[0]?.dynamodb?.SequenceNumber ?? '',
          last: lost[lost.length - 1]?.dynamodb?.SequenceNumber ?? '',
          records: lost.length,
        });
        options.log(`${options.name}: ${lost.length} record(s) sent to the on-failure destination`);
        await advance(shardId, lost[lost.length - 1]?.dynamodb?.SequenceNumber);
        pending = pending.slice(lost.length);
        failures = 0;
        continue;
      }
      await pause(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** failures));
    }
  }

  async function advance(shardId: string, sequence: string | undefined): Promise<void> {
    if (!sequence) return;
    const current = checkpoint();
    write({ ...current, positions: { ...current.positions, [shardId]: sequence } });
  }

  async function finish(shardId: string): Promise<void> {
    const current = checkpoint();
    if (!current.finished.includes(shardId)) write({ ...current, finished: [...current.finished, shardId] });
  }

  /**
   * Reads one shard until it is closed (answers true) or idle with nothing gathered (false). What
   * is gathered and not yet handed over is read again from the checkpoint after a stop or a restart.
   */
  async function readShard(shard: Shard, position: string | undefined): Promise<boolean> {
    const shardId = shard.ShardId as string;
    let it = await iterator(shardId, position);
    let gathered: _Record[] = [];
    let windowEndsAt = 0;
    /** The last record read, handed over or filtered out: with nothing gathered, the checkpoint may move to it. */
    let lastRead = position;
    while (it && !stopController.signal.aborted) {
      let out: Awaited<ReturnType<typeof getRecords>>;
      try {
        out = await getRecords(it);
      } catch (error) {
        if (error instanceof ExpiredIteratorException) return false;
        throw error;
      }
      const read = out.Records ?? [];
      const records = options.filter ? read.filter(options.filter) : read;
      if (gathered.length === 0 && records.length > 0) windowEndsAt = Date.now() + windowMs;
      gathered.push(...records);
      lastRead = read[read.length - 1]?.dynamodb?.SequenceNumber ?? lastRead;
      const closed = !out.NextShardIterator;
      while (
        gathered.length >= batchSize ||
        (gathered.length > 0 && (closed || Date.now() >= windowEndsAt))
      ) {
        await deliver(shardId, gathered.slice(0, batchSize));
        gathered = gathered.slice(batchSize);
        if (stopController.signal.aborted) return false;
        if (gathered.length > 0) windowEndsAt = Date.now() + windowMs;
      }
      if (gathered.length === 0 && lastRead !== undefined && lastRead !== checkpoint().positions[shardId]) {
        // Everything read is handed over or filtered out: the filtered-out tail is done with too.
        await advance(shardId, lastRead);
      }
      if (closed) return true;
      if (read.length === 0) {
        if (gathered.length === 0) return false;
        await pause(Math.max(0, Math.min(pollIntervalMs, windowEndsAt - Date.now())));
      }
      it = out.NextShardIterator;
    }
    return false;
  }

  const getRecords = (it: string) =>
    options.client.send(new GetRecordsCommand({ ShardIterator: it, Limit: 1000 }));

  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopController.signal.aborted) {
      try {
        const cp = checkpoint();
        const all = await shards();
        const finished = new Set(cp.finished);
        const known = new Set(all.map((s) => s.ShardId));
        // A shard is read once its parent is done (or gone from the stream's retention).
        const ready = all.filter(
          (s) =>
            !finished.has(s.ShardId as string) &&
            (!s.ParentShardId || finished.has(s.ParentShardId) || !known.has(s.ParentShardId)),
        );
        let progressed = false;
        for (const shard of ready) {
          const closed = await readShard(shard, cp.positions[shard.ShardId as string]);
          if (closed) {
            await finish(shard.ShardId as string);
            progressed = true;
          }
        }
        failures = 0;
        if (!progressed) await pause(pollIntervalMs);
      } catch (error) {
        failures += 1;
        if (failures === 1 || failures % 20 === 0) {
          options.log(
            `${options.name}: reading failed (${failures}×): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          );
        }
        await pause(Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures, 5)));
      }
    }
  }

  const running = loop();
  return {
    async stop() {
      stopController.abort();
      await running;
    },
    delivered: () => delivered,
  };
}
