import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { ChannelSettings, NoticeLedgerConfig } from '../config.ts';
import { Escalations } from '../constructs/escalations.ts';
import { IntakeApi } from '../constructs/intake-api.ts';
import { Monitoring } from '../constructs/monitoring.ts';
import { NoticeFunction, type NoticeFunctionProps } from '../constructs/notice-function.ts';
import { ReconcilerSchedule } from '../constructs/reconciler-schedule.ts';
import { SesEvents } from '../constructs/ses-events.ts';
import { acknowledge } from '../nag.ts';
import type { StatefulStack } from './stateful-stack.ts';

export interface DeliveryStackProps extends StackProps {
  readonly config: NoticeLedgerConfig;
  readonly stateful: StatefulStack;
}

/**
 * The stateless half: the five functions, the HTTP API, the SQS event sources, the reconciler
 * schedule, SES event routing, escalations, alarms and the dashboard. It holds no data of its
 * own (log groups excepted, which are retained), so it can be destroyed and redeployed at will.
 *
 * Who may do what (least privilege, each function its own role and managed policy):
 *
 * | function    | ledger table                              | queues        | envelope key    | secrets            | other |
 * |-------------|-------------------------------------------|---------------|-----------------|--------------------|-------|
 * | http        | Put/Get/Query/Update/Delete item          | send both     | GenerateDataKey | fingerprint, Twilio | — |
 * | send-email  | Get/Update item                           | own: consume+send | Decrypt     | fingerprint        | ses:SendEmail, scheduler, escalations |
 * | send-sms    | Get/Update item                           | own: consume+send | Decrypt     | fingerprint, Twilio | scheduler, escalations |
 * | reconciler  | Get/BatchGet/Update item, Query open index | send both    | Decrypt         | fingerprint, Twilio | scheduler, escalations |
 * | ses-events  | Get/Update/Put item (suppressions)        | —             | —               | fingerprint        | — |
 */
export class DeliveryStack extends Stack {
  readonly functions: {
    readonly http: NoticeFunction;
    readonly sendEmail: NoticeFunction;
    readonly sendSms: NoticeFunction;
    readonly reconciler: NoticeFunction;
    readonly sesEvents: NoticeFunction;
  };
  readonly api: IntakeApi;
  readonly sesEvents: SesEvents;
  readonly escalations: Escalations;
  readonly monitoring: Monitoring;
  /** The origin providers call back (PUBLIC_BASE_URL). */
  readonly publicBaseUrl: string;

