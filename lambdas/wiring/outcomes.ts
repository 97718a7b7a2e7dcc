import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeOutcomeSink } from '../adapters/eventbridge/outcome-bus.ts';
import { secretJsonReader } from '../adapters/secrets/secrets-manager.ts';
import { SqsWebhookQueue } from '../adapters/sqs/outcome-webhook-queue.ts';
import { StandardWebhookPoster } from '../adapters/webhooks/standard-webhook-poster.ts';
import { ConfigError } from '../contract/config-error.ts';
import { type Config, readConfig } from '../edge/config.ts';
import type { OutcomeSink } from '../ports/outcome-sink.port.ts';
import { awsClientAdopter } from './aws-clients.ts';
import { once } from './once.ts';

export { ledgerChangesOf } from '../adapters/dynamodb/ledger/stream-changes.ts';

/**
 * The sinks of the outcome stream consumer, in the order each change's events go to them: the
 * bus (when the stack gave one, OUTCOME_EVENT_BUS), then the webhook queue (when a webhook URL is
 * configured and the stack wired its queue). The archive is the stream's other consumer
 * (./archive.ts): it batches differently and must never bisect, so it is no sink here.
 */
export function outcomeSinks(config: Config, adopt = awsClientAdopter('outcomeStream')): OutcomeSink[] {
  const sinks: OutcomeSink[] = [];
  if (config.OUTCOME_EVENT_BUS) {
    sinks.push(new EventBridgeOutcomeSink(adopt(new EventBridgeClient({})), config.OUTCOME_EVENT_BUS));
  }
  if (config.OUTCOME_WEBHOOK_URL && config.OUTCOME_WEBHOOK_QUEUE_URL) {
    sinks.push(new SqsWebhookQueue(adopt(new SQSClient({})), config.OUTCOME_WEBHOOK_QUEUE_URL));
  }
  return sinks;
}

export interface OutcomeStreamRuntime {
  readonly sinks: readonly OutcomeSink[];
}

export const getOutcomeStreamRuntime = once(
  async (): Promise<OutcomeStreamRuntime> => ({ sinks: outcomeSinks(readConfig(process.env)) }),
);

/** OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS, as whole milliseconds. */
export function webhookRetrySchedule(config: Pick<Config, 'OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS'>): number[] {
  return config.OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS.map((entry) => {
    const ms = Number(entry);
    if (!Number.isInteger(ms) || ms < 0) {
      throw new ConfigError(
        'invalid configuration: OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS must list whole milliseconds, comma-separated',
      );
    }
    return ms;
  });
}

/** `whsec_…[,whsec_…]`: every secret of a rotation signs. */
export function signingSecrets(value: string | undefined, variable: string): string[] {
  const secrets = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (secrets.length === 0 || secrets.some((s) => !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s))) {
    throw new ConfigError(
      `invalid configuration: ${variable} must hold one or more Standard Webhooks secrets (whsec_ + base64), comma-separated`,
    );
  }
  return secrets;
}

export interface OutcomeWebhooksRuntime {
  readonly queue: SqsWebhookQueue;
  readonly poster: StandardWebhookPoster;
  readonly schedule: readonly number[];
}

/**
 * The signing sender: the webhook queue (to hide a message until its retry), the poster with the
 * secrets (OUTCOME_WEBHOOK_SECRET_ARN in AWS, read once per cold start; OUTCOME_WEBHOOK_SECRET
 * locally) and the retry schedule.
 */
export async function buildOutcomeWebhooksRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<OutcomeWebhooksRuntime> {
  const config = readConfig(env);
  const adopt = awsClientAdopter('outcomeWebhooks');
  if (!config.OUTCOME_WEBHOOK_URL || !config.OUTCOME_WEBHOOK_QUEUE_URL) {
    throw new ConfigError(
      'invalid configuration: the webhook sender needs OUTCOME_WEBHOOK_URL and its queue',
    );
  }
  const secretText = config.OUTCOME_WEBHOOK_SECRET_ARN
    ? (await secretJsonReader(adopt)(config.OUTCOME_WEBHOOK_SECRET_ARN, 'OUTCOME_WEBHOOK_SECRET_ARN')).secrets
    : config.OUTCOME_WEBHOOK_SECRET;
  const variable = config.OUTCOME_WEBHOOK_SECRET_ARN
    ? 'OUTCOME_WEBHOOK_SECRET_ARN'
    : 'OUTCOME_WEBHOOK_SECRET';
  return {
    queue: new SqsWebhookQueue(
      adopt(new SQSClient({})),
      config.OUTCOME_WEBHOOK_QUEUE_URL,
      config.OUTCOME_WEBHOOK_DLQ_URL,
    ),
    poster: new StandardWebhookPoster({
      url: config.OUTCOME_WEBHOOK_URL,
      secrets: signingSecrets(typeof secretText === 'string' ? secretText : undefined, variable),
      timeoutMs: config.OUTCOME_WEBHOOK_TIMEOUT_MS,
    }),
    schedule: webhookRetrySchedule(config),
  };
}

export const getOutcomeWebhooksRuntime = once(() => buildOutcomeWebhooksRuntime());
