import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { relayOutcomes } from '../use-cases/relay-outcomes.ts';
import { logger } from '../wiring/observability.ts';
import { getOutcomeStreamRuntime, ledgerChangesOf, type OutcomeStreamRuntime } from '../wiring/outcomes.ts';

/**
 * The ledger table's change stream → outcome events → every sink (the bus, the webhook queue).
 * A change some sink refused is answered as the batch's first failure: the event source hands it
 * and everything after it again (bisecting, within its bounded retries, then its failure
 * destination), so the events of one row never overtake each other.
 */
export function createOutcomeStreamHandler(runtime: () => Promise<OutcomeStreamRuntime>) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const { sinks } = await runtime();
    const changes = ledgerChangesOf(event.Records);
    const result = await relayOutcomes(changes, sinks);
    if (result.failedAt === undefined) {
      if (result.relayed > 0) logger.debug('outcome events relayed', { events: result.relayed });
      return { batchItemFailures: [] };
    }
    logger.error('outcome events not relayed; the change is handed again', {
      position: result.failedAt,
      relayed: result.relayed,
      error: result.error instanceof Error ? `${result.error.name}: ${result.error.message}` : 'unknown',
    });
    return { batchItemFailures: [{ itemIdentifier: result.failedAt }] };
  };
}

export const handler = createOutcomeStreamHandler(getOutcomeStreamRuntime);
