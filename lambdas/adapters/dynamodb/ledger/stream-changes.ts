import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { streamLabelOf } from '../../../contract/archive.ts';
import type { ArchiveBatch, ArchiveChange } from '../../../domain/archive-record.ts';
import type { Intent } from '../../../domain/intent.ts';
import type { LedgerChange } from '../../../ports/outcome-sink.port.ts';
import { intentFromItem } from './intent-items.ts';
import { suppressionHistoryOf } from './suppressions.ts';

/** A change stream record as Lambda's DynamoDB event source (and the local one) hands it over. */
export interface StreamRecordLike {
  readonly eventName?: string | undefined;
  /** The stream's ARN (Lambda's event source sets it; the shard id is not in the record). */
  readonly eventSourceARN?: string | undefined;
  readonly dynamodb?:
    | {
        readonly Keys?: Record<string, unknown> | undefined;
        readonly OldImage?: Record<string, unknown> | undefined;
        readonly NewImage?: Record<string, unknown> | undefined;
        readonly SequenceNumber?: string | undefined;
        /** Lambda: epoch seconds; the DynamoDB Streams API (the local source): a Date. */
        readonly ApproximateCreationDateTime?: number | Date | string | undefined;
      }
    | undefined;
}

/** An intent row's key (`N#<noticeId>` / `C#<channel>`, lambdas/contract/ledger-table.ts); the other item families are not outcomes. */
function isIntentImage(image: Record<string, unknown> | undefined): boolean {
  const pk = (image?.pk as { S?: string } | undefined)?.S;
  const sk = (image?.sk as { S?: string } | undefined)?.S;
  return Boolean(pk?.startsWith('N#') && sk?.startsWith('C#'));
}

function intentOf(image: Record<string, unknown> | undefined): Intent | undefined {
  return image ? intentFromItem(unmarshall(image as Record<string, AttributeValue>)) : undefined;
}

/**
 * The ledger changes among stream records, in stream order: intent rows only (suppressions, gates,
 * budgets and batch records are the ledger's own bookkeeping), each with its position (the
 * record's sequence number, which a partial batch failure names).
 */
export function ledgerChangesOf(records: readonly StreamRecordLike[]): LedgerChange[] {
  return records.flatMap((record) => {
    const images = record.dynamodb;
    if (!images || !isIntentImage(images.NewImage ?? images.OldImage ?? images.Keys)) return [];
    return [
      {
        position: images.SequenceNumber ?? '',
        oldImage: intentOf(images.OldImage),
        newImage: intentOf(images.NewImage),
      },
    ];
  });
}

/**
 * When the record was written, epoch ms: Lambda gives epoch seconds, the Streams API a Date. A
 * record without one (no source omits it) counts as written at 0, the same on every delivery, so
 * it names the same object each time.
 */
function createdAtOf(record: StreamRecordLike): number {
  const at = record.dynamodb?.ApproximateCreationDateTime;
  if (at instanceof Date) return at.getTime();
  if (typeof at === 'number') return at < 1e11 ? Math.round(at * 1000) : at;
  if (typeof at === 'string') return Number.isNaN(Date.parse(at)) ? 0 : Date.parse(at);
  return 0;
}

function itemOf(image: Record<string, unknown> | undefined) {
  return image ? unmarshall(image as Record<string, AttributeValue>) : undefined;
}

/** What the archive keeps of one record: an intent row's change, a suppression history insert, or nothing. */
function archiveChangeOf(record: StreamRecordLike): ArchiveChange | undefined {
  const images = record.dynamodb;
  if (!images) return undefined;
  const sequence = images.SequenceNumber ?? '';
  const createdAt = createdAtOf(record);
  if (isIntentImage(images.NewImage ?? images.OldImage ?? images.Keys)) {
    return {
      family: 'intent',
      sequence,
      createdAt,
      oldImage: intentOf(images.OldImage),
      newImage: intentOf(images.NewImage),
    };
  }
  // History records are only ever inserted (their keys make a repeated fact one key).
  const history = record.eventName === 'INSERT' ? itemOf(images.NewImage) : undefined;
  const entry = history ? suppressionHistoryOf(history) : undefined;
  if (!entry) return undefined;
  return {
    family: 'suppression',
    sequence,
    createdAt,
    channel: entry.channel,
    fingerprint: entry.fingerprint,
    masked: entry.masked,
    record: entry.record,
  };
}

/**
 * A batch of stream records as the archiver takes it (lambdas/use-cases/archive-changes.ts): the
 * range it covers (its first and last records, whatever they hold) and the changes the archive
 * keeps something of; undefined for an empty batch.
 */
export function archiveBatchOf(records: readonly StreamRecordLike[]): ArchiveBatch | undefined {
  const first = records[0];
  const last = records[records.length - 1];
  if (!first || !last) return undefined;
  const position = (record: StreamRecordLike) => ({
    sequence: record.dynamodb?.SequenceNumber ?? '',
    createdAt: createdAtOf(record),
  });
  return {
    streamLabel: streamLabelOf(first.eventSourceARN),
    first: position(first),
    last: position(last),
    changes: records.flatMap((record) => archiveChangeOf(record) ?? []),
  };
}
