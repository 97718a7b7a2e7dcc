import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { OUTCOME_EVENT_SOURCE } from '../../contract/outcome-events.ts';
import type { OutcomeEvent } from '../../domain/outcome-event.ts';
import type { OutcomeSink } from '../../ports/outcome-sink.port.ts';

/** PutEvents takes at most ten entries per call. */
const ENTRIES_PER_CALL = 10;

/**
 * Outcome events on an EventBridge bus: source `notice-ledger.outcomes`, detail-type the event's
 * type, detail the whole event (its id included), for the business systems' own rules. An entry
 * the bus refused fails the change, which the stream hands again (every entry of it, again).
 */
export class EventBridgeOutcomeSink implements OutcomeSink {
  readonly name = 'event-bus';

  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(events: readonly OutcomeEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
      const chunk = events.slice(i, i + ENTRIES_PER_CALL);
      const out = await this.client.send(
        new PutEventsCommand({
          Entries: chunk.map((event) => ({
            EventBusName: this.busName,
            Source: OUTCOME_EVENT_SOURCE,
            DetailType: event.type,
            Time: new Date(event.timestamp),
            Detail: JSON.stringify(event),
          })),
        }),
      );
      if (out.FailedEntryCount) {
        const code = out.Entries?.find((e) => e.ErrorCode)?.ErrorCode;
        throw new Error(`EventBridge refused ${out.FailedEntryCount} outcome event(s): ${code}`);
      }
    }
  }
}
