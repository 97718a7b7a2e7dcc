import { decideFallback, planFallback } from '../domain/fallback.ts';
import type { Intent } from '../domain/intent.ts';
import type { IntentReservations, IntentTransitions } from '../ports/intent-ledger.port.ts';
import { type IntentQueue, laneRef } from '../ports/intent-queue.port.ts';
import type { Dependencies } from './dependencies.ts';

/** What firing a fallback needs: the row's ledger and the conditional reserve of the other channel. */
export type FallbackDependencies = Pick<Dependencies, 'clock' | 'timing' | 'sendWindows'> & {
  readonly store: IntentTransitions & Pick<IntentReservations, 'reserve'>;
  /**
   * Only where the caller may enqueue to every channel (the reconciler: its own queue). Elsewhere (a channel's
   * sender, inbound provider events) the reserved row is due at once and the reconciler's next run
   * enqueues it: within RECONCILE_INTERVAL_MS.
   */
  readonly fallbackQueue?: Pick<IntentQueue, 'enqueue'> | undefined;
};

export type FallbackOutcome =
  /** Nothing owed now (none, delivered, not yet due, an attempt in flight). */
  | { readonly kind: 'none'; readonly row: Intent }
  /** The other channel is reserved (`created`: by this call) and the first row records it. */
  | { readonly kind: 'fired'; readonly row: Intent; readonly created: boolean }
  /** The first row moved meanwhile; the reserve stands, the record is written on the next look. */
  | { readonly kind: 'raced'; readonly row: Intent };

/**
 * The channel fallback (docs/architecture.md §12), when the row owes it now: reserve the `to`
 * channel first — the ledger's conditional put, so of any number of redeliveries, crashes and
 * concurrent callers exactly one creates it — then record it on the first row, which ends the
 * pending fallback. A crash between the two leaves the first row due with its fallback pending:
 * the next look meets the reserved row (`duplicate`) and writes the record. Called on every
 * transition (`applyAndFollowUp`), every provider report and every reconciler look at a due row.
 */
export async function followFallback(row: Intent, deps: FallbackDependencies): Promise<FallbackOutcome> {
  const now = deps.clock.now();
  const decision = decideFallback(row, now);
  if (decision.kind !== 'fire') return { kind: 'none', row };
  const plan = planFallback(row, decision.evidence, now, deps.timing, {
    enqueued: deps.fallbackQueue !== undefined,
    windows: deps.sendWindows,
  });
  if (!plan) return { kind: 'none', row };
  const reserved = await deps.store.reserve(plan.reserve);
  const created = reserved.kind === 'created';
  // A row held for its send window is enqueued by the reconciler when the window opens.
  if (created && deps.fallbackQueue && plan.reserve.notBefore === undefined) {
    // A lost message costs a reconciler interval, not the send: the row is due now.
    await deps.fallbackQueue.enqueue([laneRef(plan.reserve)]).catch(() => undefined);
  }
  const applied = await deps.store.apply(plan.record);
  if (applied.kind === 'stale') return { kind: 'raced', row: applied.current ?? row };
  return { kind: 'fired', row: applied.intent, created };
}
