// Plain data (lambdas/contract): the CDK stack reads these names to build the same table.
/**
 * One table holds the ledger. Item families (see docs/table-design.md):
 *
 *   pk                    sk        what
 *   N#<noticeId>          C#email   intent for (notice, channel)
 *   S#<channel>#<fp>      S         suppression entry for a destination fingerprint
 *   G#<channel>           G         provider throttle gate (shared "slow down until")
 *   B#<batchId>           B         a provider batch call, recorded before it is made (TTL)
 *
 * The open-intent index is sparse: only unresolved intents carry `openShard` + `dueAt`.
 */
export const LedgerTable = {
  partitionKey: 'pk',
  sortKey: 'sk',
  openIndexName: 'open-due',
  openIndexPartitionKey: 'openShard',
  openIndexSortKey: 'dueAt',
  /**
   * Only attributes that never change are copied into the open index: a write that changes
   * neither the index keys nor a projected attribute costs no index write, so the claim (the
   * hot path) does not touch the index. State counts are read from the rows instead.
   */
  openIndexProjection: ['createdAt', 'deadline'],
  ttlAttribute: 'expiresAt',
} as const;
