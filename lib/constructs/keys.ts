import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface NoticeKeysProps {
  /** Prefix of the key aliases, e.g. `notice-ledger` → `alias/notice-ledger/data`. */
  readonly aliasPrefix: string;
}

/**
 * The three customer-managed KMS keys, each with one purpose so that a grant on one says exactly
 * what it opens:
 * - `data`: the ledger table and the secrets at rest (who may read the table may not, by that
 *   grant alone, open an envelope);
 * - `envelope`: wraps the data keys that seal each intent's destination and variables
 *   (ENVELOPE_KMS_KEY_ID); intake may only GenerateDataKey, senders and reconciler Decrypt;
 * - `observability`: CloudWatch Logs groups and the alarm topic, which the logs, CloudWatch and
 *   EventBridge services must be able to use.
 *
 * All rotate yearly and are retained on stack deletion: deleting a key makes every backup,
 * retained log group and sealed envelope written with it unreadable.
 */
export class NoticeKeys extends Construct {
  readonly data: Key;
  readonly envelope: Key;
  readonly observability: Key;

  constructor(scope: Construct, id: string, props: NoticeKeysProps) {
    super(scope, id);
    const common = { enableKeyRotation: true, removalPolicy: RemovalPolicy.RETAIN } as const;
    this.data = new Key(this, 'Data', {
      ...common,
      alias: `${props.aliasPrefix}/data`,
      description: 'notice-ledger: ledger table and secrets at rest',
    });
    this.envelope = new Key(this, 'Envelope', {
      ...common,
      alias: `${props.aliasPrefix}/envelope`,
      description: 'notice-ledger: wraps the data keys of send envelopes (destination + variables)',
    });
    this.observability = new Key(this, 'Observability', {
      ...common,
      alias: `${props.aliasPrefix}/observability`,
      description: 'notice-ledger: CloudWatch Logs groups and the alarm topic',
    });

    const stack = Stack.of(this);
    // CloudWatch Logs encrypts with the key on behalf of log groups of this account and Region only.
    this.observability.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchLogsGroupsOfThisAccount',
        principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    // Alarm actions (CloudWatch) and the escalation rule (EventBridge) publish to the encrypted
    // topic, and need the key for it; only on behalf of this account's alarms and rules in this
    // Region (the confused-deputy guard AWS recommends for service principals). The delivery stack's
    // alarm and rule names are not known here (it depends on this stack, not the other way round),
    // so their ARNs are matched by pattern; the topic policy names the escalation rule itself.
    const publisher = (sid: string, service: 'cloudwatch' | 'events', sourceArn: string) =>
      this.observability.addToResourcePolicy(
        new PolicyStatement({
          sid,
          principals: [new ServicePrincipal(`${service}.amazonaws.com`)],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnLike: { 'aws:SourceArn': sourceArn },
          },
        }),
      );
    publisher(
      'AlarmsOfThisAccountToTheAlarmTopic',
      'cloudwatch',
      stack.formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    );
    publisher(
      'RulesOfThisAccountToTheAlarmTopic',
      'events',
      stack.formatArn({ service: 'events', resource: 'rule', resourceName: '*' }),
    );
  }
}
