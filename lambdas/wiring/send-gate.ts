import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbRateClock } from '../adapters/dynamodb/dynamodb-rate-clock.ts';
import { CHANNEL_SETTINGS } from '../contract/settings.ts';
import type { Channel } from '../domain/channel.ts';
import { budgetRules } from '../domain/rate-budget.ts';
import type { Config } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { SendGate } from '../ports/send-gate.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';
import { BudgetSendGate } from '../use-cases/budget-send-gate.ts';
import { RateBudget } from '../use-cases/rate-budget.ts';
import { SharedSendGate } from '../use-cases/shared-send-gate.ts';

/**
 * The channel sender's gate: the hold gate (a 429's "slow down", an operator hold) and, with a
 * known `<CHANNEL>_SEND_RATE_PER_SECOND`, the channel's shared rate budget behind it
 * (docs/architecture.md §11); without one, the hold gate alone.
 */
export function buildSendGate(
  channel: Channel,
  config: Config,
  store: ThrottleGateStore,
  /** The runtime's client (./aws-clients.ts), for the budget's clock. */
  dynamodb: DynamoDBClient,
): SendGate {
  const holds = new SharedSendGate({ store, clock: systemClock });
  const rate = config[CHANNEL_SETTINGS[channel].sendRate];
  if (!rate) return holds;
  const budget = new RateBudget(
    new DynamoDbRateClock({ client: dynamodb, tableName: config.LEDGER_TABLE_NAME }),
    { [channel]: budgetRules(rate, config.RATE_BUDGET_LEAD_MS) },
  );
  return new BudgetSendGate({
    holds,
    budget,
    clock: systemClock,
    maxInlineWaitMs: config.RATE_BUDGET_MAX_WAIT_MS,
  });
}
