import { BillingMode, type Table, type TableProps } from 'aws-cdk-lib/aws-dynamodb';
import type { ReadWriteRange, TableCapacity } from '../../lambdas/contract/table-capacity.ts';

/**
 * A table's billing props in `tableCapacity`'s mode (lambdas/contract/table-capacity.ts):
 * on-demand, or provisioned starting at the minimums (auto scaling moves it from there:
 * {@link autoScale}). An index gets its own with {@link indexCapacityProps}.
 */
export function tableCapacityProps(
  capacity: TableCapacity,
  range: ReadWriteRange,
): Pick<TableProps, 'billingMode' | 'readCapacity' | 'writeCapacity'> {
  return capacity.mode === 'on-demand'
    ? { billingMode: BillingMode.PAY_PER_REQUEST }
    : { billingMode: BillingMode.PROVISIONED, ...indexCapacityProps(capacity, range) };
}

/** A global secondary index's read and write capacity (provisioned tables only; none on demand). */
export function indexCapacityProps(
  capacity: TableCapacity,
  range: ReadWriteRange,
): { readonly readCapacity?: number; readonly writeCapacity?: number } {
  return capacity.mode === 'on-demand'
    ? {}
    : { readCapacity: range.read.min, writeCapacity: range.write.min };
}

/**
 * Target-tracking auto scaling of a provisioned table's reads and writes, and of each named
 * index's: one scalable target and one policy per dimension (Application Auto Scaling, through
 * its DynamoDB service-linked role), each keeping consumption at `targetUtilizationPercent` of the
 * provisioned capacity between its range's `min` and `max`. Nothing on demand.
 *
 * Scaling follows consumption with a lag: CloudWatch's alarms need a few minutes of breaching
 * datapoints before capacity rises (and DynamoDB limits how often it may fall), so a burst
 * beyond the provisioned capacity and its burst allowance is throttled meanwhile: each path's
 * answer to that is in docs/cost.md "Provisioned capacity with auto scaling".
 */
export function autoScale(
  table: Table,
  capacity: TableCapacity,
  range: ReadWriteRange,
  indexes: Readonly<Record<string, ReadWriteRange>> = {},
): void {
  if (capacity.mode === 'on-demand') return;
  const target = { targetUtilizationPercent: capacity.targetUtilizationPercent };
  const bounds = (r: ReadWriteRange['read']) => ({ minCapacity: r.min, maxCapacity: r.max });
  table.autoScaleReadCapacity(bounds(range.read)).scaleOnUtilization(target);
  table.autoScaleWriteCapacity(bounds(range.write)).scaleOnUtilization(target);
  for (const [indexName, indexRange] of Object.entries(indexes)) {
    table
      .autoScaleGlobalSecondaryIndexReadCapacity(indexName, bounds(indexRange.read))
      .scaleOnUtilization(target);
    table
      .autoScaleGlobalSecondaryIndexWriteCapacity(indexName, bounds(indexRange.write))
      .scaleOnUtilization(target);
  }
}
