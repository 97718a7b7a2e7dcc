/**
 * Key check values (lambdas/domain/identity.ts `keyCheckValue`) the table records of the keys
 * it was first used with, and where those keys came from (a hint for people, never a key).
 */
export interface KeyChecks {
  readonly fingerprint?: string | undefined;
  readonly envelope?: string | undefined;
  readonly keysFrom?: string | undefined;
}

/** Every function's cold start (lambdas/wiring/ledger.ts `verifyKeys`) and the local stack's. */
export interface KeyCheckStore {
  /**
   * Records the check values this process holds where the table has none yet (the first user of
   * the table sets them), and returns what is recorded and which of `mine` differ from it.
   */
  checkKeys(
    mine: KeyChecks,
  ): Promise<{ readonly recorded: KeyChecks; readonly mismatched: readonly ('fingerprint' | 'envelope')[] }>;
}
