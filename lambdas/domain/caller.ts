import type { CallerRole } from '../contract/routes.ts';
import type { Intent } from './intent.ts';

/**
 * Who is asking (docs/api.md "Callers"): the IAM principal behind the request, in normal form
 * (contract/principals.ts), and its role. The http function's edge settles both
 * (edge/caller.ts); the router refuses a role a route does not name, and what is left to the use
 * cases is which rows a caller may see.
 */
export interface Caller {
  readonly role: CallerRole;
  /** Recorded as the `submitter` of every row this caller reserves. */
  readonly principal: string;
}

/**
 * Whether `caller` may see this row, and act on it as far as its role acts at all: operators and
 * auditors every row, a submitter the rows its own principal reserved (not a row of another
 * principal, nor one recorded before submitters were: those answer as if they did not exist).
 */
export function canSee(caller: Caller, row: Pick<Intent, 'submitter'>): boolean {
  return caller.role !== 'submitter' || row.submitter === caller.principal;
}
