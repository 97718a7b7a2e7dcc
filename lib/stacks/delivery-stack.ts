import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FALLBACK_PROVIDER_SETTINGS } from '../../lambdas/contract/failover-settings.ts';
import { FUNCTIONS, type FunctionName } from '../../lambdas/contract/functions.ts';
import { type LaneName, laneEventSource } from '../../lambdas/contract/lanes.ts';
import type { ProviderChannel } from '../../lambdas/contract/providers.ts';
import { providerEventsPath } from '../../lambdas/contract/routes.ts';
import { CHANNEL_SETTINGS, NO_PROVIDER } from '../../lambdas/contract/settings.ts';
import type { NoticeLedgerConfig } from '../config.ts';
import type { BundleSelection } from '../constructs/bundling.ts';
import { queueLabel } from '../constructs/channel-queue.ts';
import { Escalations } from '../constructs/escalations.ts';
import { IntakeApi } from '../constructs/intake-api.ts';
import { ARCHIVER_STREAM, LedgerArchiver } from '../constructs/ledger-archiver.ts';
import { Monitoring } from '../constructs/monitoring.ts';
import { NoticeFunction, type NoticeFunctionProps } from '../constructs/notice-function.ts';
import { OutcomeEvents, webhookSenderTimeoutSeconds } from '../constructs/outcome-events.ts';
import { ReconcilerSchedule } from '../constructs/reconciler-schedule.ts';
import { WebhookFunctionUrl } from '../constructs/webhook-function-url.ts';
import { acknowledge } from '../nag.ts';
import type { DeployedProvider, ProviderBinding } from '../providers/binding.ts';
import { pascal } from '../providers/provider-secret.ts';
import { deployedBindings, REGISTERED_PROVIDER_IDS } from '../providers/registry.ts';
import { type WebhookIngress, webhookIngress } from '../providers/webhook-ingress.ts';
import { webhookConcurrency, webhookThrottles } from '../providers/webhook-throttle.ts';
import { type StatefulStack, WATCH_TIMEOUT } from './stateful-stack.ts';

export interface DeliveryStackProps extends StackProps {
  readonly config: NoticeLedgerConfig;
  readonly stateful: StatefulStack;
}

/**
 * The stateless half: the functions, the HTTP API, the provider-events function's URL where Lambda
 * offers one (providers' webhooks), the SQS and stream event sources, the
 * reconciler schedule, the deployed providers' bindings (lib/providers/), escalations, outcome
 * events, the archive's feed, alarms and the dashboard. It holds no data of its own (log groups excepted, which are retained), so it can be
 * destroyed and redeployed at will.
 *
 * Who may do what (least privilege, each function its own role and managed policy; provider
 * grants come from the bindings of the providers the function carries):
 *
 * | function        | ledger table                               | queues            | envelope key    | secrets            | other |
 * |-----------------|--------------------------------------------|-------------------|-----------------|--------------------|-------|
 * | http            | Put/Get/Query/Update item, Query open index | send both, watch | GenerateDataKey | fingerprint        | escalations, archive rows/ (read), key table (Query) |
 * | send-email      | Get/Update/Put item                        | own: consume+send | Decrypt         | its provider's     | its provider's send grant, scheduler, escalations |
 * | send-sms        | Get/Update/Put item                        | own: consume+send | Decrypt         | its provider's     | its provider's send grant, scheduler, escalations |
 * | reconciler      | Get/BatchGet/Update/Put item, Query open index | send both     | Decrypt         | lookups' providers | scheduler, escalations |
 * | provider-events | Get/Update/Put item (suppressions)         | its DLQ           | —               | inbound providers' | — |
 * | outcome-stream  | the stream (read)                          | webhook queue     | —               | —                  | outcome bus |
 * | archiver        | the stream (read)                          | its failure queue | —               | —                  | archive facts/, rows/ (write once), key table (BatchWrite) |
 * | watch           | Get/Update item                            | watch: consume    | —               | —                  | — |
 */
