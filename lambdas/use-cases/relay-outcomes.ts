import { type OutcomeEvent, outcomeEventsOf } from '../domain/outcome-event.ts';
import type { LedgerChange, OutcomeSink } from '../ports/outcome-sink.port.ts';

export interface RelayResult {
  /** Events handed to every sink. */
  readonly relayed: number;
  /**
   * The first change some sink did not take: it and every later change of the batch are handed
   * again (a stream consumer's partial-batch answer), so no change's events overtake an earlier one's.
   */
  readonly failedAt?: string | undefined;
  readonly error?: unknown;
}

/**
 * Relays the outcome events of a batch of ledger changes, in stream order, to every sink. At least
 * once: a change whose events some sink refused is reported (`failedAt`) and handed again whole, to
 * every sink; ids are deterministic, so a receiver recognises what it already has.
 */
export async function relayOutcomes(
  changes: readonly LedgerChange[],
  sinks: readonly OutcomeSink[],
): Promise<RelayResult> {
  let relayed = 0;
  for (const change of changes) {
    const events: OutcomeEvent[] = outcomeEventsOf(change.oldImage, change.newImage);
    if (events.length === 0) continue;
    try {
      for (const sink of sinks) await sink.publish(events);
    } catch (error) {
      return { relayed, failedAt: change.position, error };
    }
    relayed += events.length;
  }
  return { relayed };
}
