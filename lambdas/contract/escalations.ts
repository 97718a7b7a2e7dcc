/**
 * Escalation events on their bus, written once: the runtime publishes them
 * (lambdas/adapters/eventbridge/escalation-publishers.ts) and the CDK rule forwards them to the
 * alarm topic (lib/constructs/escalations.ts). Detail: ids and codes only.
 */
export const ESCALATION_SOURCE = 'notice-ledger';
export const ESCALATION_DETAIL_TYPE = 'Notice Escalated';
