import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  Metric,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

import {
  Metric as AppMetric,
  DEFERRAL_CAUSES,
  deferralMetric,
  METRIC_NAMESPACE,
  OPEN_STATES,
  OUTCOME_STATES,
  openMetric,
  outcomeMetric,
  SERVICE_NAME,
} from '../../lambdas/contract/metrics.ts';

/** Where the functions publish (Powertools EMF): names from lambdas/contract/metrics.ts. */
export { METRIC_NAMESPACE, OUTCOME_STATES };
export const METRIC_DIMENSIONS = { service: SERVICE_NAME } as const;

/** Unresolved states: the reconciler publishes `Open_<state>` for each, every run. */
export const UNRESOLVED_STATES = OPEN_STATES;

export interface MonitoredQueue {
  readonly label: string;
  readonly queue: IQueue;
}

export interface MonitoringProps {
  /** Key of the alarm topic (CloudWatch and EventBridge must be allowed to use it). */
  readonly topicKey: IKey;
  /** @default - no subscription */
  readonly alarmEmail?: string;
  readonly functions: Readonly<Record<string, IFunction>>;
  /** Work queues: alarm on the age of their oldest message. */
  readonly workQueues: readonly MonitoredQueue[];
  /** Dead-letter queues: alarm on any visible message. */
  readonly deadLetterQueues: readonly MonitoredQueue[];
  readonly api: IHttpApi;
  readonly oldestUnresolvedAlarmSeconds: number;
  readonly queueAgeAlarmSeconds: number;
  /** Labels (keys of `functions`) of the senders, for the throttling widget. */
  readonly senders: readonly string[];
  /**
   * Stream consumers with a bound on how far behind they may read: alarm on their IteratorAge
   * (the age of the newest record of a batch when the function gets it).
   * @default - none
   */
  readonly streamConsumers?: readonly StreamConsumer[];
  /**
   * Tables (and their indexes) whose throttled requests page when they last: auto scaling lags
   * a burst by minutes, throttling beyond that means a maximum is too low or a key is hot.
   * @default - none
   */
  readonly tables?: readonly MonitoredTable[];
}

/** A DynamoDB table whose throttled requests page: the table's and each named index's. */
export interface MonitoredTable {
  /** The alarms are `<label>ReadThrottles`, `<label>WriteThrottles`, `<label><Index>ReadThrottles` … */
  readonly label: string;
  readonly table: ITable;
  /** Global secondary indexes, by the label their alarms carry → index name. */
  readonly indexes?: Readonly<Record<string, string>>;
}

/**
 * DynamoDB's ReadThrottleEvents / WriteThrottleEvents (Sum) of a table, or of one of its global
 * secondary indexes (DynamoDB publishes them per index with the index's name as a dimension).
 */
export function throttleEvents(
  table: ITable,
  dimension: 'Read' | 'Write',
  indexName: string | undefined,
  period: Duration,
): Metric {
  return new Metric({
    namespace: 'AWS/DynamoDB',
    metricName: `${dimension}ThrottleEvents`,
    dimensionsMap: {
      TableName: table.tableName,
      ...(indexName === undefined ? {} : { GlobalSecondaryIndexName: indexName }),
    },
    statistic: 'Sum',
    period,
  });
}

export interface StreamConsumer {
  /** A key of `functions`: the alarm is `<label>IteratorAge`. */
  readonly label: string;
  readonly maxIteratorAge: Duration;
  /** What is at risk when it reads later than that (the alarm's description). */
  readonly bound: string;
}

/** How old the newest record of a stream batch was when the function got it (Maximum, ms). */
function iteratorAge(fn: IFunction, period: Duration): Metric {
  return fn.metric('IteratorAge', { statistic: 'Maximum', period });
}

/** A metric the functions publish with Powertools (dimension `service`). */
export function appMetric(
  metricName: string,
  statistic: string,
  period: Duration = Duration.minutes(5),
): Metric {
  return new Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    dimensionsMap: { ...METRIC_DIMENSIONS },
    statistic,
    period,
  });
}

/**
 * The alarm topic (KMS-encrypted, TLS-only, optional e-mail subscription), the alarms that page
 * on the ledger's health signals, and one dashboard.
 *
 * Alarms, all to the topic (alarm and OK):
 * - oldest unresolved intent age (Maximum), missing data = breaching: the reconciler publishes
 *   the gauge every run, so silence means the reconciler is not running;
 * - each work queue's ApproximateAgeOfOldestMessage; each DLQ's visible messages > 0;
 * - escalations > 0 and poison messages > 0;
 * - errors of each function; the HTTP API's 5xx, and the 500s the router answers (a function that
 *   answers 500 has not failed, so its Errors metric does not count them).
 */
