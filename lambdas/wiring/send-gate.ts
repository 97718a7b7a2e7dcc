import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbRateClock } from '../adapters/dynamodb/dynamodb-rate-clock.ts';
import { LANE_SETTINGS } from '../contract/settings.ts';
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
 * The channel sender's gate: with `<CHANNEL>_RATE_BUDGET_PER_SECOND`, the shared rate budget
 * (docs/architecture.md §11) behind the hold gate; otherwise the hold gate with the per-process
 * pace of `<CHANNEL>_SEND_RATE_PER_SECOND` (or none).
 */
export function buildSendGate(
  channel: Channel,
  config: Config,
  store: ThrottleGateStore,
  perProcessRate: number | undefined,
  /** The runtime's client (./aws-clients.ts), for the budget's clock. */
  dynamodb: DynamoDBClient,
): SendGate {
  const budgetRate = config[LANE_SETTINGS[channel].rateBudget];
  if (!budgetRate) {
    return new SharedSendGate({
      store,
      clock: systemClock,
      ...(perProcessRate ? { ratePerSecond: { [channel]: perProcessRate } } : {}),
    });
  }
  const budget = new RateBudget(
    new DynamoDbRateClock({ client: dynamodb, tableName: config.LEDGER_TABLE_NAME }),
    { [channel]: budgetRules(budgetRate, config.RATE_BUDGET_LEAD_MS) },
  );
  return new BudgetSendGate({
    holds: new SharedSendGate({ store, clock: systemClock }),
    budget,
    clock: systemClock,
    maxInlineWaitMs: config.RATE_BUDGET_MAX_WAIT_MS,
  });
}