export class DeliveryStack extends Stack {
  readonly functions: Readonly<Record<FunctionName, NoticeFunction>>;
  readonly api: IntakeApi;
  readonly escalations: Escalations;
  /** Outcome events: the stream consumer's bus, the signed webhooks (docs/outcome-events.md). */
  readonly outcomes: OutcomeEvents;
  /** The archive's feed: the ledger stream's event source for the archiver, its failure queue. */
  readonly archiving: LedgerArchiver;
  readonly monitoring: Monitoring;
  /** Inbound events the provider-events function could not take (after retries), kept for replay. */
  readonly providerEventsDeadLetterQueue: Queue;
  /**
   * The origin providers call back (PUBLIC_BASE_URL): `publicBaseUrl` when set, else the
   * provider-events function's URL where the webhooks arrive there, else the API's endpoint.
   */
  readonly publicBaseUrl: string;
  /** How providers' webhooks arrive (lib/providers/webhook-ingress.ts). */
  readonly webhookIngress: WebhookIngress;
  /** The provider-events function's URL, with `function-url` ingress and a webhook provider deployed. */
  readonly webhookUrl: WebhookFunctionUrl | undefined;
  /** The providers this deployment carries (selected and retained), each with its bindings. */
  readonly providers: ReadonlyMap<string, DeployedProvider>;

