import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC_NAMESPACE, SERVICE_NAME } from '../contract/metrics.ts';

/**
 * A line carries what changes from line to line: `level` (which Lambda's log-level filter reads),
 * `message`, `timestamp`, X-Ray's trace id when tracing is on, and the call's own attributes. Not
 * Powertools' `service` and `sampling_rate`, the same in every line of every function (the log
 * group says whose it is; no debug sampling here): 41 B of a 275 B delivery step, paid per
 * channel sent and per provider report (docs/cost.md).
 */
type FormatterInput = Parameters<LogFormatter['formatAttributes']>;

class LedgerLogFormatter extends LogFormatter {
  override formatAttributes(attributes: FormatterInput[0], additional: FormatterInput[1]): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes(additional);
  }
}

/**
 * One logger and one metrics emitter per process. Log records carry ids, states and codes;
 * never destinations, variables or rendered content (see docs/privacy.md). Process-wide
 * singletons live in the wiring, like aws-clients.ts: the handlers log and flush metrics, the
 * wiring hands the logger to what it builds, and the wiring may not import the handlers.
 */
export const logger = new Logger({ serviceName: SERVICE_NAME, logFormatter: new LedgerLogFormatter() });

export const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
