import { Token } from 'aws-cdk-lib';
import {
  ApplicationLogLevel,
  type FunctionOptions,
  LoggingFormat,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { RegionInfo } from 'aws-cdk-lib/region-info';

/**
 * How a function's log lines reach CloudWatch Logs:
 *  - `advanced`: Lambda's advanced logging controls. JSON log format, system log level WARN
 *    (Lambda's own START, END and REPORT lines, about 300 B per invocation, are not written; a
 *    platform warning or error still is, e.g. a timeout or an out-of-memory exit), application
 *    log level {@link APPLICATION_LOG_LEVEL}, which Lambda filters on each line's `level` and
 *    hands the function as AWS_LAMBDA_LOG_LEVEL, the level Powertools' Logger then takes (it
 *    prefers that variable to every other setting). What REPORT said per invocation (duration,
 *    memory) is in Lambda's own metrics instead: Duration, Errors, Throttles, ConcurrentExecutions
 *    (docs/deploy.md "Logs").
 *  - `text`: Lambda's plain-text format with its platform lines, where the controls are not
 *    offered; the level is POWERTOOLS_LOG_LEVEL.
 */
export type FunctionLogging = 'advanced' | 'text';

/**
 * The functions' application log level, the one source whichever way it reaches Powertools
 * (AWS_LAMBDA_LOG_LEVEL from the logging configuration, else POWERTOOLS_LOG_LEVEL). INFO and not
 * less: Powertools' EMF metric lines carry no `level`, which Lambda reads as INFO, so a WARN
 * filter would drop every custom metric with the routine lines.
 */
export const APPLICATION_LOG_LEVEL = 'INFO' as const;

/**
 * Where the controls are, decided here only:
 *  - an unresolved (token) Region, the environment-agnostic synth (`cdk deploy` always resolves
 *    one, lib/app.ts), gets `text`: that template must deploy in every partition;
 *  - the commercial partition (`aws`) gets `advanced`: the Lambda developer guide names no Region
 *    without them (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html);
 *  - every other partition `text`: AWS GovCloud (US) has no JSON log format, without which there
 *    are no log levels ("JSON log formatting is not available",
 *    https://docs.aws.amazon.com/govcloud-us/latest/UserGuide/govcloud-lambda.html); for the
 *    China and isolated Regions no AWS page we found says they have them, and the China Regions
 *    are no target of this stack (its e-mail provider's service is not offered there:
 *    lib/deploy-check.ts). CloudFormation's schema accepts LoggingConfig in every Region, so
 *    cfn-lint cannot tell; a deploy there would fail, hence the conservative default.
 */
export function functionLogging(region: string): FunctionLogging {
  if (Token.isUnresolved(region)) return 'text';
  return RegionInfo.get(region).partition === 'aws' ? 'advanced' : 'text';
}

/** The function properties and the environment that go with a way of logging. */
export function functionLoggingProps(logging: FunctionLogging): {
  readonly props: Pick<FunctionOptions, 'loggingFormat' | 'systemLogLevelV2' | 'applicationLogLevelV2'>;
  readonly environment: Readonly<Record<string, string>>;
} {
  if (logging === 'text') return { props: {}, environment: { POWERTOOLS_LOG_LEVEL: APPLICATION_LOG_LEVEL } };
  return {
    props: {
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: SystemLogLevel.WARN,
      applicationLogLevelV2: ApplicationLogLevel[APPLICATION_LOG_LEVEL],
    },
    // No POWERTOOLS_LOG_LEVEL: Lambda's AWS_LAMBDA_LOG_LEVEL is the level (a second one could only disagree).
    environment: {},
  };
}
