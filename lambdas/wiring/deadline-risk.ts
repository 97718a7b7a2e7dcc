import { DynamoDbRateClock } from '../adapters/dynamodb/dynamodb-rate-clock.ts';
import { SqsBacklogProbe } from '../adapters/sqs/sqs-backlog-probe.ts';
import { CHANNEL_SETTINGS } from '../contract/settings.ts';
import { CHANNELS, type Channel } from '../domain/channel.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import { budgetRules } from '../domain/rate-budget.ts';
import type { Config } from '../edge/config.ts';
import type { EscalationPublisher } from '../ports/escalation.port.ts';
import type { DeadlineRiskDependencies } from '../use-cases/deadline-risk.ts';
import type { AwsClients } from './aws-clients.ts';
import { buildEscalations } from './escalations.ts';
import { channelQueueUrls, laneQueues } from './queue.ts';

/**
 * Intake's estimates (docs/architecture.md §11): for the channels with a shared rate budget
 * (a known `<CHANNEL>_SEND_RATE_PER_SECOND`), the lane queues' backlog and the budget's clock, and
 * the escalation publisher for the warnings (the runtime's own when it has one). Nothing when no
 * channel has one.
 */
export function buildDeadlineRisk(
  config: Config,
  clients: AwsClients,
  escalations?: EscalationPublisher,
): DeadlineRiskDependencies {
  const rates: Partial<Record<Channel, number>> = {};
  for (const channel of CHANNELS) {
    const rate = config[CHANNEL_SETTINGS[channel].sendRate];
    if (rate) rates[channel] = rate;
  }
  if (Object.keys(rates).length === 0) return {};
  const leads = budgetRules(1, config.RATE_BUDGET_LEAD_MS).leadUs;
  return {
    backlog: new SqsBacklogProbe({
      sqs: clients.sqs,
      queueUrls: channelQueueUrls(config),
      laneUrls: laneQueues(config, 'queueUrls'),
      ratePerSecond: rates,
      clock: new DynamoDbRateClock({ client: clients.dynamodb, tableName: config.LEDGER_TABLE_NAME }),
    }),
    escalations: escalations ?? buildEscalations(config, clients),
    laneLeadMs: Object.fromEntries(PRIORITIES.map((p) => [p, leads[p] / 1000])) as Record<Priority, number>,
  };
}
