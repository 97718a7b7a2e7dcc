import { createHash } from 'node:crypto';
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

/** Characters of a principal's digest a key record keeps (base64url of SHA-256): 16, 96 bits. */
const PRINCIPAL_DIGEST_CHARS = 16;

/**
 * A principal as a key record keeps its submitter (./archive-record.ts): a short digest, so six
 * years of items do not carry a role ARN each. Unkeyed: a principal is no secret, and what it
 * guards is which caller may see a notice, which takes a second principal with the same 96 bits,
 * one that an account's administrator would have to find and name (2^96 tries).
 */
export function principalDigest(principal: string): string {
  return createHash('sha256').update(principal, 'utf8').digest('base64url').slice(0, PRINCIPAL_DIGEST_CHARS);
}

/**
 * {@link canSee} for a key record, which keeps its submitter as a digest: the same rule, the
 * caller's principal digested alike. A record without a submitter is an operator's or auditor's
 * only, as a row without one is.
 */
export function canSeeKeyRecord(
  caller: Caller,
  record: { readonly submitterDigest?: string | undefined },
): boolean {
  return (
    caller.role !== 'submitter' ||
    (record.submitterDigest !== undefined && record.submitterDigest === principalDigest(caller.principal))
  );
}
