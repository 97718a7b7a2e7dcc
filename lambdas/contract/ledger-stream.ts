// Plain data (lambdas/contract): the CDK's event source mappings (Lambda event filtering) and the
// local stack's stream sources read these, so a consumer is handed the same records in both.
import { LedgerTable } from './ledger-table.ts';

/**
 * Which records of the ledger table's change stream a consumer is handed: those whose keys start
 * with these prefixes (and, where named, of this event). A record that passes none never invokes
 * the consumer, and its position is acknowledged with the rest.
 */
export interface LedgerStreamFilter {
  readonly eventName?: 'INSERT' | 'MODIFY' | 'REMOVE';
  readonly partitionKeyPrefix: string;
  readonly sortKeyPrefix?: string;
}

/** Each stream consumer's filters (any one passing is enough), by the item families of lambdas/contract/ledger-table.ts. */
export const LEDGER_STREAM_FILTERS = {
  /** Outcome events (docs/outcome-events.md): intent rows, every change. */
  outcomes: [{ partitionKeyPrefix: 'N#' }],
  /**
   * The archive (docs/archive.md): intent rows, every change (a REMOVE is a row leaving the hot
   * table); suppression history records as they are written. Never the archiver's own key records.
   */
  archive: [
    { partitionKeyPrefix: 'N#' },
    { eventName: 'INSERT', partitionKeyPrefix: 'S#', sortKeyPrefix: 'H#' },
  ],
} as const satisfies Readonly<Record<string, readonly LedgerStreamFilter[]>>;

/** A stream record as the filters see it (the SDK's and Lambda's records both): its event and keys. */
export interface FilteredRecord {
  readonly eventName?: string | undefined;
  readonly dynamodb?:
    | { readonly Keys?: Readonly<Record<string, { readonly S?: string | undefined }>> | undefined }
    | undefined;
}

/** Whether a record passes one of the filters (Lambda's semantics: the filters are or'ed). */
export function passesLedgerStreamFilters(
  filters: readonly LedgerStreamFilter[],
  record: FilteredRecord,
): boolean {
  const key = (name: string) => record.dynamodb?.Keys?.[name]?.S;
  return filters.some(
    (f) =>
      (f.eventName === undefined || record.eventName === f.eventName) &&
      key(LedgerTable.partitionKey)?.startsWith(f.partitionKeyPrefix) === true &&
      (f.sortKeyPrefix === undefined || key(LedgerTable.sortKey)?.startsWith(f.sortKeyPrefix) === true),
  );
}
