// Plain data (lambdas/contract): the archiver, the archive reader, the CDK (bucket, Glue table)
// and the local stack read these names; docs/archive.md describes the format.
/**
 * The write-once audit archive (issue 22). The ledger table's change stream feeds one archiver
 * function, which writes batched, gzip'd JSON Lines objects into an S3 bucket with Object Lock
 * (compliance mode):
 *
 *   facts/day=<UTC day>/<stream shard id>/<first sequence number>.jsonl.gz
 *       one line per fact of a row (each transition record, a row leaving the hot table), each
 *       fact once: the Athena table `facts` (Glue, partition projection on `day`);
 *   rows/day=<UTC day>/<stream shard id>/<first sequence number>.jsonl.gz
 *       one line per row that a change left resolved: the row as the table held it (no sealed
 *       envelope, no lease, no index keys), what `GET /v1/notices/{id}` answers from after the
 *       hot window (`"source": "archive"`).
 *
 * `day` is the UTC day of the batch's first change (its stream record's creation time); an
 * object's name is fixed by the first stream record it holds, and its user metadata
 * `last-sequence` names the last one, so a batch handed again finds what it already wrote and
 * writes only what is missing (never two copies of a fact).
 *
 * Key records (`K#<noticeId>` / `C#<channel>` in the ledger table, kept for the archive's
 * retention): what intake needs to answer a replay of a notice whose rows left the table
 * (digests, ids, state; no history) and where its resolved rows are in the archive.
 */
export const Archive = {
  factsPrefix: 'facts/',
  rowsPrefix: 'rows/',
  /** Hive-style partition key of both prefixes: `facts/day=2027-03-01/…`. */
  partitionKey: 'day',
  objectSuffix: '.jsonl.gz',
  /** S3 user metadata (`x-amz-meta-last-sequence`): the stream sequence number of the object's last record. */
  lastSequenceMetadata: 'last-sequence',
  glueDatabase: 'notice_ledger_archive',
  glueFactsTable: 'facts',
  /** The first day the Glue table's partition projection enumerates. */
  firstDay: '2026-01-01',
  keyRecordPartitionPrefix: 'K#',
} as const;

// TEMPORARY (helper C): the archiver's helper (A) defines the column list here; taken from A at merge.
export const ARCHIVE_FACT_COLUMNS = [
  { name: 'kind', type: 'string' },
  { name: 'notice_id', type: 'string' },
  { name: 'channel', type: 'string' },
  { name: 'seq', type: 'int' },
  { name: 'at', type: 'string' },
  { name: 'from_state', type: 'string' },
  { name: 'to_state', type: 'string' },
  { name: 'reason', type: 'string' },
  { name: 'attempt', type: 'int' },
  { name: 'detail', type: 'string' },
  { name: 'actor', type: 'string' },
  { name: 'event_type', type: 'string' },
  { name: 'event_id', type: 'string' },
  { name: 'recipient_id', type: 'string' },
  { name: 'template_id', type: 'string' },
  { name: 'template_version', type: 'string' },
  { name: 'dest_fingerprint', type: 'string' },
  { name: 'dest_masked', type: 'string' },
  { name: 'submitter', type: 'string' },
  { name: 'provider', type: 'string' },
  { name: 'provider_receipt_id', type: 'string' },
  { name: 'created_at', type: 'string' },
  { name: 'deadline', type: 'string' },
  { name: 'stream_sequence', type: 'string' },
] as const;
