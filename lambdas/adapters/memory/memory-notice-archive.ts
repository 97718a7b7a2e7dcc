import { Archive } from '../../contract/archive.ts';
import { archivedIntentOf, keyRecordOf } from '../../domain/archive-record.ts';
import type { Channel } from '../../domain/channel.ts';
import type { Intent } from '../../domain/intent.ts';
import { isTerminal } from '../../domain/state-machine.ts';
import type {
  ArchivedIntent,
  ArchivedRowReader,
  KeyRecord,
  KeyRecordReader,
} from '../../ports/notice-archive.port.ts';

const key = (noticeId: string, channel: Channel) => `${noticeId}|${channel}`;

/**
 * The archive's read side in process, holding what the archiver leaves behind for a resolved row
 * (lambdas/contract/archive.ts): the row in a `rows/` object, then its key record. For unit tests
 * of use cases only; the S3 and DynamoDB readers are proven against the local stack.
 */
export class MemoryNoticeArchive implements KeyRecordReader, ArchivedRowReader {
  /** Per `noticeId|channel`: the key record, rewritten (as the archiver's UpdateItem SET is) on a later change. */
  readonly keyRecords = new Map<string, KeyRecord>();
  /** Per object key: its rows, in the order written. */
  readonly objects = new Map<string, ArchivedIntent[]>();
  /** Requests answered, as the real readers would make them (one Query, one GetObject). */
  readonly requests = { keyRecordQueries: 0, objectReads: 0 };
  private written = 0;

  /**
   * What the archiver does for a change that leaves `row` resolved: the row into a new `rows/`
   * object (of the day of its last record), then its key record pointing there.
   */
  archive(row: Intent): KeyRecord {
    if (!isTerminal(row.state))
      throw new Error(`${row.noticeId} ${row.channel} is ${row.state}: not resolved`);
    const day = new Date(row.transitions.at(-1)?.at ?? row.createdAt).toISOString().slice(0, 10);
    this.written += 1;
    const objectKey = `${Archive.rowsPrefix}${Archive.partitionKey}=${day}/memory/${this.written}${Archive.objectSuffix}`;
    const archived = archivedIntentOf(row);
    this.objects.set(objectKey, [archived]);
    const record = keyRecordOf(archived, objectKey);
    this.keyRecords.set(key(row.noticeId, row.channel), record);
    return record;
  }

  async keyRecordsOf(noticeId: string): Promise<readonly KeyRecord[]> {
    this.requests.keyRecordQueries += 1;
    return [...this.keyRecords.values()]
      .filter((record) => record.noticeId === noticeId)
      .sort((a, b) => a.channel.localeCompare(b.channel));
  }

  async archivedRow(
    objectKey: string,
    noticeId: string,
    channel: Channel,
  ): Promise<ArchivedIntent | undefined> {
    this.requests.objectReads += 1;
    return this.objects.get(objectKey)?.find((row) => row.noticeId === noticeId && row.channel === channel);
  }
}
