// Plain data (lambdas/contract): the CDK stack reads these names to build the same table.
/**
 * One table holds the ledger. Item families (see docs/table-design.md):
 *
 *   pk                    sk        what
 *   N#<noticeId>          C#email   intent for (notice, channel)
 *   S#<channel>#<fp>      S         suppression entry for a destination fingerprint
 *   G#<channel>           G         provider throttle gate (shared "slow down until")
 *   P#<channel>           P         shared rate budget: the clock tokens are booked on (docs/architecture.md §11)
 *   B#<batchId>           B         a provider batch call, recorded before it is made (TTL)
 *   F#<day>#<shard>       <at>#…    a channel that failed: the recent-failures list (TTL)
 *
 * Key records (a settled channel's, for the archive's retention) are in a table of their own:
 * ./key-table.ts. The open-intent index is sparse: only unresolved intents carry `openShard` + `dueAt`.
 */
export const LedgerTable = {
  partitionKey: 'pk',
  sortKey: 'sk',
  openIndexName: 'open-due',
  openIndexPartitionKey: 'openShard',
  openIndexSortKey: 'dueAt',
  /**
   * What the open index carries besides its keys and the table's: enough to list, count and
   * gauge open rows from the index alone (GET /v1/notices, the reconciler's gauges), never
   * reading the rows. `state` and `attempts` change on the claim, so the claim writes the index
   * too: one more index write unit per attempt (docs/table-design.md "Open index projection").
   * `escAt` and `escalationPending` exist only on escalated rows, `accAt` (acceptance time) only
   * on `accepted` rows, which stay in the index while they await a final delivery report.
   */
  openIndexProjection: ['createdAt', 'deadline', 'state', 'attempts', 'escAt', 'escalationPending', 'accAt'],
  ttlAttribute: 'expiresAt',
  /**
   * The recent-failures list (`GET /v1/notices?state=failed`, the console): one small item per
   * channel that fails, `F#<UTC day>#<shard>` / `<failedAt, 15 digits>#<noticeId>#<channel>`,
   * written after the failing transition and expiring two windows later (docs/table-design.md
   * "Recent failures"). A list reads at most `max` of them, the newest, within `windowMs`.
   */
  recentFailures: { windowMs: 24 * 3_600_000, max: 1000 },
} as const;
