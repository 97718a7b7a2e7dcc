// Plain data (lambdas/contract): the deployment setting `tableCapacity` (lib/config.ts), the CDK
// constructs that apply it (lib/constructs/table-capacity.ts), the local stack's CreateTable
// requests (lambdas/adapters/dynamodb/ledger-table.ts, key-table.ts) and the cost model
// (bench/cost-model.ts) read the same shape and defaults.

/**
 * How the ledger table, its open index and the key table are billed (docs/cost.md "Provisioned capacity with auto scaling"):
 * - `provisioned`: capacity units per second, scaled by Application Auto Scaling between each
 *   table's and index's `min` and `max` to keep consumption at `targetUtilizationPercent` of what
 *   is provisioned. A unit-hour costs less than the requests it can serve on demand, but a burst
 *   above the scaled capacity (and its burst allowance) is throttled until scaling catches up.
 * - `on-demand`: pay per request, no capacity to plan; for spiky or unknown load.
 */
export const CAPACITY_MODES = ['provisioned', 'on-demand'] as const;
export type CapacityMode = (typeof CAPACITY_MODES)[number];

/** Capacity units per second between which auto scaling moves one dimension. */
export interface CapacityRange {
  readonly min: number;
  readonly max: number;
}

/** Read and write ranges of one table or index. */
export interface ReadWriteRange {
  readonly read: CapacityRange;
  readonly write: CapacityRange;
}

export interface TableCapacity {
  readonly mode: CapacityMode;
  /** Application Auto Scaling's target: consumed ÷ provisioned, in percent (20–90). */
  readonly targetUtilizationPercent: number;
  /** The ledger table itself. */
  readonly ledger: ReadWriteRange;
  /** The ledger table's open-intent index (its own capacity, scaled on its own). */
  readonly openIndex: ReadWriteRange;
  /** The key table (Standard-IA: its unit-hours cost 1.25 × the ledger's). */
  readonly keyTable: ReadWriteRange;
}

/**
 * The defaults. Minimums are what an idle deployment pays for every hour (docs/cost.md "Idle")
 * and the headroom a burst meets before scaling reacts (plus up to five minutes of unused
 * capacity DynamoDB keeps as burst allowance); maximums cap the bill and are where throttling
 * starts for good. The reconciler's index queries every minute and intake's key-table Query per
 * notice are the reads an idle system still makes.
 */
export const TABLE_CAPACITY_DEFAULTS: TableCapacity = {
  mode: 'provisioned',
  targetUtilizationPercent: 70,
  ledger: { read: { min: 5, max: 4000 }, write: { min: 5, max: 4000 } },
  openIndex: { read: { min: 2, max: 1000 }, write: { min: 2, max: 4000 } },
  keyTable: { read: { min: 2, max: 2000 }, write: { min: 2, max: 2000 } },
};

/** What a CreateTable request (and the CDK table before scaling moves it) starts with: the minimums. */
export function initialThroughput(range: ReadWriteRange): {
  readonly ReadCapacityUnits: number;
  readonly WriteCapacityUnits: number;
} {
  return { ReadCapacityUnits: range.read.min, WriteCapacityUnits: range.write.min };
}
