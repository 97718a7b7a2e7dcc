import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import { CfnRegistry, CfnSchema } from 'aws-cdk-lib/aws-eventschemas';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { EventSourceMapping, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LEDGER_STREAM_FILTERS } from '../../lambdas/contract/ledger-stream.ts';
import { OUTCOME_EVENT_SOURCE, OUTCOME_SCHEMA_NAME } from '../../lambdas/contract/outcome-events.ts';
import { acknowledge } from '../nag.ts';
import { LedgerTable } from './ledger-table.ts';
import { type NoticeFunction, REPO_ROOT } from './notice-function.ts';

export interface OutcomeEventsProps {
  readonly ledger: LedgerTable;
  /** Reads the table's change stream; publishes to the bus and the webhook queue. */
  readonly consumer: NoticeFunction;
  /** Consumes the webhook queue: signs and POSTs. */
  readonly sender: NoticeFunction;
  /** OUTCOME_EVENT_BUS_NAME: an existing bus; unset: a bus of this construct's own. */
  readonly busName?: string | undefined;
  /** OUTCOME_WEBHOOK_URL: unset, no webhook queue is consumed (the sender gets no event source). */
  readonly webhookUrl?: string | undefined;
  readonly retryScheduleMs: readonly number[];
  readonly webhookTimeoutMs: number;
  /** Encrypts the signing secret (the stack's data key). */
  readonly secretsKey: IKey;
  readonly secretNamePrefix: string;
}

/** Receives of one webhook message (not of its retries, which are new messages) before the DLQ. */
export const WEBHOOK_MAX_RECEIVES = 5;

/** How many times the stream consumer is handed a failing change (bisecting) before its DLQ. */
export const STREAM_RETRY_ATTEMPTS = 10;

/**
 * Outcome events (docs/outcome-events.md): the ledger table's change stream (NEW_AND_OLD_IMAGES,
 * enabled in the stateful stack), one consumer that derives the events and hands them to every
 * sink, the bus they go to (with their JSON Schema in a schema registry), and the signed-webhook
 * path: a queue, the signing sender, a dead-letter queue after the retry schedule, the secret.
 *
 * Least privilege: the consumer reads the stream (the event source's grant) and may PutEvents on
 * this bus and SendMessage on the webhook queue, nothing of the table itself; the sender consumes
 * the webhook queue (and may hide a message until its retry) and reads the signing secret.
 */
export class OutcomeEvents extends Construct {
  readonly bus: IEventBus;
  readonly webhookQueue: Queue;
  /** Webhooks no retry of the schedule delivered. */
  readonly webhookDeadLetterQueue: Queue;
  /** Stream batches the consumer could not relay within its retries (their positions, for replay). */
  readonly streamFailureQueue: Queue;
  readonly secret: ISecret;

