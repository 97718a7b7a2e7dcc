import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import {
  EventBridgeEscalationPublisher,
  LogEscalationPublisher,
} from '../adapters/eventbridge/escalation-publishers.ts';
import type { Config } from '../edge/config.ts';
import type { EscalationPublisher } from '../ports/escalation.port.ts';
import type { AwsClients } from './aws-clients.ts';
import { logger } from './observability.ts';

/** EventBridge when the stack gave a bus (ESCALATION_EVENT_BUS); a structured log line otherwise. */
export function buildEscalations(config: Config, clients: AwsClients): EscalationPublisher {
  return config.ESCALATION_EVENT_BUS
    ? new EventBridgeEscalationPublisher(
        clients.adopt(new EventBridgeClient({})),
        config.ESCALATION_EVENT_BUS,
      )
    : new LogEscalationPublisher((message, attributes) => logger.warn(message, attributes));
}