  constructor(scope: Construct, id: string, props: DeliveryStackProps) {
    super(scope, id, props);
    const { config, stateful } = props;
    // Every permission on stateful resources is written on this side (principal policies), so
    // the dependency runs one way: delivery → stateful.
    this.addStackDependency(stateful);
    const { keys, ledger, queues, retryScheduler, secrets } = stateful;
    const rt = config.runtime;

    const environment: Record<string, string> = {
      EMAIL_PROVIDER: 'ses',
      SMS_PROVIDER: 'twilio',
      PROVIDER_TIMEOUT_MS: String(rt.providerTimeoutMs),
      SEND_LEASE_MS: String(rt.sendLeaseMs),
      RECONCILE_INTERVAL_MS: String(rt.reconcileIntervalMinutes * 60_000),
      UNKNOWN_GRACE_MS: String(rt.unknownGraceMs),
      UNKNOWN_POLICY: rt.unknownPolicy,
      RETRY_BASE_MS: String(rt.retryBaseMs),
      RETRY_CAP_MS: String(rt.retryCapMs),
      MAX_ATTEMPTS: String(rt.maxAttempts),
      NOTICE_DEFAULT_DEADLINE_MS: String(rt.noticeDefaultDeadlineMs),
    };
    const common = {
      environment,
      memorySize: config.memorySize,
      logRetention: config.logRetention,
      logEncryptionKey: keys.observability,
    } satisfies Partial<NoticeFunctionProps>;
    const reserved = (name: keyof NoticeLedgerConfig['reservedConcurrency']) => {
      const value = config.reservedConcurrency[name];
      return value === undefined ? {} : { reservedConcurrentExecutions: value };
    };

    this.sesEvents = new SesEvents(this, 'SesEvents', {
      configurationSetName: config.ses.configurationSetName,
      requireTls: config.ses.requireTls,
    });
    this.escalations = new Escalations(this, 'Escalations');

    // HTTP API function: intake, timelines, suppressions, Twilio callbacks.
    const http = new NoticeFunction(this, 'Http', {
      ...common,
      ...reserved('http'),
      handlerFile: 'http-api.ts',
      description: 'notice-ledger HTTP API: intake, timelines, suppressions, provider callbacks',
      // API Gateway gives up after 30 s; a 100-notice batch is ~100 conditional puts.
      timeout: Duration.seconds(20),
      invocation: 'sync',
    });
    http.bindTable(ledger, { items: ['PutItem', 'GetItem', 'Query', 'UpdateItem', 'DeleteItem'] });
    http.bindChannelQueue(queues.email);
    http.bindChannelQueue(queues.sms);
    http.bindEnvelopeKey(keys.envelope, 'seal');
    http.bindSecret(secrets.fingerprintKey, 'FINGERPRINT_KEY_SECRET_ARN');
    http.bindSecret(secrets.twilio, 'TWILIO_SECRET_ARN');

    this.api = new IntakeApi(this, 'Api', {
      handler: http.function,
      throttle: { rateLimit: config.api.rateLimit, burstLimit: config.api.burstLimit },
      callbackThrottle: {
        rateLimit: config.api.callbackRateLimit,
        burstLimit: config.api.callbackBurstLimit,
      },
      logRetention: config.logRetention,
      logEncryptionKey: keys.observability,
      policyNamePrefix: config.resourcePrefix,
    });
    // The function reads the API's own URL: no cycle, since the API resource does not depend on
    // the function (only its routes' integration does).
    this.publicBaseUrl = config.publicBaseUrl ?? this.api.endpoint;
    http.bindPublicBaseUrl(this.publicBaseUrl);

    // Senders, one per channel.
    const senderTimeout = Duration.seconds(config.senderTimeoutSeconds);
    const identityArns = [config.ses.identity, ...config.ses.additionalIdentities].map((identity) =>
      this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
    );
    const sender = (
      id: string,
      handlerFile: string,
      channel: ChannelSettings,
      name: 'sendEmail' | 'sendSms',
    ): NoticeFunction => {
      const fn = new NoticeFunction(this, id, {
        ...common,
        ...reserved(name),
        handlerFile,
        description: `notice-ledger ${handlerFile.replace('.ts', '')}: claim, send once, record the outcome`,
        timeout: senderTimeout,
        invocation: 'sync',
      });
      fn.bindTable(ledger, { items: ['GetItem', 'UpdateItem'] });
      fn.bindEnvelopeKey(keys.envelope, 'open');
      fn.bindSecret(secrets.fingerprintKey, 'FINGERPRINT_KEY_SECRET_ARN');
      fn.bindRetryScheduler(retryScheduler);
      fn.bindEscalations(this.escalations.bus);
      if (channel.sendRatePerSecond !== undefined) {
        // Each concurrent instance paces at its share of the provider's rate.
        fn.function.addEnvironment(
          `${name === 'sendEmail' ? 'EMAIL' : 'SMS'}_SEND_RATE_PER_SECOND`,
          String(channel.sendRatePerSecond / channel.maxConcurrency),
        );
      }
      return fn;
    };

    const sendEmail = sender('SendEmail', 'send-email.ts', config.channels.email, 'sendEmail');
    // Its own queue only: short retries ride on an SQS delay, throttled sends are deferred.
    sendEmail.bindChannelQueue(queues.email);
    sendEmail.consumeChannelQueue(queues.email, config.channels.email);
    sendEmail.bindSesSender({
      fromAddress: config.ses.fromAddress,
      identityArns,
      configurationSetName: this.sesEvents.configurationSetName,
      configurationSetArn: this.sesEvents.configurationSetArn,
    });

    const sendSms = sender('SendSms', 'send-sms.ts', config.channels.sms, 'sendSms');
    sendSms.bindChannelQueue(queues.sms);
    sendSms.consumeChannelQueue(queues.sms, config.channels.sms);
    sendSms.bindSecret(secrets.twilio, 'TWILIO_SECRET_ARN');
    // Twilio's StatusCallback points back at the API.
    sendSms.bindPublicBaseUrl(this.publicBaseUrl);

    // Reconciler: every interval, sweep the open index.
    const reconcileInterval = Duration.minutes(rt.reconcileIntervalMinutes);
    const reconciler = new NoticeFunction(this, 'Reconciler', {
      ...common,
      ...reserved('reconciler'),
      handlerFile: 'reconciler.ts',
      description:
        'notice-ledger reconciler: expired leases, unknown outcomes, overdue retries, deadlines, gauges',
      // Done before the next tick starts, so runs do not overlap.
      timeout: Duration.seconds(Math.min(reconcileInterval.toSeconds() - 5, 900)),
      invocation: 'async',
    });
    reconciler.bindTable(ledger, { items: ['GetItem', 'BatchGetItem', 'UpdateItem'], openIndexQuery: true });
    reconciler.bindChannelQueue(queues.email);
    reconciler.bindChannelQueue(queues.sms);
    reconciler.bindEnvelopeKey(keys.envelope, 'open');
    reconciler.bindSecret(secrets.fingerprintKey, 'FINGERPRINT_KEY_SECRET_ARN');
    reconciler.bindSecret(secrets.twilio, 'TWILIO_SECRET_ARN');
    reconciler.bindRetryScheduler(retryScheduler);
    reconciler.bindEscalations(this.escalations.bus);
    // A failed or late tick is superseded by the next one: no retries, no stale queued ticks.
    reconciler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    acknowledge(reconciler.function, {
      rule: 'HIPAA.Security-LambdaDLQ',
      reason:
        'Each scheduled tick carries no payload and the next tick a minute later repeats the whole sweep, so a ' +
        'failed tick has nothing to redrive; failures alarm through Errors and the breaching age gauge.',
    });
    new ReconcilerSchedule(this, 'ReconcilerSchedule', {
      reconciler: reconciler.function,
      interval: reconcileInterval,
    });

    // SES configuration-set events → ledger (delivered, bounced, complained …).
    const sesEventsFn = new NoticeFunction(this, 'SesEventsHandler', {
      ...common,
      ...reserved('sesEvents'),
      handlerFile: 'ses-events.ts',
      description: 'notice-ledger SES events: delivery reports and suppressions',
      timeout: Duration.seconds(30),
      invocation: 'async',
      deadLetterQueue: this.sesEvents.deadLetterQueue,
    });
    sesEventsFn.bindTable(ledger, { items: ['GetItem', 'UpdateItem', 'PutItem'] });
    sesEventsFn.bindEnvelopeKey(keys.envelope, 'none');
    sesEventsFn.bindSecret(secrets.fingerprintKey, 'FINGERPRINT_KEY_SECRET_ARN');
    this.sesEvents.routeTo(sesEventsFn.function);

    this.functions = { http, sendEmail, sendSms, reconciler, sesEvents: sesEventsFn };

    this.monitoring = new Monitoring(this, 'Monitoring', {
      topicKey: keys.observability,
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
      functions: {
        Http: http.function,
        SendEmail: sendEmail.function,
        SendSms: sendSms.function,
        Reconciler: reconciler.function,
        SesEvents: sesEventsFn.function,
      },
      senders: ['SendEmail', 'SendSms'],
      workQueues: [
        { label: 'Email', queue: queues.email.queue },
        { label: 'Sms', queue: queues.sms.queue },
      ],
      deadLetterQueues: [
        { label: 'Email', queue: queues.email.deadLetterQueue },
        { label: 'Sms', queue: queues.sms.deadLetterQueue },
        { label: 'SesEvents', queue: this.sesEvents.deadLetterQueue },
      ],
      api: this.api.api,
      oldestUnresolvedAlarmSeconds: config.alarms.oldestUnresolvedSeconds,
      queueAgeAlarmSeconds: config.alarms.queueAgeSeconds,
    });
    this.escalations.notify(this.monitoring.topic);

    new CfnOutput(this, 'ApiEndpoint', { value: this.api.endpoint, description: 'HTTP API base URL' });
    new CfnOutput(this, 'SubmitterPolicyArn', {
      value: this.api.submitterPolicy.managedPolicyArn,
      description: 'Attach to business systems (POST notices, GET timelines)',
    });
    new CfnOutput(this, 'OperatorPolicyArn', {
      value: this.api.operatorPolicy.managedPolicyArn,
      description: 'Attach to operators (all IAM routes)',
    });
    // Permission sets of IAM Identity Center reference customer-managed policies by name.
    new CfnOutput(this, 'SubmitterPolicyName', {
      value: this.api.policyNames.submitter,
      description: 'Customer-managed policy reference for business systems’ permission sets',
    });
    new CfnOutput(this, 'OperatorPolicyName', {
      value: this.api.policyNames.operator,
      description: 'Customer-managed policy reference for operators’ permission sets',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'SesConfigurationSet', { value: this.sesEvents.configurationSetName });
    new CfnOutput(this, 'EscalationBusName', { value: this.escalations.bus.eventBusName });
  }
}
