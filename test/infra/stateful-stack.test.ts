import { randomInt } from 'node:crypto';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ledgerTableDefinition } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { LedgerTable as Schema } from '../../lambdas/contract/ledger-table.ts';
import { logicalId, type Synthesized, synthesize } from './synth.ts';

let synth: Synthesized;
let template: Template;

beforeAll(() => {
  // The stateful stack has no code: skip bundling.
  synth = synthesize({ bundle: false });
  template = synth.statefulTemplate;
});

describe('stateful stack: ledger table', () => {
  it('is on-demand, recoverable, undeletable and encrypted with the data key', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: {
          SSEEnabled: true,
          SSEType: 'KMS',
          KMSMasterKeyId: { 'Fn::GetAtt': [logicalId(synth.stateful.keys.data), 'Arn'] },
        },
      }),
    });
  });

  it('has the keys, open-intent index and TTL attribute the code writes (lambdas/contract/ledger-table.ts)', () => {
    const definition = ledgerTableDefinition('x');
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: Schema.partitionKey, KeyType: 'HASH' },
        { AttributeName: Schema.sortKey, KeyType: 'RANGE' },
      ],
      // Attribute types as the local stack creates the table.
      AttributeDefinitions: Match.arrayWith(
        (definition.AttributeDefinitions ?? []).map((a) => Match.objectEquals({ ...a })),
      ),
      GlobalSecondaryIndexes: [
        {
          IndexName: Schema.openIndexName,
          KeySchema: [
            { AttributeName: Schema.openIndexPartitionKey, KeyType: 'HASH' },
            { AttributeName: Schema.openIndexSortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...Schema.openIndexProjection] },
        },
      ],
      TimeToLiveSpecification: { AttributeName: Schema.ttlAttribute, Enabled: true },
    });
    const attributes = template.findResources('AWS::DynamoDB::Table');
    const defs = Object.values(attributes)[0]?.Properties.AttributeDefinitions as unknown[];
    expect(defs).toHaveLength(definition.AttributeDefinitions?.length ?? 0);
  });
});

describe('stateful stack: keys and secrets', () => {
  it('creates three rotating, retained customer-managed keys', () => {
    template.resourceCountIs('AWS::KMS::Key', 3);
    for (const key of Object.values(template.findResources('AWS::KMS::Key'))) {
      expect(key.DeletionPolicy).toBe('Retain');
      expect(key.Properties.EnableKeyRotation).toBe(true);
    }
  });

  it('lets CloudWatch Logs (this account’s log groups) and the alarm publishers (this account’s alarms and rules only) use the observability key', () => {
    const arn = (service: string, resource: string) => ({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          `:${service}:`,
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          resource,
        ],
      ],
    });
    const publisher = (sid: string, service: string, sourceArn: unknown) =>
      Match.objectLike({
        Sid: sid,
        Principal: { Service: `${service}.amazonaws.com` },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Condition: {
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: { 'aws:SourceArn': sourceArn },
        },
      });
    template.hasResourceProperties('AWS::KMS::Key', {
      Description: Match.stringLikeRegexp('CloudWatch Logs'),
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Sid: 'CloudWatchLogsGroupsOfThisAccount',
            Condition: { ArnLike: { 'kms:EncryptionContext:aws:logs:arn': Match.anyValue() } },
          }),
          publisher('AlarmsOfThisAccountToTheAlarmTopic', 'cloudwatch', arn('cloudwatch', ':alarm:*')),
          publisher('RulesOfThisAccountToTheAlarmTopic', 'events', arn('events', ':rule/*')),
        ]),
      },
    });
    // No service principal of the key policy goes without a condition that ties it to this account.
    for (const key of Object.values(template.findResources('AWS::KMS::Key'))) {
      for (const statement of key.Properties.KeyPolicy.Statement as {
        Principal?: { Service?: unknown };
        Condition?: unknown;
      }[]) {
        if (statement.Principal?.Service)
          expect(statement.Condition, JSON.stringify(statement.Principal)).toBeDefined();
      }
    }
  });

  it('generates the fingerprint key as {"key": 43 letters/digits}, which decodes to exactly 32 bytes', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'notice-ledger/fingerprint-key',
      KmsKeyId: { 'Fn::GetAtt': [logicalId(synth.stateful.keys.data), 'Arn'] },
      GenerateSecretString: {
        SecretStringTemplate: '{}',
        GenerateStringKey: 'key',
        PasswordLength: 43,
        ExcludePunctuation: true,
        IncludeSpace: false,
      },
    });
    // The runtime decodes with Buffer.from(value, 'base64') and requires 32 bytes (lambdas/wiring/core.ts, key32).
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    for (let i = 0; i < 100; i++) {
      const generated = Array.from({ length: 43 }, () => alphabet[randomInt(alphabet.length)]).join('');
      expect(Buffer.from(generated, 'base64')).toHaveLength(32);
    }
  });

  it('creates the Twilio secret with the documented empty shape unless one is imported', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'notice-ledger/twilio',
      SecretString: JSON.stringify({ accountSid: '', authToken: '', from: '' }),
    });
    for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret'))) {
      expect(secret.DeletionPolicy).toBe('Retain');
    }
  });
});

describe('stateful stack: channel queues', () => {
  it('encrypts and TLS-guards all twelve queues (channel and lane queues, their DLQs) and retains them', () => {
    template.resourceCountIs('AWS::SQS::Queue', 12);
    for (const queue of Object.values(template.findResources('AWS::SQS::Queue'))) {
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      expect(queue.DeletionPolicy).toBe('Retain');
    }
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      },
      12,
    );
  });

  it('redrives each channel queue to its DLQ after ≥ 5 receives, with visibility ≥ 6 × the sender timeout', () => {
    const senderTimeout = synth.config.senderTimeoutSeconds;
    const work = Object.values(template.findResources('AWS::SQS::Queue')).filter(
      (q) => q.Properties.RedrivePolicy,
    );
    // The two channel queues and the four lane queues (docs/architecture.md §11).
    expect(work).toHaveLength(6);
    for (const queue of work) {
      expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * senderTimeout);
    }
  });
});

describe('stateful stack: retry scheduler', () => {
  it('creates the retained schedule group the runtime names', () => {
    template.hasResource('AWS::Scheduler::ScheduleGroup', {
      DeletionPolicy: 'Retain',
      Properties: { Name: 'notice-ledger-retries' },
    });
  });

  it('lets only this account’s retry group assume the scheduler role, which may only enqueue to the channel and lane queues', () => {
    template.resourceCountIs('AWS::IAM::Role', 1);
    const roleId = logicalId(synth.stateful.retryScheduler.role);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: {
              StringEquals: {
                'aws:SourceAccount': { Ref: 'AWS::AccountId' },
                'aws:SourceArn': { 'Fn::GetAtt': [logicalId(synth.stateful.retryScheduler.group), 'Arn'] },
              },
            },
          },
        ],
      },
    });
    template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      Roles: [{ Ref: roleId }],
      PolicyDocument: {
        Statement: [
          {
            Sid: 'EnqueueRetries',
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            // The channel queues and the lane queues (docs/architecture.md §11), by logical id.
            Resource: [
              synth.stateful.queues.email,
              synth.stateful.queues.sms,
              ...[synth.stateful.lanes.email, synth.stateful.lanes.sms].flatMap((l) => [l.critical, l.bulk]),
            ]
              .map((q) => logicalId(q.queue))
              .sort()
              .map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
          },
        ],
      },
    });
  });
});
