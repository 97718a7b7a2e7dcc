import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC_NAMESPACE, SERVICE_NAME } from '../contract/metrics.ts';

/**
 * One logger and one metrics emitter per process. Log records carry ids, states and codes;
 * never destinations, variables or rendered content (see docs/privacy.md). Process-wide
 * singletons live in the wiring, like aws-clients.ts: the handlers log and flush metrics, the
 * wiring hands the logger to what it builds, and the wiring may not import the handlers.
 */
export const logger = new Logger({ serviceName: SERVICE_NAME });

export const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
