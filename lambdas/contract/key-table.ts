// Plain data (lambdas/contract): the CDK (lib/constructs/key-table.ts), the adapter
// (lambdas/adapters/dynamodb/key-records.ts) and the local stack read these names to build and use
// the same table.
/**
 * The key table (docs/archive.md "Key records"): the compact key record of every (notice, channel)
 * whose row resolved, kept for the archive's retention, so that a POST replayed after the hot
 * window is answered 200/409 and never sent twice, and the timeline and operators find the
 * archived row.
 *
 * Records are **packed**: an item is a bucket (`b`, the notice id's first KEY_BUCKET_CHARS
 * characters after `ntc_`) holding one attribute per record, named by the rest of the notice id
 * and a channel letter, its value the record's fields in one string:
 *
 *   b (bucket)   t (TTL, epoch s)   <rest of id><e|s> = "<state> <digest> <submitter|-> <rows/ object> <expiry>"
 *
 * DynamoDB bills every item 100 bytes on top of its own for storage; a record in an item of its
 * own paid those 100 bytes, its keys and its names for six years, more than its content. Packed,
 * a bucket's records share them (KEY_BUCKET_CHARS sized so that a bucket stays near 1 KB: one
 * write unit per record, half a read unit per look-up).
 *
 * Its own table, apart from the ledger's: Standard-Infrequent-Access (storage at $0.10 instead of
 * $0.25 per GB-month) and no point-in-time recovery (another $0.20): every record is derived from
 * a `rows/` object that Object Lock keeps as long, so a lost table is rebuilt from the archive.
 */
export const KeyTable = {
  partitionKey: 'b',
  /**
   * The TTL attribute (epoch seconds): the latest expiry of the bucket's records (each the row's
   * resolution + ARCHIVE_RETENTION_YEARS), so an item outlives every record it holds; a record
   * past its own expiry is removed from a bucket that is written again.
   */
  ttlAttribute: 't',
} as const;

/** The letter a record's attribute name ends with: its channel. */
export const KEY_RECORD_CHANNEL_LETTER = { email: 'e', sms: 's' } as const;

/**
 * The key table's name when KEY_TABLE_NAME is unset: the ledger table's name and `-keys`
 * (`notice-ledger-keys`), so that each local ledger table (tests and benchmarks name their own)
 * has its own key table. The CDK always sets KEY_TABLE_NAME.
 */
export function keyTableNameOf(ledgerTableName: string): string {
  return `${ledgerTableName}-keys`;
}
