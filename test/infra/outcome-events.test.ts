/**
 * Outcome events in the CDK app (issue 23): the ledger's change stream, its one consumer with a
 * bisecting, bounded event source and an on-failure DLQ with an alarm, the bus and its schema
 * registry, the signed-webhook queue, sender and DLQ, and each function's least privilege.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTCOME_EVENT_SOURCE } from '../../lambdas/contract/outcome-events.ts';
import { STREAM_RETRY_ATTEMPTS } from '../../lib/constructs/outcome-events.ts';
import { grantsOf, logicalId, ROOT, roleStatements, type Synthesized, synthesize } from './synth.ts';

const URL = 'https://lab.example/notice-ledger/outcomes';
let plain: Synthesized;
let withHooks: Synthesized;
let named: Synthesized;

beforeAll(() => {
  plain = synthesize({ bundle: false });
  withHooks = synthesize({ bundle: false, settings: { outcomeWebhookUrl: URL } });
  named = synthesize({ bundle: false, settings: { outcomeEventBusName: 'lab-systems' } });
});

const grants = (s: Synthesized, key: 'outcomeStream' | 'outcomeWebhooks') =>
  grantsOf(roleStatements(s.deliveryTemplate, logicalId(s.delivery.functions[key].role)));

const ref = (construct: Parameters<typeof logicalId>[0], attr?: string) =>
  attr ? { 'Fn::GetAtt': [logicalId(construct), attr] } : { Ref: logicalId(construct) };

describe('outcome events: the stream and its consumer', () => {
  it('enables the ledger table’s stream with old and new images, in the stateful stack', () => {
    plain.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('reads it with one consumer: intent rows only, bisecting, bounded retries, failures to a DLQ with an alarm', () => {
    const template: Template = plain.deliveryTemplate;
    // The stream's other consumer is the archiver (test/infra/archive.test.ts).
    const streams = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) =>
        JSON.stringify(m.Properties.EventSourceArn).includes('StreamArn') &&
        JSON.stringify(m.Properties.FunctionName) ===
          JSON.stringify(ref(plain.delivery.functions.outcomeStream.function)),
    );
    expect(streams).toHaveLength(1);
    const failures = plain.delivery.outcomes.streamFailureQueue;
    expect(streams[0]?.Properties).toMatchObject({
      FunctionName: ref(plain.delivery.functions.outcomeStream.function),
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: ref(failures, 'Arn') } },
      FilterCriteria: {
        Filters: [{ Pattern: JSON.stringify({ dynamodb: { Keys: { pk: { S: [{ prefix: 'N#' }] } } } }) }],
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: ref(failures, 'QueueName') }],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(plain.delivery.functions.outcomeStream.function) }],
    });
  });

  it('grants the consumer the stream and PutEvents of its own source on the outcome bus, nothing of the table', () => {
    const g = grants(plain, 'outcomeStream');
    for (const action of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:DescribeStream']) {
      expect(g.get(action)?.join(), action).toContain('StreamArn');
    }
    for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']) {
      expect(g.has(action), action).toBe(false);
    }
    expect(g.get('events:PutEvents')).toEqual([JSON.stringify(ref(plain.delivery.outcomes.bus, 'Arn'))]);
    const statements = roleStatements(
      plain.deliveryTemplate,
      logicalId(plain.delivery.functions.outcomeStream.role),
    );
    expect(statements.find((s) => s.Sid === 'PublishOutcomes')).toMatchObject({
      Condition: { StringEquals: { 'events:source': OUTCOME_EVENT_SOURCE } },
    });
    // Without a webhook URL: no webhook queue to send to, and the sender consumes nothing.
    expect(g.has('sqs:SendMessage') && g.get('sqs:SendMessage')?.join().includes('Webhooks')).toBe(false);
    expect([...grants(plain, 'outcomeWebhooks').keys()].filter((a) => !a.startsWith('logs:'))).toEqual([]);
  });
});

describe('outcome events: the bus and its schema', () => {
  it('has a bus of its own, and a schema registry holding docs/outcome-events.schema.json', () => {
    plain.deliveryTemplate.resourceCountIs('AWS::EventSchemas::Registry', 1);
    plain.deliveryTemplate.hasResourceProperties('AWS::EventSchemas::Schema', {
      Type: 'JSONSchemaDraft4',
      Content: readFileSync(join(ROOT, 'docs/outcome-events.schema.json'), 'utf8'),
    });
    expect(plain.deliveryTemplate.toJSON().Outputs.OutcomeEventBusName?.Value).toEqual(
      ref(plain.delivery.outcomes.bus),
    );
  });

  it('publishes to the bus the deployment names instead, and makes none', () => {
    const g = grants(named, 'outcomeStream');
    expect(g.get('events:PutEvents')?.join()).toContain('event-bus/lab-systems');
    const env =
      named.deliveryTemplate.findResources('AWS::Lambda::Function')[
        logicalId(named.delivery.functions.outcomeStream.function)
      ]?.Properties.Environment.Variables;
    expect(env.OUTCOME_EVENT_BUS).toBe('lab-systems');
    // The escalation bus is the stack's only one.
    named.deliveryTemplate.resourceCountIs('AWS::Events::EventBus', 1);
  });
});

describe('outcome events: signed webhooks', () => {
  it('gives the sender the webhook queue, its DLQ with an alarm, and the signing secret; nothing more', () => {
    const t = withHooks.deliveryTemplate;
    const o = withHooks.delivery.outcomes;
    const sender = withHooks.delivery.functions.outcomeWebhooks;
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: ref(sender.function),
      EventSourceArn: ref(o.webhookQueue, 'Arn'),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    t.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: ref(o.webhookDeadLetterQueue, 'Arn') },
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: ref(o.webhookDeadLetterQueue, 'QueueName') }],
    });
    const g = grants(withHooks, 'outcomeWebhooks');
    expect(g.get('secretsmanager:GetSecretValue')).toEqual([JSON.stringify(ref(o.secret))]);
    expect(new Set(g.get('sqs:SendMessage'))).toEqual(
      new Set([
        JSON.stringify(ref(o.webhookQueue, 'Arn')),
        JSON.stringify(ref(o.webhookDeadLetterQueue, 'Arn')),
      ]),
    );
    expect([...g.keys()].filter((a) => a.startsWith('dynamodb:') || a.startsWith('events:'))).toEqual([]);
    const env =
      t.findResources('AWS::Lambda::Function')[logicalId(sender.function)]?.Properties.Environment.Variables;
    expect(env).toMatchObject({
      OUTCOME_WEBHOOK_URL: URL,
      OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS: '5000,300000,1800000,7200000,18000000,36000000,36000000',
      OUTCOME_WEBHOOK_SECRET_ARN: ref(withHooks.delivery.outcomes.secret),
    });
    // The consumer may put events on the webhook queue, and no more of it.
    expect(grants(withHooks, 'outcomeStream').get('sqs:SendMessage')).toContain(
      JSON.stringify(ref(o.webhookQueue, 'Arn')),
    );
  });

  it('refuses a deployment retry schedule shorter than a day', () => {
    expect(() =>
      synthesize({
        bundle: false,
        settings: { outcomeWebhookUrl: URL, outcomeWebhookRetryScheduleMs: ['5000', '60000'] },
      }),
    ).toThrow(/at least 24 h/);
  });
});