  constructor(scope: Construct, id: string, props: DeliveryStackProps) {
    super(scope, id, props);
    const { config, stateful } = props;
    // Every permission on stateful resources is written on this side (principal policies), so
    // the dependency runs one way: delivery → stateful.
    this.addStackDependency(stateful);
    const {
      keys,
      ledger,
      keyTable,
      archive,
      queues,
      lanes,
      retryScheduler,
      secrets,
      watch: watchQueue,
    } = stateful;
    // Every queue intake and the reconciler read the backlog of (deadline risk, docs/architecture.md §11).
    const allQueues = [
      queues.email,
      queues.sms,
      ...[lanes.email, lanes.sms].flatMap((l) => [l.critical, l.bulk]),
    ];
    const bindings = deployedBindings(config.providers);
    // The e-mail sender's event source: how many messages one provider call carries.
    const email = emailEventSource(config, bindings);

    // The operator's settings under their contract names (lambdas/contract/settings.ts), set on
    // every function; among them each channel's rate, its shared rate budget (docs/architecture.md
    // §11): the senders book it from the ledger table whatever their number; intake and the
    // reconciler estimate deadline risk from it.
    const environment: Record<string, string> = {
      ...config.runtimeEnvironment,
      [CHANNEL_SETTINGS.email.provider]: config.providers.email,
      [CHANNEL_SETTINGS.sms.provider]: config.providers.sms,
      ...(config.providers.retained.length > 0
        ? { RETAINED_PROVIDERS: config.providers.retained.join(',') }
        : {}),
      // Provider failover (docs/architecture.md §"Provider failover"): each channel's fallback.
      ...Object.fromEntries(
        (['email', 'sms'] as const).flatMap((channel) => {
          const fallback = config.providers.fallbacks[channel];
          return fallback ? [[FALLBACK_PROVIDER_SETTINGS[channel], fallback]] : [];
        }),
      ),
    };
    const make = (
      constructId: string,
      name: FunctionName,
      options: Pick<NoticeFunctionProps, 'description' | 'timeout' | 'invocation' | 'deadLetterQueue'>,
      /** Reserved concurrency unless the `reservedConcurrency` setting names the function. */
      defaultReserved?: number,
    ): NoticeFunction => {
      const reserved = config.reservedConcurrency[name] ?? defaultReserved;
      return new NoticeFunction(this, constructId, {
        ...options,
        name,
        bundle: bundleSelection(name, config.providers),
        registeredProviders: REGISTERED_PROVIDER_IDS,
        environment,
        memorySize: config.memorySizes[name] ?? config.memorySize,
        logRetention: config.logRetention,
        logEncryptionKey: keys.observability,
        ...(reserved === undefined ? {} : { reservedConcurrentExecutions: reserved }),
      });
    };

    this.escalations = new Escalations(this, 'Escalations');

    // HTTP API function: intake, timelines, suppressions. No provider code.
    const http = make('Http', 'http', {
      description: 'notice-ledger HTTP API: intake, timelines, suppressions',
      // API Gateway gives up after 30 s; a 100-notice batch is ~100 conditional puts.
      timeout: Duration.seconds(20),
      invocation: 'sync',
    });
    // No DeleteItem: the suppression list is append-only, and so is everything else the API writes.
    // Query on the open index: the operator list (GET /v1/notices, `notice-ledger list`) reads it.
    http.bindTable(ledger, { items: ['PutItem', 'GetItem', 'Query', 'UpdateItem'], openIndexQuery: true });
    http.bindChannelQueue(queues.email);
    http.bindChannelQueue(queues.sms);
    http.bindLaneQueues(lanes.email);
    http.bindLaneQueues(lanes.sms);
    http.bindQueueDepth(allQueues);
    // The watch before each reserve (docs/table-design.md "Watched rows").
    http.bindWatchQueue(watchQueue);
    http.bindEnvelopeKey(keys.envelope, 'seal');
    http.bindSecret(secrets.fingerprintKey, 'FINGERPRINT_KEY_SECRET_ARN');
    // Deadline-risk warnings go out from intake (docs/architecture.md §11).
    http.bindEscalations(this.escalations.bus);
    // Who is an operator or an auditor (docs/api.md "Callers"); every other signed caller submits.
    for (const [name, entries] of [
      ['OPERATOR_PRINCIPALS', config.callers.operators],
      ['AUDITOR_PRINCIPALS', config.callers.auditors],
    ] as const) {
      if (entries.length > 0) http.function.addEnvironment(name, entries.join(','));
    }

    // Provider events: webhooks and EventBridge events of every deployed provider. Webhooks arrive
    // at the function's own URL where Lambda offers one, else at the API's routes
    // (lib/providers/webhook-ingress.ts); either way bounded by what the providers post at the
    // configured send rates: the routes' throttles, or the function's reserved concurrency.
    const webhookProviders = bindings.filter((b) => b.descriptor.inbound === 'webhook');
    this.webhookIngress = webhookIngress(this.region, config.publicBaseUrl);
    const byUrl = this.webhookIngress === 'function-url' && webhookProviders.length > 0;
    const callbackThrottles = webhookThrottles(config, bindings, { email: email.recordsPerCall, sms: 1 });
    this.providerEventsDeadLetterQueue = new Queue(this, 'ProviderEventsDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const providerEvents = make(
      'ProviderEvents',
      'providerEvents',
      {
        description: 'notice-ledger provider events: delivery reports and suppressions',
        timeout: Duration.seconds(30),
        invocation: 'async',
        deadLetterQueue: this.providerEventsDeadLetterQueue,
      },
      byUrl ? webhookConcurrency(callbackThrottles) : undefined,
    );
    providerEvents.bindTable(ledger, { items: ['GetItem', 'UpdateItem', 'PutItem'] });

    this.api = new IntakeApi(this, 'Api', {
      handlers: { http: http.function, providerEvents: providerEvents.function },
      webhookProviders: byUrl ? [] : webhookProviders.map((b) => b.descriptor.id),
      throttle: { rateLimit: config.api.rateLimit, burstLimit: config.api.burstLimit },
      // Each provider's webhook route takes what the provider posts at the configured send rates.
      callbackThrottles,
      logRetention: config.logRetention,
      logEncryptionKey: keys.observability,
      policyNamePrefix: config.resourcePrefix,
    });
    this.webhookUrl = byUrl ? new WebhookFunctionUrl(this, 'WebhookUrl', { providerEvents }) : undefined;
    // The origin providers call back, which the senders name (a status callback URL) and the
    // signatures cover. The functions read the API's or the function URL's address without a
    // cycle (neither resource depends on the senders), except the provider-events function's own
    // URL, which that function cannot be given: it takes the origin its requests arrive at.
    this.publicBaseUrl = config.publicBaseUrl ?? this.webhookUrl?.origin ?? this.api.endpoint;
    if (webhookProviders.length > 0 && !this.webhookUrl) providerEvents.bindPublicBaseUrl(this.publicBaseUrl);

    // Senders, one per channel.
    const senderTimeout = Duration.seconds(config.senderTimeoutSeconds);
    // A channel whose provider is `none` (`emailProvider` / `smsProvider`) has no consumer: its
    // sender exists (the stack's shape does not depend on the choice) with no event source and no
    // grant at all, and intake refuses the channel (422 channel_not_configured).
    const configured = (channel: ProviderChannel) => config.providers[channel] !== NO_PROVIDER;
    const sender = (constructId: string, name: 'sendEmail' | 'sendSms', channel: ProviderChannel) => {
      const fn = make(constructId, name, {
        description: `notice-ledger ${FUNCTIONS[name].handler.replace('.ts', '')}: claim, send once, record the outcome`,
        timeout: senderTimeout,
        invocation: 'sync',
      });
      if (!configured(channel)) return fn;
      // PutItem: suppression records a provider's refusal or list implies (an opt-out).
      fn.bindTable(ledger, { items: ['GetItem', 'UpdateItem', 'PutItem'] });
      fn.bindEnvelopeKey(keys.envelope, 'open');
      fn.bindRetryScheduler(retryScheduler);
      fn.bindEscalations(this.escalations.bus);
      return fn;
    };
    // One event source per lane, so a critical reference is received whatever waits in bulk; the
    // lower lanes' records in flight capped from the rate, so that they cannot book the budget far
    // ahead of critical (docs/architecture.md §11, "Lower lanes cannot book far ahead").
    const consumeLanes = (
      fn: NoticeFunction,
      channel: ProviderChannel,
      source: { batchSize: number; maxConcurrency: number; maxBatchingWindowSeconds?: number },
      recordsPerCall: number,
    ) => {
      const rate = config.channels[channel].sendRatePerSecond;
      // Its own queues only: short retries ride on an SQS delay, throttled sends are deferred.
      fn.bindChannelQueue(queues[channel]);
      fn.bindLaneQueues(lanes[channel]);
      const lane = (name: LaneName) => laneEventSource(name, source, rate, recordsPerCall);
      fn.consumeChannelQueue(queues[channel], lane('standard'));
      fn.consumeChannelQueue(lanes[channel].critical, lane('critical'));
      fn.consumeChannelQueue(lanes[channel].bulk, lane('bulk'));
    };
    const sendEmail = sender('SendEmail', 'sendEmail', 'email');
    if (configured('email')) consumeLanes(sendEmail, 'email', email.source, email.recordsPerCall);
    const sendSms = sender('SendSms', 'sendSms', 'sms');
    if (configured('sms')) consumeLanes(sendSms, 'sms', config.channels.sms, 1);

    // Reconciler: every interval, sweep the open index.
    const reconcileInterval = Duration.minutes(config.runtime.reconcileIntervalMs / 60_000);
    const reconciler = make('Reconciler', 'reconciler', {
      description:
        'notice-ledger reconciler: expired leases, unknown outcomes, overdue retries, deadlines, gauges',
      // Done before the next tick starts, so runs do not overlap.
      timeout: Duration.seconds(Math.min(reconcileInterval.toSeconds() - 5, 900)),
      invocation: 'async',
    });
    // PutItem: suppression records of bounces and complaints a status pull brings.
    reconciler.bindTable(ledger, {
      items: ['GetItem', 'BatchGetItem', 'UpdateItem', 'PutItem'],
      openIndexQuery: true,
    });
    reconciler.bindChannelQueue(queues.email);
    reconciler.bindChannelQueue(queues.sms);
    reconciler.bindLaneQueues(lanes.email);
    reconciler.bindLaneQueues(lanes.sms);
    reconciler.bindQueueDepth(allQueues);
    reconciler.bindEnvelopeKey(keys.envelope, 'open');
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

    // Each deployed provider binds the functions that carry its facets, and nothing else.
    this.providers = bindProviders(this, bindings, {
      config,
      stateful,
      publicBaseUrl: this.publicBaseUrl,
      eventsDeadLetterQueue: this.providerEventsDeadLetterQueue,
      senders: { email: sendEmail, sms: sendSms },
      reconciler,
      providerEvents,
    });

    // The watch: rows on the happy path still owed something when their watch fires enter the
    // open index (docs/table-design.md "Watched rows"). A row read and `defer`, nothing else.
    const watch = make('Watch', 'watch', {
      description: 'notice-ledger watch: rows still open after INDEX_WATCH_DELAY_MS enter the open index',
      timeout: WATCH_TIMEOUT,
      invocation: 'sync',
    });
    watch.bindTable(ledger, { items: ['GetItem', 'UpdateItem'] });
    watch.consumeWatchQueue(watchQueue);

    // Outcome events (issue 23): the table's change stream → the bus and the signed webhooks.
    const outcomeStream = make('OutcomeStream', 'outcomeStream', {
      description: 'notice-ledger outcome events: the ledger stream → the bus and the webhook queue',
      timeout: Duration.seconds(60),
      invocation: 'sync',
    });
    const outcomeWebhooks = make('OutcomeWebhooks', 'outcomeWebhooks', {
      description: 'notice-ledger outcome webhooks: sign (Standard Webhooks), POST, retry, dead-letter',
      timeout: Duration.seconds(webhookSenderTimeoutSeconds(config.outcomes.webhookTimeoutMs)),
      invocation: 'sync',
    });
    this.outcomes = new OutcomeEvents(this, 'OutcomeEvents', {
      ledger,
      consumer: outcomeStream,
      sender: outcomeWebhooks,
      busName: config.outcomes.eventBusName,
      webhookUrl: config.outcomes.webhookUrl,
      retryScheduleMs: config.outcomes.retryScheduleMs,
      webhookTimeoutMs: config.outcomes.webhookTimeoutMs,
      secretsKey: keys.data,
      secretNamePrefix: config.resourcePrefix,
    });

    // The write-once archive (issue 22): the same stream's second consumer → the archive bucket.
    const archiver = make('Archiver', 'archiver', {
      description:
        'notice-ledger archiver: the ledger stream → the write-once archive (facts, rows, key records)',
      timeout: Duration.minutes(2),
      invocation: 'sync',
    });
    this.archiving = new LedgerArchiver(this, 'Archiving', { ledger, archive, keyTable, archiver });
    // A notice past the hot window: its key records answer a replay, and its timeline (and what a
    // conflicting replay changed) is read back from its archived rows.
    http.bindKeyTable(keyTable, 'read');
    http.bindArchive(archive, 'readRows');

    this.functions = {
      http,
      sendEmail,
      sendSms,
      reconciler,
      providerEvents,
      watch,
      outcomeStream,
      outcomeWebhooks,
      archiver,
    };
    // Each function under one label: its alarm (`<Label>Errors`), its output (`<Label>FunctionName`).
    const labelled = {
      Http: http.function,
      SendEmail: sendEmail.function,
      SendSms: sendSms.function,
      Reconciler: reconciler.function,
      ProviderEvents: providerEvents.function,
      Watch: watch.function,
      OutcomeStream: outcomeStream.function,
      OutcomeWebhooks: outcomeWebhooks.function,
      Archiver: archiver.function,
    };

    this.monitoring = new Monitoring(this, 'Monitoring', {
      topicKey: keys.observability,
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
      functions: labelled,
      senders: ['SendEmail', 'SendSms'],
      workQueues: allQueues.map((q) => ({ label: queueLabel(q), queue: q.queue })),
      deadLetterQueues: [
        ...allQueues.map((q) => ({ label: queueLabel(q), queue: q.deadLetterQueue })),
        { label: 'ProviderEvents', queue: this.providerEventsDeadLetterQueue },
        { label: 'Watch', queue: watchQueue.deadLetterQueue },
        { label: 'OutcomeStream', queue: this.outcomes.streamFailureQueue },
        { label: 'OutcomeWebhooks', queue: this.outcomes.webhookDeadLetterQueue },
        { label: 'Archiver', queue: this.archiving.failureQueue },
      ],
      streamConsumers: [
        {
          label: 'Archiver',
          maxIteratorAge: ARCHIVER_STREAM.iteratorAgeAlarm,
          bound: 'facts may reach the archive later than the 15 minutes it promises',
        },
      ],
      tables: [
        { label: 'LedgerTable', table: ledger.table, indexes: { OpenIndex: ledger.openIndexName } },
        { label: 'KeyTable', table: keyTable.table },
      ],
      api: this.api.api,
      oldestUnresolvedAlarmSeconds: config.alarms.oldestUnresolvedSeconds,
      queueAgeAlarmSeconds: config.alarms.queueAgeSeconds,
    });
    this.escalations.notify(this.monitoring.topic);
    for (const provider of this.providers.values()) provider.monitor?.(this.monitoring);

    new CfnOutput(this, 'ApiEndpoint', { value: this.api.endpoint, description: 'HTTP API base URL' });
    // Where each webhook provider posts, whichever ingress takes it (some are named per message).
    for (const binding of webhookProviders) {
      const id = binding.descriptor.id;
      new CfnOutput(this, `${pascal(id)}WebhookUrl`, {
        value: `${this.publicBaseUrl}${providerEventsPath(id)}`,
        description: `Where ${binding.descriptor.title} posts its delivery reports (docs/deploy.md)`,
      });
    }
    new CfnOutput(this, 'SubmitterPolicyArn', {
      value: this.api.submitterPolicy.managedPolicyArn,
      description: 'Attach to business systems (POST notices; GET and cancel their own)',
    });
    new CfnOutput(this, 'OperatorPolicyArn', {
      value: this.api.operatorPolicy.managedPolicyArn,
      description: 'Attach to operators (all IAM routes); list their roles in operatorPrincipals',
    });
    new CfnOutput(this, 'AuditorPolicyArn', {
      value: this.api.auditorPolicy.managedPolicyArn,
      description: 'Attach to auditors (every read, no act); list their roles in auditorPrincipals',
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
    new CfnOutput(this, 'AuditorPolicyName', {
      value: this.api.policyNames.auditor,
      description: 'Customer-managed policy reference for auditors’ permission sets',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
    new CfnOutput(this, 'EscalationBusName', { value: this.escalations.bus.eventBusName });
    new CfnOutput(this, 'OutcomeEventBusName', { value: this.outcomes.bus.eventBusName });
    new CfnOutput(this, 'OutcomeWebhookSecretArn', {
      value: this.outcomes.secret.secretArn,
      description:
        'Fill with { "secrets": "whsec_…" } when outcomeWebhookUrl is set (docs/outcome-events.md)',
    });
    // Labelled as their alarms are (`<Label>DeadLetters`), as the stateful stack's queues.
    new CfnOutput(this, 'OutcomeWebhooksDeadLetterQueueArn', {
      value: this.outcomes.webhookDeadLetterQueue.queueArn,
      description: 'Webhooks no retry delivered: redrive them to the webhook queue (docs/outcome-events.md)',
    });
    new CfnOutput(this, 'ArchiverDeadLetterQueueArn', {
      value: this.archiving.failureQueue.queueArn,
      description:
        'Ledger stream batches the archiver gave up (their positions, for a replay: docs/archive.md)',
    });
    new CfnOutput(this, 'OutcomeStreamDeadLetterQueueArn', {
      value: this.outcomes.streamFailureQueue.queueArn,
      description: 'Ledger stream batches the outcome consumer could not relay (docs/outcome-events.md)',
    });
    // What an operator names in a command: a custom domain's API mapping, fresh instances after a
    // secret changes (update-function-configuration), a replay of the provider events' DLQ.
    new CfnOutput(this, 'ApiId', {
      value: this.api.api.apiId,
      description: 'HTTP API id (custom domain mapping)',
    });
    for (const [label, fn] of Object.entries(labelled)) {
      new CfnOutput(this, `${label}FunctionName`, { value: fn.functionName });
    }
    new CfnOutput(this, 'ProviderEventsDeadLetterQueueArn', {
      value: this.providerEventsDeadLetterQueue.queueArn,
    });
    new CfnOutput(this, 'ProviderEventsDeadLetterQueueUrl', {
      value: this.providerEventsDeadLetterQueue.queueUrl,
      description: 'Provider events no retry could apply: replay them to the function (docs/deploy.md)',
    });
  }
}

/**
 * What a function's bundle carries (lambdas/contract/functions.ts says which facets, for whose
 * providers): the sender its channel's provider's transport, the reconciler and provider-events
 * the lookups and inbound facets of every deployed provider, intake nothing of any provider.
 */
export function bundleSelection(
  name: FunctionName,
  providers: NoticeLedgerConfig['providers'],
): BundleSelection {
  const bindings = deployedBindings(providers);
  const spec = FUNCTIONS[name];
  const ids =
    spec.providers === 'none'
      ? []
      : spec.providers === 'answering'
        ? bindings.map((b) => b.descriptor.id)
        : [providers[spec.providers], providers.fallbacks[spec.providers]].filter(
            (id): id is string => id !== undefined && id !== NO_PROVIDER,
          );
  const hasSecret = (id: string) =>
    Boolean(bindings.find((b) => b.descriptor.id === id)?.descriptor.secretVariable);
  return {
    providers: ids,
    facets: [...spec.facets],
    // Intake reads the fingerprint key; the others only their providers' credentials.
    secrets: name === 'http' || ids.some(hasSecret),
  };
}

/**
 * The e-mail sender's event source. Where the e-mail provider sends batches and
 * `emailBatchMax` > 1, an invocation gets up to that many records (gathered for up to a second,
 * which Lambda requires above 10), and the sender sends them in as few provider calls
 * (docs/architecture.md §4, "One dispatch path"); otherwise `emailBatchSize` records, one call each.
 */
export function emailEventSource(
  config: NoticeLedgerConfig,
  bindings: readonly ProviderBinding[],
): {
  source: { batchSize: number; maxConcurrency: number; maxBatchingWindowSeconds?: number };
  /** Records one provider call carries (the lanes' caps count calls: lambdas/contract/lanes.ts). */
  recordsPerCall: number;
} {
  const channel = config.channels.email;
  const provider = bindings.find((b) => b.descriptor.id === config.providers.email);
  const batchMax = Number(config.runtimeEnvironment.EMAIL_BATCH_MAX ?? 1);
  if (!provider?.descriptor.capabilities.batchSend || batchMax <= 1)
    return { source: channel, recordsPerCall: 1 };
  const batchSize = Math.max(channel.batchSize, batchMax);
  return {
    source: { ...channel, batchSize, ...(batchSize > 10 ? { maxBatchingWindowSeconds: 1 } : {}) },
    recordsPerCall: batchMax,
  };
}

interface BindTargets {
  readonly config: NoticeLedgerConfig;
  readonly stateful: StatefulStack;
  readonly publicBaseUrl: string;
  readonly eventsDeadLetterQueue: Queue;
  readonly senders: Readonly<Record<ProviderChannel, NoticeFunction>>;
  readonly reconciler: NoticeFunction;
  readonly providerEvents: NoticeFunction;
}

/**
 * The transport of each channel's provider on that channel's sender; the lookups and inbound
 * facets of every deployed provider (selected and retained) on the reconciler and the
 * provider-events function, so rows sent through a retired provider stay answerable.
 */
function bindProviders(
  scope: Construct,
  bindings: readonly ProviderBinding[],
  targets: BindTargets,
): ReadonlyMap<string, DeployedProvider> {
  const deployed = new Map<string, DeployedProvider>();
  for (const binding of bindings) {
    const id = binding.descriptor.id;
    const provider = binding.deliver(scope, {
      config: targets.config,
      resources: targets.stateful.providerResources.get(id) ?? {},
      publicBaseUrl: targets.publicBaseUrl,
      eventsDeadLetterQueue: targets.eventsDeadLetterQueue,
    });
    deployed.set(id, provider);
    // A channel's sender carries its primary's transport and its fallback's (grants for both).
    for (const channel of ['email', 'sms'] as const) {
      const { providers } = targets.config;
      if (providers[channel] === id || providers.fallbacks[channel] === id)
        provider.bindTransport?.(targets.senders[channel], channel);
    }
    provider.bindLookup?.(targets.reconciler);
    provider.bindInbound?.(targets.providerEvents);
  }
  return deployed;
}
