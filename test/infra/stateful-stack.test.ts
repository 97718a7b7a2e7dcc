import { randomInt } from 'node:crypto';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { ledgerTableDefinition } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { LedgerTable as Schema } from '../../lambdas/contract/ledger-table.ts';
import type { ProviderDescriptor } from '../../lambdas/contract/providers.ts';
import { descriptor as twilioDescriptor } from '../../lambdas/providers/twilio/descriptor.ts';
import { queueLabel } from '../../lib/constructs/channel-queue.ts';
import {
  PROVIDER_SECRET_INITIAL_VALUE,
  PROVIDER_SECRET_TAG,
  providerSecret,
  secretFields,
} from '../../lib/providers/provider-secret.ts';
import {
  grantsOf,
  logicalId,
  roleStatements,
  type Statement,
  type Synthesized,
  synthesize,
} from './synth.ts';

let synth: Synthesized;
let template: Template;

beforeAll(() => {
  // The stateful stack has no code: skip bundling.
  synth = synthesize({ bundle: false });
  template = synth.statefulTemplate;
});

describe('stateful stack: ledger table', () => {
  it('is provisioned (auto scaling: test/infra/table-capacity.test.ts), recoverable, undeletable and encrypted with the data key', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: Match.absent(),
        ProvisionedThroughput: Match.objectLike({}),
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

  it('creates each provider secret without a fixed name, holding one constant value, retained and tagged for adoption', () => {
    const twilio = synth.stateful.secrets.providers.get('twilio') as Secret;
    const resource = template.findResources('AWS::SecretsManager::Secret')[logicalId(twilio)];
    // No Name: a retained secret of a provider that left the deployment would make its return
    // fail ("already exists"); CloudFormation generates a fresh name instead.
    expect(resource?.Properties.Name).toBeUndefined();
    // The one value CloudFormation ever writes: never derived from the fields, so never rewritten.
    expect(resource?.Properties.SecretString).toBe(PROVIDER_SECRET_INITIAL_VALUE);
    expect(resource?.Properties.GenerateSecretString).toBeUndefined();
    expect(resource?.Properties.Tags).toEqual([{ Key: PROVIDER_SECRET_TAG, Value: 'notice-ledger/twilio' }]);
    expect(resource?.Properties.KmsKeyId).toEqual({
      'Fn::GetAtt': [logicalId(synth.stateful.keys.data), 'Arn'],
    });
    for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret'))) {
      expect(secret.DeletionPolicy).toBe('Retain');
      expect(secret.UpdateReplacePolicy).toBe('Retain');
    }
    // The fields are named where a change costs nothing: the output's description.
    expect(template.toJSON().Outputs.TwilioSecretArn.Description).toBe(
      'Fill with { accountSid, authToken, from } (docs/deploy.md)',
    );
  });

  it('writes nothing into a provider secret that depends on its fields: a change of them leaves the resource as it was', () => {
    // CloudFormation puts SecretString again on any update that changes it (GenerateSecretString
    // likewise generates a new value), over the credentials put-secret-value wrote.
    const build = (descriptor: ProviderDescriptor) => {
      const stack = new Stack(new App(), 'S');
      providerSecret(stack, descriptor, {
        encryptionKey: new Key(stack, 'K'),
        namePrefix: 'notice-ledger',
        existingArn: undefined,
      });
      return Template.fromStack(stack).findResources('AWS::SecretsManager::Secret');
    };
    const original: ProviderDescriptor = twilioDescriptor;
    const changed: ProviderDescriptor = {
      ...original,
      settings: [
        ...original.settings.map((s) => (s.secretField === 'from' ? { ...s, secretField: 'sender' } : s)),
        { name: 'TWILIO_REGION_HINT', description: 'a new credential', secretField: 'regionHint' },
      ],
    };
    expect(secretFields(changed)).not.toEqual(secretFields(original));
    expect(build(changed)).toEqual(build(original));
  });

  it('adopts a provider secret the settings name (a retained one, or the operator’s), with the data key’s use through Secrets Manager', () => {
    const arn =
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SecretsTwilio9D01B6F3-AbCdEfGhIjKl-AbC123';
    const adopted = synthesize({ settings: { twilioSecretArn: arn }, bundle: false });
    // Nothing created, nothing written: only the fingerprint key is a resource.
    adopted.statefulTemplate.resourceCountIs('AWS::SecretsManager::Secret', 1);
    expect(adopted.statefulTemplate.toJSON().Outputs.TwilioSecretArn.Value).toBe(arn);
    // The data key's use through Secrets Manager, as intake has it for the fingerprint key (which
    // the same key encrypts): what a secret this stack created and retained needs.
    const withoutSid = ({ Sid: _sid, ...rest }: Statement) => rest;
    const dataKeyViaSecretsManager = roleStatements(
      adopted.deliveryTemplate,
      logicalId(adopted.delivery.functions.http.role),
    ).find((st) => st.Sid === 'DecryptFingerprintKeySecret') as Statement;
    expect(dataKeyViaSecretsManager).toBeDefined();
    for (const fn of [adopted.delivery.functions.sendSms, adopted.delivery.functions.reconciler]) {
      const statements = roleStatements(adopted.deliveryTemplate, logicalId(fn.role));
      expect(grantsOf(statements).get('secretsmanager:GetSecretValue')).toEqual([JSON.stringify(arn)]);
      const decrypt = statements.find((st) => st.Sid === 'DecryptTwilioSecret');
      expect(decrypt && withoutSid(decrypt)).toEqual(withoutSid(dataKeyViaSecretsManager));
    }
  });
});

