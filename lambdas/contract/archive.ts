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
 * Key records (the key table, ./key-table.ts, kept for the archive's retention): what intake
 * needs to answer a replay of a notice whose rows left the table (a content digest, the state,
 * the submitter's digest; no history) and where its resolved rows are in the archive.
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
} as const;

/** The Glue (Hive) types the archive's columns use. */
export type ArchiveColumnType = 'string' | 'int' | 'bigint';

export interface ArchiveColumn {
  /** The JSON key of a `facts/` line and the Glue column name (snake_case). */
  readonly name: string;
  readonly type: ArchiveColumnType;
  /** The Glue column comment and docs/archive.md's table. */
  readonly comment: string;
}

/**
 * The columns of a `facts/` line, written once: the archiver writes each line field by field
 * from this list (a field not named here never reaches the archive) and the CDK declares the
 * Glue table from it. One flat object per line, denormalised so a query needs no join. Times
 * are ISO 8601 UTC strings (Athena: `from_iso8601_timestamp(at)`). A column a line has no value
 * for is absent from that line (Athena reads it as NULL).
 */
export const ARCHIVE_FACT_COLUMNS = [
  { name: 'kind', type: 'string', comment: 'transition | expired | suppression' },
  { name: 'notice_id', type: 'string', comment: 'the notice (transition, expired)' },
  { name: 'channel', type: 'string', comment: 'email | sms' },
  {
    name: 'seq',
    type: 'int',
    comment: "the transition record's number within its row (expired: the row's last)",
  },
  { name: 'at', type: 'string', comment: 'when the fact happened (ISO 8601 UTC)' },
  {
    name: 'from_state',
    type: 'string',
    comment: 'state before the transition (absent on the intake record)',
  },
  {
    name: 'to_state',
    type: 'string',
    comment: 'state after the transition (expired: the state the row left the table in)',
  },
  { name: 'reason', type: 'string', comment: "the transition's or suppression's reason code" },
  { name: 'attempt', type: 'int', comment: 'provider attempt number, where the fact belongs to one' },
  {
    name: 'detail',
    type: 'string',
    comment: 'detail code or evidence of the record (a suppression: the provider code)',
  },
  {
    name: 'actor',
    type: 'string',
    comment: 'the person or caller who wrote it (IAM principal), where one did',
  },
  { name: 'event_type', type: 'string', comment: "the notice's business event type" },
  { name: 'event_id', type: 'string', comment: "the notice's business event id" },
  { name: 'recipient_id', type: 'string', comment: "the caller's recipient id" },
  { name: 'template_id', type: 'string', comment: 'template id' },
  { name: 'template_version', type: 'string', comment: 'template version' },
  {
    name: 'dest_fingerprint',
    type: 'string',
    comment: 'keyed fingerprint of the destination (never the destination)',
  },
  { name: 'dest_masked', type: 'string', comment: 'masked destination (j***@example.com, +1******4567)' },
  { name: 'submitter', type: 'string', comment: 'IAM principal that submitted the notice' },
  { name: 'provider', type: 'string', comment: 'provider module id the row was last sent through' },
  { name: 'provider_receipt_id', type: 'string', comment: "the provider's message id" },
  { name: 'created_at', type: 'string', comment: 'when the row was reserved (ISO 8601 UTC)' },
  { name: 'deadline', type: 'string', comment: "the notice's deadline (ISO 8601 UTC)" },
  { name: 'action', type: 'string', comment: 'suppression: suppress | lift' },
  { name: 'source', type: 'string', comment: 'suppression: provider | operator' },
  { name: 'stream_sequence', type: 'string', comment: "the change stream record's sequence number" },
] as const satisfies readonly ArchiveColumn[];

export type ArchiveFactColumn = (typeof ARCHIVE_FACT_COLUMNS)[number]['name'];

/** What a fact line's `kind` says. */
export const ArchiveFactKind = {
  transition: 'transition',
  expired: 'expired',
  suppression: 'suppression',
} as const;
export type ArchiveFactKind = (typeof ArchiveFactKind)[keyof typeof ArchiveFactKind];

/**
 * Object naming. Lambda's DynamoDB stream records carry the stream ARN (`eventSourceARN`) but not
 * the shard id, so an object is named by the stream's label (the ARN's last part, a timestamp;
 * `:` dropped so the key needs no escaping) and the stream sequence number of the object's first
 * record: sequence numbers are unique within a stream, so the pair names one position, and a
 * re-created stream (a new label) never reuses a name.
 *
 *   <prefix>day=<UTC day of the first record>/<stream label>/<first sequence number>.jsonl.gz
 */
export function archiveObjectKey(
  prefix: typeof Archive.factsPrefix | typeof Archive.rowsPrefix,
  first: { readonly day: string; readonly streamLabel: string; readonly sequence: string },
): string {
  return `${prefix}${Archive.partitionKey}=${first.day}/${first.streamLabel}/${first.sequence}${Archive.objectSuffix}`;
}

const ROWS_OBJECT_HEAD = `${Archive.rowsPrefix}${Archive.partitionKey}=`;

/**
 * A `rows/` object's key as a key record keeps it: without the constant head (`rows/day=`) and
 * tail (`.jsonl.gz`), `<day>/<stream label>/<first sequence number>`; {@link rowsObjectOf} gives
 * the key back. A key of another form is kept whole (and given back whole).
 */
export function shortRowsObject(objectKey: string): string {
  return objectKey.startsWith(ROWS_OBJECT_HEAD) && objectKey.endsWith(Archive.objectSuffix)
    ? objectKey.slice(ROWS_OBJECT_HEAD.length, -Archive.objectSuffix.length)
    : objectKey;
}

/** The `rows/` object's key from its short form ({@link shortRowsObject}). */
export function rowsObjectOf(short: string): string {
  return short.startsWith(Archive.rowsPrefix) ? short : `${ROWS_OBJECT_HEAD}${short}${Archive.objectSuffix}`;
}

/** `arn:…:table/<name>/stream/2026-05-01T12:00:00.000` → `2026-05-01T120000.000`; unknown: `stream`. */
export function streamLabelOf(streamArn: string | undefined): string {
  const label = streamArn?.split('/stream/')[1];
  return label ? label.replace(/[^A-Za-z0-9.-]/g, '') : 'stream';
}