/** What an alarm on one of the gauges is told (the rest is the same for every alarm). */
interface AlarmOptions {
  threshold: number;
  evaluationPeriods: number;
  treatMissingData: TreatMissingData;
  description: string;
}

export class Monitoring extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  /** Gauges a provider binding may alarm on (lib/providers/binding.ts `monitor`). */
  readonly metrics = {
    reconciliationLagSeconds: appMetric(AppMetric.reconciliationLagSeconds, 'Maximum'),
  };
  readonly #alarm: (alarmId: string, metric: IMetric, options: AlarmOptions) => Alarm;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: 'notice-ledger alarms',
      masterKey: props.topicKey,
      enforceSSL: true,
    });
    // The TLS-only topic policy replaces SNS's default one; say explicitly that this account's
    // alarms may publish (the escalation rule's permission is added by its target).
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AlarmsOfThisAccount',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': Stack.of(this).formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
        },
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.topic);

    const alarm = (alarmId: string, metric: IMetric, options: AlarmOptions): Alarm => {
      const created = new Alarm(this, alarmId, {
        metric,
        threshold: options.threshold,
        evaluationPeriods: options.evaluationPeriods,
        datapointsToAlarm: options.evaluationPeriods,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: options.treatMissingData,
        alarmDescription: options.description,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };
    this.#alarm = alarm;

    const oldestUnresolved = appMetric(AppMetric.oldestUnresolvedAgeSeconds, 'Maximum');
    alarm('OldestUnresolvedAge', oldestUnresolved, {
      threshold: props.oldestUnresolvedAlarmSeconds,
      // 15 minutes: long enough to ride out one slow reconciler run, short against a deadline.
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.BREACHING,
      description:
        'The oldest unresolved intent (reserved/sending/retry_scheduled/unknown) is too old, or the reconciler ' +
        'stopped publishing it. Runbook: docs/deploy.md "When an alarm fires".',
    });
    for (const { label, queue } of props.workQueues) {
      alarm(`${label}QueueAge`, queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' }), {
        threshold: props.queueAgeAlarmSeconds,
        evaluationPeriods: 3,
        // SQS stops reporting an idle queue: silence is health here.
        treatMissingData: TreatMissingData.NOT_BREACHING,
        description: `${label} queue: messages wait too long (senders throttled, failing or capped).`,
      });
    }
    for (const { label, queue } of props.deadLetterQueues) {
      alarm(`${label}DeadLetters`, queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }), {
        threshold: 0,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        description: `${label} dead-letter queue holds messages: inspect and redrive.`,
      });
    }
    alarm('Escalations', appMetric(AppMetric.escalations, 'Sum'), {
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        'The reconciler escalated intents (deadline exceeded, attempts exhausted, unknown past grace).',
    });
    alarm('EscalationsPending', appMetric(AppMetric.escalationsPending, 'Maximum'), {
      threshold: 0,
      // Two reconciler periods: one failed publish is retried by the next run.
      evaluationPeriods: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        'Escalations could not be published to their bus for two periods (failed rows keep a marker and the ' +
        'reconciler retries): check the escalation bus and the reconciler logs.',
    });
    // No silent waits (docs/architecture.md §4): a provider's pre-send check that keeps failing
    // holds its rows back (each waits, backing off, until its deadline fails it).
    alarm('ProviderCheckUnavailable', appMetric(deferralMetric('provider_check_unavailable'), 'Sum'), {
      threshold: 0,
      // Three periods in a row: a blip is retried within the first; a check down for 15 minutes pages.
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        "A provider's pre-send check (its suppression list) could not be answered for 15 minutes: the rows it " +
        'holds wait (provider_check_unavailable on their timelines) and fail at their deadlines. Check the ' +
        "provider's status and the sender logs.",
    });
    // Provider failover (docs/architecture.md §"Provider failover"): the rows are sent through the
    // fallback, but the primary refused our account or could not be reached: a person looks.
    alarm('ProviderFailovers', appMetric(AppMetric.providerFailovers, 'Sum'), {
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        "A channel's primary provider was unreachable or refused our account, and attempts went to its fallback " +
        '(reason failover on their timelines). Check the primary: its status page, the account, the credentials.',
    });
    alarm('PoisonMessages', appMetric(AppMetric.poisonMessages, 'Sum'), {
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        'A sender dropped a malformed queue message; the reconciler re-enqueues the intent if it is open.',
    });
    // A 500 the router answers leaves the function successful: its Errors metric never counts it
    // (an AccessDenied on the ledger, say), so the router counts it itself.
    alarm('HttpInternalErrors', appMetric(AppMetric.httpInternalErrors, 'Sum'), {
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        'The HTTP router answered 500 (an infrastructure failure: ledger, KMS, secrets, access denied); the ' +
        'function log has the error name ("http request failed").',
    });
    // Every 5xx the API answered, whatever its cause: the router's 500s, and the function failing,
    // timing out or being throttled before it could answer (API Gateway's 502/503/504).
    alarm('Api5xx', props.api.metricServerError({ statistic: 'Sum', period: Duration.minutes(5) }), {
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      description:
        'The HTTP API answered 5xx (a router 500, or a function failure, timeout or throttle API Gateway turned ' +
        'into 502/503/504): see HttpInternalErrors, the function errors and the API access log.',
    });
    for (const { label, maxIteratorAge, bound } of props.streamConsumers ?? []) {
      const fn = props.functions[label];
      if (!fn) throw new Error(`stream consumer ${label} is not one of the monitored functions`);
      alarm(`${label}IteratorAge`, iteratorAge(fn, Duration.minutes(5)), {
        threshold: maxIteratorAge.toMilliseconds(),
        evaluationPeriods: 1,
        // No invocation, no datapoint: an idle stream is no lag (a failing consumer pages by Errors).
        treatMissingData: TreatMissingData.NOT_BREACHING,
        description: `${label} reads the ledger stream more than ${maxIteratorAge.toHumanString()} behind: ${bound}.`,
      });
    }
    // Every table and index, in either capacity mode: on demand throttles too (above twice the
    // previous peak, or a hot partition). A throttled request is retried by the SDK, then by its
    // caller (intake answers 503 with Retry-After, senders' messages come back, the archiver's
    // batch is handed again: docs/cost.md "Provisioned capacity with auto scaling"), so a short throttle is expected while auto
    // scaling catches up; three periods of it is not.
    const dynamoTargets = (props.tables ?? []).flatMap(({ label, table, indexes = {} }) => [
      { label, table, indexName: undefined as string | undefined },
      ...Object.entries(indexes).map(([indexLabel, indexName]) => ({
        label: `${label}${indexLabel}`,
        table,
        indexName,
      })),
    ]);
    for (const { label, table, indexName } of dynamoTargets) {
      for (const dimension of ['Read', 'Write'] as const) {
        alarm(
          `${label}${dimension}Throttles`,
          throttleEvents(table, dimension, indexName, Duration.minutes(5)),
          {
            threshold: 0,
            // 15 minutes: longer than auto scaling takes to raise capacity after a burst.
            evaluationPeriods: 3,
            treatMissingData: TreatMissingData.NOT_BREACHING,
            description:
              `${label}: DynamoDB throttled ${dimension.toLowerCase()}s for 15 minutes (capacity at its tableCapacity ` +
              'maximum, or a hot key): raise the maximum, or switch tableCapacity.mode to on-demand. Runbook: ' +
              'docs/deploy.md "When an alarm fires".',
          },
        );
      }
    }
    for (const [label, fn] of Object.entries(props.functions)) {
      alarm(`${label}Errors`, fn.metricErrors({ statistic: 'Sum', period: Duration.minutes(5) }), {
        threshold: 0,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        description: `${label} function failed invocations (unhandled errors, timeouts).`,
      });
    }

    const minute = Duration.minutes(1);
    this.dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          '# notice-ledger\nOpen intents and their age come from the reconciler (every minute); outcomes from ' +
          'the senders. A growing `unknown` count means provider answers are missing: see the runbook.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Open intents by state',
        left: UNRESOLVED_STATES.map((s) => appMetric(openMetric(s), 'Maximum', minute).with({ label: s })),
        width: 12,
      }),
      new GraphWidget({
        title: 'Oldest unresolved intent, oldest awaiting a delivery report (s)',
        left: [oldestUnresolved.with({ period: minute, label: 'oldest unresolved' })],
        leftAnnotations: [{ value: props.oldestUnresolvedAlarmSeconds, label: 'alarm' }],
        // Accepted rows still owed a final report: events-only providers settle them by events
        // alone; others are asked after the grace (docs/architecture.md §3 "Delivery follow-up").
        right: [
          appMetric(AppMetric.oldestAwaitingReportAgeSeconds, 'Maximum', minute).with({
            label: 'oldest awaiting report',
          }),
          appMetric(AppMetric.reconciliationLagSeconds, 'Maximum', minute).with({
            label: 'reconciliation lag',
          }),
        ],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Queue age of oldest message (s)',
        left: props.workQueues.map(({ label, queue }) =>
          queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: minute, label }),
        ),
        leftAnnotations: [{ value: props.queueAgeAlarmSeconds, label: 'alarm' }],
        width: 12,
      }),
      new GraphWidget({
        title: 'Queue depth (visible) and dead letters',
        left: props.workQueues.map(({ label, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: minute, label }),
        ),
        right: props.deadLetterQueues.map(({ label, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: minute,
            label: `${label} DLQ`,
          }),
        ),
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Delivery outcomes',
        left: OUTCOME_STATES.map((s) => appMetric(outcomeMetric(s), 'Sum', minute).with({ label: s })),
        stacked: true,
        width: 12,
      }),
      new GraphWidget({
        title: 'Rows sent back without a move (per cause), re-enqueued by the reconciler',
        left: DEFERRAL_CAUSES.map((cause) =>
          appMetric(deferralMetric(cause), 'Sum', minute).with({ label: cause }),
        ),
        right: [
          appMetric(AppMetric.reconcilerReenqueued, 'Sum', minute).with({
            label: 're-enqueued (lost message)',
          }),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Throttling: retries scheduled, sender throttles',
        left: [appMetric(outcomeMetric('retry_scheduled'), 'Sum', minute).with({ label: 'retry_scheduled' })],
        right: props.senders.flatMap((label) => {
          const fn = props.functions[label];
          return fn
            ? [fn.metricThrottles({ statistic: 'Sum', period: minute, label: `${label} throttles` })]
            : [];
        }),
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new SingleValueWidget({
        title: 'Escalations / deadline-risk warnings / poison messages (24 h)',
        metrics: [
          appMetric(AppMetric.escalations, 'Sum', Duration.days(1)).with({ label: 'escalations' }),
          // Intake's warnings and the reconciler's re-check, one metric (docs/architecture.md §11).
          appMetric(AppMetric.deadlineAtRisk, 'Sum', Duration.days(1)).with({ label: 'deadline at risk' }),
          appMetric(AppMetric.poisonMessages, 'Sum', Duration.days(1)).with({ label: 'poison messages' }),
        ],
        width: 6,
      }),
      new GraphWidget({
        title: 'Function errors',
        left: Object.entries(props.functions).map(([label, fn]) =>
          fn.metricErrors({ statistic: 'Sum', period: minute, label }),
        ),
        width: 9,
      }),
      new GraphWidget({
        title: 'HTTP API',
        left: [
          props.api.metricCount({ period: minute, statistic: 'Sum', label: 'requests' }),
          props.api.metricClientError({ period: minute, statistic: 'Sum', label: '4xx' }),
          props.api.metricServerError({ period: minute, statistic: 'Sum', label: '5xx' }),
        ],
        width: 9,
      }),
    );
    if (dynamoTargets.length > 0) {
      this.dashboard.addWidgets(
        new GraphWidget({
          title: 'DynamoDB throttled requests (tables and indexes)',
          left: dynamoTargets.flatMap(({ label, table, indexName }) =>
            (['Read', 'Write'] as const).map((dimension) =>
              throttleEvents(table, dimension, indexName, minute).with({ label: `${label} ${dimension}` }),
            ),
          ),
          width: 12,
        }),
      );
    }
    const consumers = props.streamConsumers ?? [];
    if (consumers.length > 0) {
      this.dashboard.addWidgets(
        new GraphWidget({
          title: 'Ledger stream consumers: iterator age (ms)',
          left: consumers.map(({ label }) =>
            iteratorAge(props.functions[label] as IFunction, minute).with({ label }),
          ),
          leftAnnotations: consumers.map(({ label, maxIteratorAge }) => ({
            value: maxIteratorAge.toMilliseconds(),
            label: `${label} alarm`,
          })),
          width: 12,
        }),
      );
    }
  }

  /** An alarm on one of the application's gauges (missing data = the reconciler is not running). */
  alarmOnGauge(
    id: string,
    metric: IMetric,
    options: { readonly threshold: number; readonly evaluationPeriods: number; readonly description: string },
  ): Alarm {
    return this.#alarm(id, metric, { ...options, treatMissingData: TreatMissingData.BREACHING });
  }
}
