import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';

/**
 * DynamoDB's refusals for capacity (the table's or index's provisioned throughput, an on-demand
 * table's or the account's throughput quota, a hot partition). The SDK retries each of them with
 * backoff (three attempts by default) before the error reaches us.
 */
const THROTTLING_ERRORS: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/**
 * Whether an error is DynamoDB refusing a request for capacity after the SDK's own retries (and,
 * for a transaction, after the adapter's: ./ledger/table-client.ts `RETRYABLE_CANCELLATIONS`):
 * the request did nothing and may be sent again as it is, later. A transaction is throttled when
 * one of its items was and none failed otherwise (a failed condition is an answer, not capacity).
 */
export function isCapacityExceeded(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (THROTTLING_ERRORS.has(error.name)) return true;
  if (!(error instanceof TransactionCanceledException)) return false;
  const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None');
  return (
    codes.includes('ThrottlingError') && codes.every((code) => code === 'ThrottlingError' || code === 'None')
  );
}
