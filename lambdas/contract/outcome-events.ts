// Plain data (lambdas/contract): the CDK stack and the runtime name outcome events the same way.

/** The `source` of every outcome event on the bus (docs/outcome-events.md). */
export const OUTCOME_EVENT_SOURCE = 'notice-ledger.outcomes';

/** The schema registry's name for the events' JSON Schema (docs/outcome-events.schema.json). */
export const OUTCOME_SCHEMA_NAME = 'notice-ledger.outcomes@OutcomeEvent';
