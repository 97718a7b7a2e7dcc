/**
 * The settings of watched rows (docs/table-design.md "Watched rows"): how long a row on the happy
 * path stays out of the open index, and the queue of the watches intake sends before it reserves.
 * Spread into ./settings.ts, the one vocabulary; kept here so that file stays short.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

export const INDEX_WATCH_SETTINGS = {
  INDEX_WATCH_DELAY_MS: {
    kind: 'integer',
    default: 5 * SECOND,
    deployDefault: 5 * MINUTE,
    min: 0,
    max: 15 * MINUTE,
    deployMin: MINUTE,
    description:
      'how long a row on the happy path (reserved → sending → accepted) stays out of the open index: intake ' +
      'sends a delayed message (the watch) before reserving, and the watch puts the row in if it still owes ' +
      'something then; until then it is not listed by GET /v1/notices nor counted by the gauges (any retry, ' +
      'unknown, hold or escalation puts it in at once); AWS: longer than the intake function’s timeout; 0: ' +
      'every row enters the index at intake (+4 WRU per channel)',
  },
} as const;

export const INDEX_WATCH_WIRING_SETTINGS = {
  WATCH_QUEUE_URL: {
    kind: 'text',
    description:
      'the queue of the watches intake sends before reserving (docs/table-design.md "Watched rows"); unset: ' +
      'every row enters the open index at intake',
  },
  WATCH_QUEUE_ARN: {
    kind: 'text',
    description: 'the watch queue, as IAM names it (set with its grants: intake sends, the watch consumes)',
  },
} as const;