describe('stateful stack: outputs', () => {
  it('names each work queue’s dead-letter queue by the label of its alarm', () => {
    const outputs = template.toJSON().Outputs;
    const { queues, lanes } = synth.stateful;
    const all = [
      queues.email,
      queues.sms,
      lanes.email.critical,
      lanes.email.bulk,
      lanes.sms.critical,
      lanes.sms.bulk,
    ];
    expect(all.map(queueLabel)).toEqual([
      'Email',
      'Sms',
      'EmailCritical',
      'EmailBulk',
      'SmsCritical',
      'SmsBulk',
    ]);
    for (const q of all) {
      expect(outputs[`${queueLabel(q)}DeadLetterQueueArn`]?.Value).toEqual({
        'Fn::GetAtt': [logicalId(q.deadLetterQueue), 'Arn'],
      });
    }
  });
});

describe('stateful stack: channel queues', () => {
  it('encrypts and TLS-guards all fourteen queues (channel, lane and watch queues, their DLQs) and retains them', () => {
    template.resourceCountIs('AWS::SQS::Queue', 14);
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
      14,
    );
  });

  it('redrives each channel queue to its DLQ after ≥ 5 receives, with visibility ≥ 6 × the sender timeout', () => {
    const senderTimeout = synth.config.senderTimeoutSeconds;
    const work = Object.values(template.findResources('AWS::SQS::Queue')).filter(
      (q) => q.Properties.RedrivePolicy,
    );
    // The two channel queues and the four lane queues (docs/architecture.md §11); the watch queue.
    expect(work).toHaveLength(7);
    const watch = logicalId(synth.stateful.watch.queue);
    for (const [id, queue] of Object.entries(template.findResources('AWS::SQS::Queue'))) {
      if (!queue.Properties.RedrivePolicy) continue;
      expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
      // The watch queue's consumer is the watch function (30 s), not a sender.
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
        id === watch ? 180 : 6 * senderTimeout,
      );
    }
  });

  it('keeps the watches in a queue of their own, longer than any delay (15 min), with a DLQ', () => {
    const watch = template.findResources('AWS::SQS::Queue')[logicalId(synth.stateful.watch.queue)];
    expect(watch?.Properties.MessageRetentionPeriod).toBeGreaterThan(900);
    expect(watch?.Properties.RedrivePolicy.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': [logicalId(synth.stateful.watch.deadLetterQueue), 'Arn'],
    });
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
