import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * One logger and one metrics emitter per process. Log records carry ids, states and codes;
 * never destinations, variables or rendered content (see docs/privacy.md).
 */
export const logger = new Logger({ serviceName: 'notice-ledger' });

export const metrics = new Metrics({ namespace: 'NoticeLedger', serviceName: 'notice-ledger' });
