import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { EventSourceMapping, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LEDGER_STREAM_FILTERS } from '../../lambdas/contract/ledger-stream.ts';
import { acknowledge } from '../nag.ts';
import type { ArchiveBucket } from './archive-bucket.ts';
import type { KeyTable } from './key-table.ts';
import { LedgerTable } from './ledger-table.ts';
import type { NoticeFunction } from './notice-function.ts';

export interface LedgerArchiverProps {
  readonly ledger: LedgerTable;
  readonly archive: ArchiveBucket;
  /** Where the archiver writes key records (lib/constructs/key-table.ts). */
  readonly keyTable: KeyTable;
  /** The archiver function (FUNCTIONS.archiver): the stream's second consumer. */
  readonly archiver: NoticeFunction;
}

/**
 * How the archiver reads the ledger table's change stream (docs/archive.md). Every fact must be
 * archived within 15 minutes of its change: a batch is gathered for at most five minutes.
 */
export const ARCHIVER_STREAM = {
  /**
   * As many changes as DynamoDB Streams hands at once (10 000; Lambda's 6 MB payload caps it
   * first, about 2 000 changes of ~1 KB rows with both images): at volume each object then holds
   * some 400 rows, above Glacier Instant Retrieval's 128 KB billed minimum, and each PUT (the
   * archive's dearest request) carries more (bench/cost-model.ts, docs/cost.md).
   */
  batchSize: 10_000,
  maxBatchingWindow: Duration.minutes(5),
  /**
   * Retried until it succeeds (-1), but a batch older than this is given up to the failure queue:
   * half the stream's 24-hour retention, so that the changes queued behind a batch that cannot
   * be archived are still in the stream when it is given up, and the given-up range can still be
   * read from the stream (its positions are in the failure message) for the other half.
   */
  retryAttempts: -1,
  maxRecordAge: Duration.hours(12),
  /** The archive's bound (15 minutes) is at risk when the records read are older than this. */
  iteratorAgeAlarm: Duration.minutes(10),
} as const;

/**
 * The archive's feed: the ledger table's change stream (NEW_AND_OLD_IMAGES, the stream the
 * outcome events also read) → the archiver → the archive bucket, with its failure queue.
 *
 * The event source:
 * - only the item families that hold facts (lambdas/contract/ledger-stream.ts): intent rows,
 *   every change; suppression history records, as they are written. The rest (gates, budgets,
 *   batch records, the failures list) never invokes it;
 * - NO bisecting on error, one batch per shard at a time: a batch always starts at the shard's
 *   checkpoint (the first record not yet acknowledged, partial batch responses included), so a
 *   batch handed again starts with the same record, and the object named after that record
 *   (lambdas/contract/archive.ts) tells exactly what was already written. A bisected half would
 *   start elsewhere and write its records a second time under another name;
 * - retried without limit up to {@link ARCHIVER_STREAM}.maxRecordAge, then the batch's stream
 *   positions go to the failure queue (its alarm pages; so do IteratorAge and Errors before).
 *
 * Grants (the function's one managed policy): the three stream reads and the table key through
 * DynamoDB; the archive's prefixes (NoticeFunction.bindArchive); UpdateItem on the key table
 * only (nothing of the ledger table: the archiver writes no item there); SendMessage to its
 * failure queue (the on-failure destination).
 */
export class LedgerArchiver extends Construct {
  /** Stream batches given up after {@link ARCHIVER_STREAM}.maxRecordAge: their positions, for a replay. */
  readonly failureQueue: Queue;
  readonly eventSource: EventSourceMapping;

  constructor(scope: Construct, id: string, props: LedgerArchiverProps) {
    super(scope, id);
    const { ledger, archive, keyTable, archiver } = props;

    this.failureQueue = new Queue(this, 'Failures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(this.failureQueue, {
      rule: 'AwsSolutions-SQS3',
      reason:
        "It is the archiver's on-failure destination: a dead-letter queue itself, holding the stream positions " +
        'of batches given up after 12 hours of retries, watched by the ArchiverDeadLetters alarm.',
    });

    archiver.bindLedgerStream(ledger);
    archiver.bindArchive(archive, 'write');
    // Key records (puts, 25 a request: lambdas/adapters/dynamodb/key-records.ts) in their own
    // table: the archiver reads nothing of either table and writes nothing to the ledger's.
    archiver.bindKeyTable(keyTable, 'write');

    const { batchSize, maxBatchingWindow, retryAttempts, maxRecordAge } = ARCHIVER_STREAM;
    this.eventSource = new EventSourceMapping(this, 'StreamSource', {
      target: archiver.function,
      eventSourceArn: ledger.streamArn,
      // A first deploy archives what the stream still holds (24 hours).
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize,
      maxBatchingWindow,
      // Never: the dedup needs every batch to start at the checkpoint (see above).
      bisectBatchOnError: false,
      parallelizationFactor: 1,
      retryAttempts,
      maxRecordAge,
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(this.failureQueue),
      filters: LedgerTable.streamFilterCriteria(LEDGER_STREAM_FILTERS.archive),
    });
  }
}
