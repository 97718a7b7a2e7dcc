import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { ESCALATION_DETAIL_TYPE, ESCALATION_SOURCE } from '../../contract/escalations.ts';
import type { Escalation, EscalationPublisher } from '../../ports/escalation.port.ts';

export { ESCALATION_DETAIL_TYPE, ESCALATION_SOURCE };

/** Escalations as EventBridge events, for rules that page or open tickets. Contains ids and codes only. */
export class EventBridgeEscalationPublisher implements EscalationPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(escalation: Escalation): Promise<void> {
    const out = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.busName,
            Source: ESCALATION_SOURCE,
            DetailType: ESCALATION_DETAIL_TYPE,
            Time: new Date(escalation.at),
            Detail: JSON.stringify(escalation),
          },
        ],
      }),
    );
    if (out.FailedEntryCount)
      throw new Error(`EventBridge refused the escalation: ${out.Entries?.[0]?.ErrorCode}`);
  }
}

/**
 * Local stack and deployments without a bus: the escalation is one structured log line with the
 * message `escalation` and the escalation's fields beside it. The message is the logger's own
 * argument, never an attribute: `message` is a reserved key of the Powertools logger, which
 * drops it from the attributes and logs a warning line instead.
 */
export class LogEscalationPublisher implements EscalationPublisher {
  constructor(
    private readonly log: (message: 'escalation', attributes: Readonly<Record<string, unknown>>) => void,
  ) {}

  async publish(escalation: Escalation): Promise<void> {
    this.log('escalation', { ...escalation });
  }
}
