// Plain data (lambdas/contract): the CDK (lib/constructs/key-table.ts), the adapter
// (lambdas/adapters/dynamodb/key-records.ts) and the local stack read these names to build and use
// the same table.
/**
 * The key table (docs/archive.md "Key records"): one compact item per (notice, channel) whose row
 * resolved, kept for the archive's retention (TTL), so that a POST replayed after the hot window is
 * answered 200/409 and never sent twice, and the timeline and operators find the archived row.
 *
 *   n (noticeId)   c (channel)   s      d                 u                   r                t
 *   ntc_…          email | sms   state  content digest    submitter digest    rows/ object     expiry
 *                                      (128+ bits)       (absent: none)      (short form)     (epoch s)
 *
 * Its own table, apart from the ledger's: Standard-Infrequent-Access (storage at $0.10 instead of
 * $0.25 per GB-month) and no point-in-time recovery (another $0.20): every item is derived from a
 * `rows/` object that Object Lock keeps as long, so a lost table is rebuilt from the archive. One-
 * letter attribute names: six years of items are billed by their names too.
 */
export const KeyTable = {
  partitionKey: 'n',
  sortKey: 'c',
  /** The TTL attribute (epoch seconds): the row's resolution + ARCHIVE_RETENTION_YEARS. */
  ttlAttribute: 't',
  /** What the row resolved to: the replay's answer, the operators' `archived` state. */
  state: 's',
  /** The row's content digest, cut to `KEY_DIGEST_CHARS` (lambdas/domain/archive-record.ts). */
  contentDigest: 'd',
  /** The submitter's principal digest (lambdas/domain/caller.ts `principalDigest`); absent: no submitter. */
  submitter: 'u',
  /** The `rows/` object holding the row, in its short form (lambdas/contract/archive.ts `shortRowsObject`). */
  rowsObject: 'r',
} as const;

/**
 * The key table's name when KEY_TABLE_NAME is unset: the ledger table's name and `-keys`
 * (`notice-ledger-keys`), so that each local ledger table (tests and benchmarks name their own)
 * has its own key table. The CDK always sets KEY_TABLE_NAME.
 */
export function keyTableNameOf(ledgerTableName: string): string {
  return `${ledgerTableName}-keys`;
}
