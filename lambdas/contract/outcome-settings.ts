/**
 * The settings of outcome events (docs/outcome-events.md): what the operator chooses (where the
 * signed webhooks go, their retry schedule and timeout, an event bus of their own) and what the
 * stack wires (the bus the stream consumer publishes to, the webhook queue, the signing secret, the
 * table's stream). Spread into ./settings.ts, the one vocabulary; kept here so that file stays short.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The default retry schedule of a webhook that was not answered with a 2xx: the delays after the
 * first attempt, as Standard Webhooks senders use (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): 27 h
 * 35 min in all, then the dead-letter queue and its alarm.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
] as const;

/** The shortest a deployment's schedule may last in all (issue 23: at least a day of retries). */
export const MIN_DEPLOYED_RETRY_SPAN_MS = 24 * HOUR;

/** The longest one retry delay of a deployment may be (a day: the whole schedule is at least that). */
export const MAX_WEBHOOK_RETRY_DELAY_MS = 24 * HOUR;

export const OUTCOME_SETTINGS = {
  OUTCOME_WEBHOOK_URL: {
    kind: 'url',
    description:
      'where every outcome event is POSTed as a signed Standard Webhook (docs/outcome-events.md); unset: no ' +
      'webhooks (the events still go to the bus). AWS: an https URL; the signing secret is the ' +
      'OutcomeWebhookSecretArn secret',
  },
  OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS: {
    kind: 'list',
    default: DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS.join(','),
    description:
      'comma-separated delays (ms) before each retry of a webhook not answered with a 2xx; after the last the ' +
      'event is dead-lettered (alarm). AWS: each at most 24 h, at least 24 h in all',
  },
  OUTCOME_WEBHOOK_TIMEOUT_MS: {
    kind: 'integer',
    default: 10 * SECOND,
    min: 1,
    max: 5 * MINUTE,
    deployMin: SECOND,
    deployMax: MINUTE,
    description: 'how long one webhook POST may take; expiry counts as a failed attempt (retried)',
  },
  OUTCOME_EVENT_BUS_NAME: {
    kind: 'text',
    description:
      'an existing EventBridge bus (name) the outcome events go to; unset: a bus of the stack’s own ' +
      '(OutcomeEventBusName output)',
  },
} as const;

export const OUTCOME_WIRING_SETTINGS = {
  OUTCOME_EVENT_BUS: {
    kind: 'text',
    description:
      'the bus the stream consumer puts outcome events on; locally the bus stand-in’s (unset: none)',
  },
  OUTCOME_WEBHOOK_QUEUE_URL: {
    kind: 'text',
    description: 'the queue of outcome events owed to OUTCOME_WEBHOOK_URL (the signing sender consumes it)',
  },
  OUTCOME_WEBHOOK_DLQ_URL: {
    kind: 'text',
    description: 'where the signing sender puts a webhook whose retry schedule is spent (alarm)',
  },
  OUTCOME_WEBHOOK_DLQ_ARN: {
    kind: 'text',
    description: 'the webhook dead-letter queue, as IAM names it (set with its grant)',
  },
  OUTCOME_WEBHOOK_QUEUE_ARN: {
    kind: 'text',
    description: 'the webhook queue, as IAM names it (set with its grants)',
  },
  OUTCOME_WEBHOOK_SECRET: {
    kind: 'text',
    description:
      'local: the Standard Webhooks signing secret(s), `whsec_` + base64, comma-separated during a rotation ' +
      '(every one signs); AWS: OUTCOME_WEBHOOK_SECRET_ARN',
  },
  OUTCOME_WEBHOOK_SECRET_ARN: {
    kind: 'text',
    description: 'Secrets Manager secret `{ "secrets": "whsec_…[,whsec_…]" }` the signing sender reads',
  },
  LEDGER_TABLE_STREAM_ARN: {
    kind: 'text',
    description: 'the ledger table’s change stream the outcome consumer reads (its event source)',
  },
} as const;