  constructor(scope: Construct, id: string, props: OutcomeEventsProps) {
    super(scope, id);
    const { consumer, sender, ledger } = props;

    this.bus = props.busName
      ? EventBus.fromEventBusName(this, 'Bus', props.busName)
      : new EventBus(this, 'OwnBus');
    const registry = new CfnRegistry(this, 'SchemaRegistry', {
      description: 'notice-ledger outcome events',
    });
    new CfnSchema(this, 'Schema', {
      registryName: registry.attrRegistryName,
      schemaName: OUTCOME_SCHEMA_NAME,
      type: 'JSONSchemaDraft4',
      description: 'An outcome event: a channel transition or a late fact (docs/outcome-events.md)',
      content: readFileSync(join(REPO_ROOT, 'docs/outcome-events.schema.json'), 'utf8'),
    });

    const queueBase = {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    } as const;
    this.streamFailureQueue = new Queue(this, 'StreamFailures', {
      ...queueBase,
      retentionPeriod: Duration.days(14),
    });
    this.webhookDeadLetterQueue = new Queue(this, 'WebhookDeadLetters', {
      ...queueBase,
      retentionPeriod: Duration.days(14),
    });
    // A retry is a new, delayed message (lambdas/adapters/sqs/outcome-webhook-queue.ts); the
    // redrive policy catches only what the sender could not handle at all (a crash loop).
    this.webhookQueue = new Queue(this, 'Webhooks', {
      ...queueBase,
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(6 * webhookSenderTimeoutSeconds(props.webhookTimeoutMs)),
      deadLetterQueue: { queue: this.webhookDeadLetterQueue, maxReceiveCount: WEBHOOK_MAX_RECEIVES },
    });
    acknowledge(this.streamFailureQueue, {
      rule: 'AwsSolutions-SQS3',
      reason:
        "It is the outcome stream consumer's on-failure destination: a dead-letter queue itself, holding the stream " +
        'positions of batches no retry relayed, watched by the OutcomeStreamDeadLetters alarm.',
    });

    // The consumer: intent rows only (the other item families never make an outcome). The mapping
    // is written out (not DynamoEventSource) so that its grants are the three stream reads on this
    // stream and the table key through DynamoDB only, in the function's one managed policy
    // (NoticeFunction.bindLedgerStream).
    new EventSourceMapping(this, 'StreamSource', {
      target: consumer.function,
      eventSourceArn: ledger.streamArn,
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      bisectBatchOnError: true,
      retryAttempts: STREAM_RETRY_ATTEMPTS,
      maxRecordAge: Duration.days(1),
      reportBatchItemFailures: true,
      parallelizationFactor: 1,
      onFailure: new SqsDlq(this.streamFailureQueue),
      filters: LedgerTable.streamFilterCriteria(LEDGER_STREAM_FILTERS.outcomes),
    });
    consumer.bindLedgerStream(ledger);
    consumer.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'PublishOutcomes',
        actions: ['events:PutEvents'],
        resources: [this.bus.eventBusArn],
        conditions: { StringEquals: { 'events:source': OUTCOME_EVENT_SOURCE } },
      }),
    );
    consumer.function.addEnvironment('OUTCOME_EVENT_BUS', this.bus.eventBusName);

    this.secret = new Secret(this, 'WebhookSecret', {
      secretName: `${props.secretNamePrefix}/outcome-webhook-secret`,
      description:
        'notice-ledger: Standard Webhooks signing secret(s) { "secrets": "whsec_…[,whsec_…]" } (docs/outcome-events.md)',
      encryptionKey: props.secretsKey,
      generateSecretString: {
        secretStringTemplate: '{}',
        // A placeholder: the sender refuses to start until `secrets` holds whsec_ secrets.
        generateStringKey: 'placeholder',
        passwordLength: 32,
        excludePunctuation: true,
        includeSpace: false,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.secret,
      ...['AwsSolutions-SMG4', 'HIPAA.Security-SecretsManagerRotationEnabled'].map((rule) => ({
        rule,
        reason:
          'The receiver holds the same secret: a rotation is a change of both sides, done by the operator ' +
          'with two secrets at once (both sign meanwhile, docs/outcome-events.md), not by a Lambda rotation.',
      })),
    );

    if (!props.webhookUrl) return;
    consumer.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'QueueWebhooks',
        actions: ['sqs:SendMessage'],
        resources: [this.webhookQueue.queueArn],
      }),
    );
    for (const fn of [consumer, sender]) {
      fn.function.addEnvironment('OUTCOME_WEBHOOK_URL', props.webhookUrl);
      fn.function.addEnvironment('OUTCOME_WEBHOOK_QUEUE_URL', this.webhookQueue.queueUrl);
      fn.function.addEnvironment('OUTCOME_WEBHOOK_QUEUE_ARN', this.webhookQueue.queueArn);
    }
    sender.function.addEnvironment('OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS', props.retryScheduleMs.join(','));
    sender.function.addEventSource(
      new SqsEventSource(this.webhookQueue, {
        batchSize: 10,
        maxConcurrency: 5,
        reportBatchItemFailures: true,
      }),
    );
    // A retry is the same event sent again (delayed); a spent schedule goes to the DLQ.
    sender.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'RequeueWebhooks',
        actions: ['sqs:SendMessage'],
        resources: [this.webhookQueue.queueArn, this.webhookDeadLetterQueue.queueArn],
      }),
    );
    sender.function.addEnvironment('OUTCOME_WEBHOOK_DLQ_URL', this.webhookDeadLetterQueue.queueUrl);
    sender.function.addEnvironment('OUTCOME_WEBHOOK_DLQ_ARN', this.webhookDeadLetterQueue.queueArn);
    sender.bindSecret(this.secret, 'OUTCOME_WEBHOOK_SECRET_ARN');
  }
}

/** The signing sender's timeout: a batch's POSTs run side by side, plus the queue calls around them. */
export function webhookSenderTimeoutSeconds(webhookTimeoutMs: number): number {
  return Math.ceil(webhookTimeoutMs / 1000) + 10;
}
