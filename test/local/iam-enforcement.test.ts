/**
 * The local stack's IAM check (local/iam/): IAM's evaluation rules, what each AWS call asks IAM
 * for, and the check on real SDK clients: a call outside the role's policy fails with the
 * service's own AccessDeniedException before any byte leaves the process, a call inside it goes
 * out unchanged. The clients talk to a counting HTTP server that answers `{}`, so "went out" is
 * observed, not assumed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  DynamoDBServiceException,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  AccessDeniedException as EventBridgeAccessDenied,
  EventBridgeClient,
  PutEventsCommand,
} from '@aws-sdk/client-eventbridge';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import {
  AccessDeniedException as EumAccessDenied,
  PinpointSMSVoiceV2Client,
  SendTextMessageCommand,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { CreateScheduleCommand, SchedulerClient, SchedulerServiceException } from '@aws-sdk/client-scheduler';
import {
  GetSecretValueCommand,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { SESv2Client, SESv2ServiceException, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SQSServiceException } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildAwsClients } from '../../lambdas/wiring/aws-clients.ts';
import {
  enforceIam,
  type LocalIam,
  type RolePolicies,
  readRolePolicies,
  stopEnforcingIam,
} from '../../local/iam/enforce.ts';
import { type PolicyStatement, RolePolicy } from '../../local/iam/policy.ts';
import { authorizationRequests, UnmodelledCallError } from '../../local/iam/requests.ts';
import { instantiate, type LocalPlace } from '../../local/iam/resources.ts';
import { type LocalS3, startLocalS3 } from '../../local/s3/server.ts';
import { makeDataDir } from '../helpers/local-stack.ts';

const REGION = 'us-east-1';
const QUEUE = (name: string) => `arn:aws:sqs:${REGION}:000000000000:${name}`;
const ENV = {
  LEDGER_TABLE_NAME: 'ledger-t',
  EMAIL_QUEUE_ARN: QUEUE('nl-email'),
  SMS_QUEUE_ARN: QUEUE('nl-sms'),
  SCHEDULER_ROLE_ARN: 'arn:aws:iam::000000000000:role/notice-ledger-scheduler',
  ENVELOPE_KMS_KEY_ID: `arn:aws:kms:${REGION}:000000000000:key/1111`,
  ESCALATION_EVENT_BUS: 'escalations',
  FINGERPRINT_KEY_SECRET_ARN: `arn:aws:secretsmanager:${REGION}:000000000000:secret:fp-AbCd`,
  EUM_ORIGINATION_IDENTITY: 'phone-abc',
};
const PLACE: LocalPlace = { region: REGION, env: ENV };

// --- IAM's rules ---------------------------------------------------------------------------------

describe('local IAM: evaluation', () => {
  const policy = (statements: PolicyStatement[]) => new RolePolicy(statements, PLACE);
  const table = `arn:aws:dynamodb:${REGION}:000000000000:table/ledger-t`;

  it('allows what an Allow matches; an index is not its table; nothing matching is an implicit deny', () => {
    const role = policy([
      { effect: 'Allow', actions: ['dynamodb:Query', 'dynamodb:Get*'], resources: [table] },
    ]);
    expect(role.authorize([{ action: 'dynamodb:Query', resource: table }])).toEqual({ allowed: true });
    expect(role.authorize([{ action: 'DynamoDB:GetItem', resource: table }])).toEqual({ allowed: true });
    const onIndex = { action: 'dynamodb:Query', resource: `${table}/index/open-due` };
    expect(role.authorize([onIndex])).toEqual({ allowed: false, request: onIndex, deny: 'implicit' });
    expect(role.authorize([{ action: 'dynamodb:PutItem', resource: table }]).allowed).toBe(false);
  });

  it('every request of a call must pass; an explicit Deny wins over any Allow', () => {
    const role = policy([
      { effect: 'Allow', actions: ['sqs:*'], resources: ['*'] },
      { effect: 'Deny', actions: ['sqs:DeleteMessage'], resources: [QUEUE('nl-*')] },
    ]);
    const denied = { action: 'sqs:DeleteMessage', resource: QUEUE('nl-email') };
    expect(role.authorize([{ action: 'sqs:SendMessage', resource: QUEUE('nl-email') }, denied])).toEqual({
      allowed: false,
      request: denied,
      deny: 'explicit',
    });
  });

  it('conditions: an absent key fails a positive operator and passes a negated one or …IfExists', () => {
    const role = (operator: string) =>
      policy([
        {
          effect: 'Allow',
          actions: ['kms:Decrypt'],
          resources: ['*'],
          conditions: { [operator]: { 'kms:EncryptionContext:purpose': ['notice-ledger-envelope'] } },
        },
      ]);
    const withContext = {
      action: 'kms:Decrypt',
      resource: undefined,
      context: { 'kms:EncryptionContext:purpose': 'notice-ledger-envelope' },
    };
    const without = { action: 'kms:Decrypt', resource: undefined };
    expect(role('StringEquals').authorize([withContext]).allowed).toBe(true);
    expect(role('StringEquals').authorize([without]).allowed).toBe(false);
    expect(role('StringEqualsIfExists').authorize([without]).allowed).toBe(true);
    expect(role('StringNotEquals').authorize([without]).allowed).toBe(true);
    expect(role('StringNotEquals').authorize([withContext]).allowed).toBe(false);
    // A direct call never carries kms:ViaService: a grant "through DynamoDB only" does not cover it.
    const viaDynamo = policy([
      {
        effect: 'Allow',
        actions: ['kms:Decrypt'],
        resources: ['*'],
        conditions: { StringEquals: { 'kms:ViaService': [`dynamodb.\${Region}.amazonaws.com`] } },
      },
    ]);
    expect(viaDynamo.authorize([without]).allowed).toBe(false);
  });

  it('puts the stack’s values in: variables, their defaults, an SES domain; an unset or unmapped one matches nothing', () => {
    expect(
      instantiate(`arn:\${Partition}:dynamodb:\${Region}:\${Account}:table/\${LEDGER_TABLE_NAME}`, PLACE),
    ).toBe(`arn:aws:dynamodb:${REGION}:000000000000:table/ledger-t`);
    // The runtime's own default when the stack leaves a variable unset.
    expect(instantiate(`\${SCHEDULE_GROUP_NAME}`, PLACE)).toBe('notice-ledger-retries');
    expect(instantiate(`identity/\${SES_FROM_ADDRESS@domain}`, PLACE)).toBe('identity/example.com');
    expect(instantiate(`\${SES_CONFIGURATION_SET}`, PLACE)).toBeUndefined();
    expect(instantiate(`\${unmapped:NoticeLedger-Delivery/HttpLogs.Arn}`, PLACE)).toBeUndefined();
  });

  it('set operators on a multivalued key: ForAllValues holds when every value matches, ForAnyValue when one does', () => {
    const role = (operator: string) =>
      policy([
        {
          effect: 'Allow',
          actions: ['dynamodb:BatchWriteItem'],
          resources: ['*'],
          conditions: { [operator]: { 'dynamodb:LeadingKeys': ['K#*'] } },
        },
      ]);
    const write = (...keys: string[]) => ({
      action: 'dynamodb:BatchWriteItem',
      resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/ledger-t',
      context: { 'dynamodb:LeadingKeys': keys },
    });
    expect(role('ForAllValues:StringLike').authorize([write('K#ntc_1', 'K#ntc_2')]).allowed).toBe(true);
    // One item outside the key records refuses the whole batch.
    expect(role('ForAllValues:StringLike').authorize([write('K#ntc_1', 'N#ntc_1')]).allowed).toBe(false);
    expect(role('ForAnyValue:StringLike').authorize([write('K#ntc_1', 'N#ntc_1')]).allowed).toBe(true);
    expect(role('ForAnyValue:StringLike').authorize([write('N#ntc_1')]).allowed).toBe(false);
    // A single-valued operator on a list holds only for exactly one value.
    expect(role('StringLike').authorize([write('K#ntc_1')]).allowed).toBe(true);
    expect(role('StringLike').authorize([write('K#ntc_1', 'K#ntc_2')]).allowed).toBe(false);
  });

  it('refuses a condition operator it does not evaluate (so a new one cannot pass unnoticed)', () => {
    expect(
      () =>
        new RolePolicy(
          [
            {
              effect: 'Allow',
              actions: ['*'],
              resources: ['*'],
              conditions: { IpAddress: { 'aws:SourceIp': ['1'] } },
            },
          ],
          PLACE,
        ),
    ).toThrow(/IpAddress is not evaluated locally/);
  });
});

describe('local IAM: what a call asks IAM for', () => {
  const requests = (client: string, command: string, input: unknown) =>
    authorizationRequests(client, command, input, PLACE);
  const table = `arn:aws:dynamodb:${REGION}:000000000000:table/ledger-t`;

  it('DynamoDB: a query of an index names the index; transactions and batches each table, as the item action', () => {
    expect(
      requests('DynamoDBClient', 'QueryCommand', { TableName: 'ledger-t', IndexName: 'open-due' }),
    ).toEqual([{ action: 'dynamodb:Query', resource: `${table}/index/open-due` }]);
    expect(
      requests('DynamoDBClient', 'TransactWriteItemsCommand', {
        TransactItems: [{ Put: { TableName: 'ledger-t' } }, { ConditionCheck: { TableName: 'other' } }],
      }),
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: table },
      {
        action: 'dynamodb:ConditionCheckItem',
        resource: `arn:aws:dynamodb:${REGION}:000000000000:table/other`,
      },
    ]);
    expect(requests('DynamoDBClient', 'BatchGetItemCommand', { RequestItems: { 'ledger-t': {} } })).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: table },
    ]);
  });

  it('DynamoDB: item calls and batches carry their partition keys as dynamodb:LeadingKeys, marshalled or not', () => {
    expect(
      requests('DynamoDBClient', 'BatchWriteItemCommand', {
        RequestItems: {
          'ledger-t': [
            { PutRequest: { Item: { pk: { S: 'K#ntc_1' }, sk: { S: 'C#sms' } } } },
            { PutRequest: { Item: { pk: 'K#ntc_2', sk: 'C#email' } } },
            { DeleteRequest: { Key: { pk: { S: 'N#ntc_3' }, sk: { S: 'C#sms' } } } },
          ],
        },
      }),
    ).toEqual([
      {
        action: 'dynamodb:BatchWriteItem',
        resource: table,
        context: { 'dynamodb:LeadingKeys': ['K#ntc_1', 'K#ntc_2', 'N#ntc_3'] },
      },
    ]);
    expect(
      requests('DynamoDBClient', 'UpdateItemCommand', {
        TableName: 'ledger-t',
        Key: { pk: { S: 'K#ntc_1' } },
      }),
    ).toEqual([
      { action: 'dynamodb:UpdateItem', resource: table, context: { 'dynamodb:LeadingKeys': ['K#ntc_1'] } },
    ]);
    expect(
      requests('DynamoDBClient', 'PutItemCommand', { TableName: 'ledger-t', Item: { pk: { S: 'N#ntc_1' } } }),
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: table, context: { 'dynamodb:LeadingKeys': ['N#ntc_1'] } },
    ]);
  });

  it('SQS: batches as their single action, the queue from its URL; Scheduler: the schedule and PassRole to Scheduler', () => {
    const url = 'https://sqs.us-east-1.amazonaws.com/000000000000/nl-sms';
    expect(requests('SQSClient', 'SendMessageBatchCommand', { QueueUrl: url })).toEqual([
      { action: 'sqs:SendMessage', resource: ENV.SMS_QUEUE_ARN },
    ]);
    expect(
      requests('SchedulerClient', 'CreateScheduleCommand', {
        Name: 'n1',
        GroupName: 'g',
        Target: { RoleArn: ENV.SCHEDULER_ROLE_ARN },
      }),
    ).toEqual([
      {
        action: 'scheduler:CreateSchedule',
        resource: `arn:aws:scheduler:${REGION}:000000000000:schedule/g/n1`,
      },
      {
        action: 'iam:PassRole',
        resource: ENV.SCHEDULER_ROLE_ARN,
        context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      },
    ]);
  });

  it('SES: the From address’s identity or its domain’s, with ses:FromAddress; KMS: the encryption context', () => {
    const [send] = requests('SESv2Client', 'SendEmailCommand', {
      FromEmailAddress: 'Notices <n@example.com>',
    });
    expect(send).toEqual({
      action: 'ses:SendEmail',
      resource: [
        `arn:aws:ses:${REGION}:000000000000:identity/n@example.com`,
        `arn:aws:ses:${REGION}:000000000000:identity/example.com`,
      ],
      context: { 'ses:FromAddress': 'n@example.com' },
    });
    expect(
      requests('KMSClient', 'DecryptCommand', { EncryptionContext: { purpose: 'notice-ledger-envelope' } }),
    ).toEqual([
      {
        action: 'kms:Decrypt',
        resource: undefined,
        context: { 'kms:EncryptionContext:purpose': 'notice-ledger-envelope' },
      },
    ]);
  });

  it('S3: an object as bucket/key (no Region, no account), HeadObject as GetObject, a listing as ListBucket on the bucket', () => {
    const object = 'arn:aws:s3:::archive-b/facts/day=2027-03-01/s/1.jsonl.gz';
    const key = { Bucket: 'archive-b', Key: 'facts/day=2027-03-01/s/1.jsonl.gz' };
    expect(requests('S3Client', 'PutObjectCommand', { ...key, IfNoneMatch: '*' })).toEqual([
      { action: 's3:PutObject', resource: object },
    ]);
    expect(requests('S3Client', 'PutObjectCommand', { ...key, ObjectLockMode: 'COMPLIANCE' })).toEqual([
      { action: 's3:PutObject', resource: object },
      { action: 's3:PutObjectRetention', resource: object },
    ]);
    expect(requests('S3Client', 'HeadObjectCommand', key)).toEqual([
      { action: 's3:GetObject', resource: object },
    ]);
    expect(requests('S3Client', 'GetObjectCommand', key)).toEqual([
      { action: 's3:GetObject', resource: object },
    ]);
    expect(requests('S3Client', 'ListObjectsV2Command', { Bucket: 'archive-b', Prefix: 'rows/' })).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::archive-b', context: { 's3:prefix': 'rows/' } },
    ]);
    expect(requests('S3Client', 'DeleteObjectCommand', { ...key, VersionId: 'v1' })).toEqual([
      { action: 's3:DeleteObjectVersion', resource: object },
    ]);
  });

  it('a client or call it has no rule for is an error, never silently allowed', () => {
    expect(() => requests('S3Client', 'CreateBucketCommand', { Bucket: 'b' })).toThrow(UnmodelledCallError);
    expect(() => requests('S3Client', 'GetObjectCommand', { Key: 'k' })).toThrow(UnmodelledCallError);
    expect(() => requests('SESv2Client', 'CreateEmailIdentityCommand', {})).toThrow(UnmodelledCallError);
  });
});

// --- on real SDK clients -------------------------------------------------------------------------

let server: Server;
let endpoint: string;
let received: string[] = [];
let iam: LocalIam | undefined;
const logged: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    received.push(`${request.method} ${request.url} ${request.headers['x-amz-target'] ?? ''}`);
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL: endpoint,
  });
});

afterAll(async () => {
  stopEnforcingIam();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  received = [];
  logged.length = 0;
});

/** A queue's URL at the counting server (SQS sends to the URL's host). */
const queueUrl = (name: string) => `${endpoint}/000000000000/${name}`;

function enforce(
  policies: RolePolicies = readRolePolicies(),
  providers = { email: 'ses', sms: 'eum' },
): LocalIam {
  iam = enforceIam({ policies, place: PLACE, providers, log: (line) => logged.push(line) });
  return iam;
}

async function failure(promise: Promise<unknown>): Promise<Record<string, unknown> & Error> {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown> & Error;
  }
  throw new Error('expected the call to fail');
}

describe('local IAM on the functions’ clients (the committed role policies)', () => {
  it('the http function may query the open index (the operator list); a sender may not, and nothing leaves', async () => {
    // Prepare
    enforce();
    const http = buildAwsClients('http').dynamodb;
    const sender = buildAwsClients('sendEmail').dynamodb;
    const query = () =>
      new QueryCommand({ TableName: 'ledger-t', IndexName: 'open-due', KeyConditionExpression: 'x' });

    // Act
    await http.send(query());
    const sent = received.length;
    const error = await failure(sender.send(query()));

    // Assess: the service's own exception, as the SDK builds it from an AWS answer.
    expect(sent).toBe(1);
    expect(received).toHaveLength(1);
    expect(error).toBeInstanceOf(DynamoDBServiceException);
    expect(error.name).toBe('AccessDeniedException');
    expect(error.$fault).toBe('client');
    expect((error.$metadata as { httpStatusCode: number }).httpStatusCode).toBe(400);
    expect(error.message).toBe(
      'User: arn:aws:sts::000000000000:assumed-role/notice-ledger-sendEmail-ses/sendEmail is not authorized to ' +
        `perform: dynamodb:Query on resource: arn:aws:dynamodb:${REGION}:000000000000:table/ledger-t/index/open-due ` +
        'because no identity-based policy allows the dynamodb:Query action',
    );
    expect(iam?.denials()).toEqual([
      {
        role: 'sendEmail@ses',
        action: 'dynamodb:Query',
        resource: `arn:aws:dynamodb:${REGION}:000000000000:table/ledger-t/index/open-due`,
        deny: 'implicit',
      },
    ]);
    expect(logged.join('\n')).toContain('IAM: sendEmail@ses may not dynamodb:Query');
  });

  it('the key table: the archiver may only UpdateItem there, the http function only GetItem; neither elsewhere', async () => {
    // Prepare: the key table the local stack derives from the ledger table's name (KEY_TABLE_NAME unset).
    enforce();
    const archiver = buildAwsClients('archiver').dynamodb;
    const http = buildAwsClients('http').dynamodb;
    const put = (table: string) =>
      new UpdateItemCommand({
        TableName: table,
        Key: { b: { S: 'ab' } },
        UpdateExpression: 'SET #r = :r',
        ExpressionAttributeNames: { '#r': 'cdefs' },
        ExpressionAttributeValues: { ':r': { S: 'd x - y z' } },
      });
    const get = (table: string) => new GetItemCommand({ TableName: table, Key: { b: { S: 'ab' } } });

    // Act
    await archiver.send(put('ledger-t-keys'));
    await http.send(get('ledger-t-keys'));
    const allowed = received.length;
    const denied = [
      await failure(archiver.send(put('ledger-t'))),
      await failure(archiver.send(get('ledger-t-keys'))),
      await failure(http.send(put('ledger-t-keys'))),
    ];

    // Assess
    expect(allowed).toBe(2);
    expect(received).toHaveLength(2);
    for (const error of denied) expect(error.name).toBe('AccessDeniedException');
    expect(iam?.denials().map((d) => `${d.role} ${d.action} ${d.resource.split(':table/')[1]}`)).toEqual([
      'archiver dynamodb:UpdateItem ledger-t',
      'archiver dynamodb:GetItem ledger-t-keys',
      'http dynamodb:UpdateItem ledger-t-keys',
    ]);
  });

  it('each service answers with its AccessDeniedException (its modelled class where it has one); allowed calls go out', async () => {
    // Prepare: intake may enqueue and seal; it may not send texts, schedule, decrypt or read another secret.
    enforce();
    const { adopt, sqs } = buildAwsClients('http');
    const sender = buildAwsClients('sendSms').adopt;
    const onEndpoint = { endpoint, region: REGION };

    // Act
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl('nl-email'),
        Entries: [{ Id: '1', MessageBody: '{}' }],
      }),
    );
    await adopt(new KMSClient(onEndpoint)).send(
      new GenerateDataKeyCommand({
        KeyId: ENV.ENVELOPE_KMS_KEY_ID,
        KeySpec: 'AES_256',
        EncryptionContext: { purpose: 'notice-ledger-envelope' },
      }),
    );
    await adopt(new EventBridgeClient(onEndpoint)).send(
      new PutEventsCommand({
        Entries: [{ EventBusName: 'escalations', Source: 's', DetailType: 'd', Detail: '{}' }],
      }),
    );
    await adopt(new SecretsManagerClient(onEndpoint)).send(
      new GetSecretValueCommand({ SecretId: ENV.FINGERPRINT_KEY_SECRET_ARN }),
    );
    const allowed = received.length;
    const errors = {
      sqs: await failure(sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl('other'), Entries: [] }))),
      kms: await failure(
        adopt(new KMSClient(onEndpoint)).send(
          new DecryptCommand({
            CiphertextBlob: new Uint8Array(1),
            EncryptionContext: { purpose: 'notice-ledger-envelope' },
          }),
        ),
      ),
      events: await failure(
        adopt(new EventBridgeClient(onEndpoint)).send(
          new PutEventsCommand({
            Entries: [{ EventBusName: 'other', Source: 's', DetailType: 'd', Detail: '{}' }],
          }),
        ),
      ),
      secrets: await failure(
        adopt(new SecretsManagerClient(onEndpoint)).send(
          new GetSecretValueCommand({
            SecretId: `arn:aws:secretsmanager:${REGION}:000000000000:secret:other`,
          }),
        ),
      ),
      scheduler: await failure(
        adopt(new SchedulerClient(onEndpoint)).send(
          new CreateScheduleCommand({
            Name: 'n',
            GroupName: 'notice-ledger-retries',
            ScheduleExpression: 'at(2030-01-01T00:00:00)',
            FlexibleTimeWindow: { Mode: 'OFF' },
            Target: { Arn: ENV.EMAIL_QUEUE_ARN, RoleArn: ENV.SCHEDULER_ROLE_ARN },
          }),
        ),
      ),
      ses: await failure(
        adopt(new SESv2Client(onEndpoint)).send(
          new SendEmailCommand({
            FromEmailAddress: 'notices@example.com',
            Destination: { ToAddresses: ['a@example.org'] },
            Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 'b' } } } },
          }),
        ),
      ),
      eum: await failure(
        adopt(new PinpointSMSVoiceV2Client(onEndpoint)).send(
          new SendTextMessageCommand({
            DestinationPhoneNumber: '+15550000000',
            OriginationIdentity: 'phone-abc',
          }),
        ),
      ),
    };
    // The SMS sender may send from its origination identity, and from no other.
    await sender(new PinpointSMSVoiceV2Client(onEndpoint)).send(
      new SendTextMessageCommand({
        DestinationPhoneNumber: '+15550000000',
        OriginationIdentity: 'phone-abc',
      }),
    );
    const eumOther = await failure(
      sender(new PinpointSMSVoiceV2Client(onEndpoint)).send(
        new SendTextMessageCommand({
          DestinationPhoneNumber: '+15550000000',
          OriginationIdentity: 'phone-other',
        }),
      ),
    );

    // Assess
    expect(allowed).toBe(4);
    expect(received).toHaveLength(5);
    const classes = {
      sqs: SQSServiceException,
      kms: KMSServiceException,
      events: EventBridgeAccessDenied,
      secrets: SecretsManagerServiceException,
      scheduler: SchedulerServiceException,
      ses: SESv2ServiceException,
      eum: EumAccessDenied,
    };
    for (const [service, error] of Object.entries(errors)) {
      expect(error, service).toBeInstanceOf(classes[service as keyof typeof classes]);
      // SQS keeps its query-protocol code (`x-amzn-query-error`), as the SDK reports it from SQS.
      expect(error.name, service).toBe(service === 'sqs' ? 'AccessDenied' : 'AccessDeniedException');
      expect(error.message, service).toMatch(
        /^User: arn:aws:sts::000000000000:assumed-role\/notice-ledger-http\/http is not authorized/,
      );
      const status = (error.$metadata as { httpStatusCode: number }).httpStatusCode;
      expect(status, service).toBe(service === 'scheduler' || service === 'ses' ? 403 : 400);
    }
    expect(eumOther).toBeInstanceOf(EumAccessDenied);
    expect(eumOther.message).toContain(
      `sms-voice:SendTextMessage on resource: arn:aws:sms-voice:${REGION}:000000000000:phone-number/phone-other`,
    );
  });

  it('a sender may not pass the scheduler role to another service, nor schedule outside the retry group', async () => {
    // Prepare
    const local = enforce();
    const scheduler = local.adopt('sendEmail', new SchedulerClient({ endpoint, region: REGION }));
    const schedule = (group: string) =>
      new CreateScheduleCommand({
        Name: 'ntc_1-email-2',
        GroupName: group,
        ScheduleExpression: 'at(2030-01-01T00:00:00)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: { Arn: ENV.EMAIL_QUEUE_ARN, RoleArn: ENV.SCHEDULER_ROLE_ARN },
      });

    // Act
    await scheduler.send(schedule('notice-ledger-retries'));
    const elsewhere = await failure(scheduler.send(schedule('default')));
    const otherRole = await failure(
      scheduler.send(
        new CreateScheduleCommand({
          Name: 'n',
          GroupName: 'notice-ledger-retries',
          ScheduleExpression: 'at(2030-01-01T00:00:00)',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: ENV.EMAIL_QUEUE_ARN, RoleArn: 'arn:aws:iam::000000000000:role/admin' },
        }),
      ),
    );

    // Assess
    expect(received).toHaveLength(1);
    expect(elsewhere.message).toContain(
      'scheduler:CreateSchedule on resource: arn:aws:scheduler:us-east-1:000000000000:schedule/default/',
    );
    expect(otherRole.message).toContain('iam:PassRole on resource: arn:aws:iam::000000000000:role/admin');
  });

  it('refuses to start without a policy for a selected provider’s sender', () => {
    const policies = readRolePolicies();
    const { 'sendSms@eum': _dropped, ...others } = policies.roles;
    expect(() => enforce({ roles: others }, { email: 'ses', sms: 'eum' })).toThrow(
      /no policy for sendSms@eum/,
    );
  });
});

describe('local IAM on an S3 client (the archive store, local/s3/)', () => {
  let store: LocalS3 | undefined;
  afterAll(async () => {
    await store?.close();
  });

  it('S3 answers a denied call with AccessDenied (403); without s3:ListBucket a missing key is 403, not 404', async () => {
    // Prepare: the real local store; a role that may write and read the archive's objects, not list them.
    store = await startLocalS3({
      directory: join(await makeDataDir('notice-ledger-iam-s3-'), 's3'),
      journalFile: join(await makeDataDir('notice-ledger-iam-s3-'), 'journal.jsonl'),
    });
    const setup = new S3Client({ endpoint: store.endpoint, region: REGION });
    await setup.send(new CreateBucketCommand({ Bucket: 'archive-b' }));
    setup.destroy();
    const objects = `arn:\${Partition}:s3:::\${ARCHIVE_BUCKET}/*`;
    const policies = (list: boolean): RolePolicies => ({
      roles: {
        ...readRolePolicies().roles,
        outcomeStream: [
          { effect: 'Allow', actions: ['s3:PutObject', 's3:GetObject'], resources: [objects] },
          ...(list
            ? [
                {
                  effect: 'Allow' as const,
                  actions: ['s3:ListBucket'],
                  resources: [`arn:\${Partition}:s3:::\${ARCHIVE_BUCKET}`],
                },
              ]
            : []),
        ],
      },
    });
    const place = { region: REGION, env: { ...ENV, ARCHIVE_BUCKET: 'archive-b' } };
    const clientAs = (list: boolean) => {
      iam = enforceIam({
        policies: policies(list),
        place,
        providers: { email: 'ses', sms: 'eum' },
        log: (line) => logged.push(line),
      });
      return iam.adopt('outcomeStream', new S3Client({ endpoint: store?.endpoint, region: REGION }));
    };
    const s3 = clientAs(false);

    // Act
    await s3.send(new PutObjectCommand({ Bucket: 'archive-b', Key: 'facts/a', Body: 'x', IfNoneMatch: '*' }));
    const read = await s3.send(new GetObjectCommand({ Bucket: 'archive-b', Key: 'facts/a' }));
    const elsewhere = await failure(
      s3.send(new PutObjectCommand({ Bucket: 'other-b', Key: 'facts/a', Body: 'x' })),
    );
    const listing = await failure(s3.send(new ListObjectsV2Command({ Bucket: 'archive-b' })));
    const headMissing = await failure(
      s3.send(new HeadObjectCommand({ Bucket: 'archive-b', Key: 'facts/none' })),
    );
    const getMissing = await failure(
      s3.send(new GetObjectCommand({ Bucket: 'archive-b', Key: 'facts/none' })),
    );
    const denials = iam?.denials() ?? [];
    s3.destroy();
    const lister = clientAs(true);
    const headWithList = await failure(
      lister.send(new HeadObjectCommand({ Bucket: 'archive-b', Key: 'facts/none' })),
    );
    lister.destroy();

    // Assess
    expect(await read.Body?.transformToString()).toBe('x');
    expect(elsewhere).toBeInstanceOf(S3ServiceException);
    expect([elsewhere.name, (elsewhere.$metadata as { httpStatusCode: number }).httpStatusCode]).toEqual([
      'AccessDenied',
      403,
    ]);
    expect(elsewhere.message).toBe(
      'User: arn:aws:sts::000000000000:assumed-role/notice-ledger-outcomeStream/outcomeStream is not authorized to ' +
        'perform: s3:PutObject on resource: "arn:aws:s3:::other-b/facts/a" because no identity-based policy allows ' +
        'the s3:PutObject action',
    );
    expect([listing.name, (listing.$metadata as { httpStatusCode: number }).httpStatusCode]).toEqual([
      'AccessDenied',
      403,
    ]);
    expect((headMissing.$metadata as { httpStatusCode: number }).httpStatusCode).toBe(403);
    expect([getMissing.name, (getMissing.$metadata as { httpStatusCode: number }).httpStatusCode]).toEqual([
      'AccessDenied',
      403,
    ]);
    expect(denials.map((d) => `${d.action} ${d.resource}`)).toEqual([
      's3:PutObject arn:aws:s3:::other-b/facts/a',
      's3:ListBucket arn:aws:s3:::archive-b',
      's3:ListBucket arn:aws:s3:::archive-b',
      's3:ListBucket arn:aws:s3:::archive-b',
    ]);
    expect([
      headWithList.name,
      (headWithList.$metadata as { httpStatusCode: number }).httpStatusCode,
    ]).toEqual(['NotFound', 404]);
  });
});

describe('local IAM: the mapping covers the committed role policies', () => {
  it('names only variables the local stack sets or defaults, or that it has nothing for; evaluates every condition', () => {
    // Prepare: what each placeholder may be, locally.
    const LOCAL = new Set([
      'Partition',
      'Region',
      'Account',
      'LEDGER_TABLE_NAME',
      'SCHEDULE_GROUP_NAME',
      'SCHEDULER_ROLE_ARN',
      'SES_FROM_ADDRESS',
      'SES_FROM_ADDRESS@domain',
      'EUM_OPT_OUT_LIST',
      'EUM_ORIGINATION_IDENTITY',
      ...['EMAIL', 'SMS'].flatMap((c) => ['', '_CRITICAL', '_BULK'].map((lane) => `${c}${lane}_QUEUE_ARN`)),
      // The watch queue (docs/table-design.md "Watched rows"), which local/stack.ts sets.
      'WATCH_QUEUE_ARN',
      // Outcome events (docs/outcome-events.md): the stream, the local bus, the webhook queues.
      'LEDGER_TABLE_STREAM_ARN',
      'OUTCOME_EVENT_BUS',
      'OUTCOME_WEBHOOK_QUEUE_ARN',
      'OUTCOME_WEBHOOK_DLQ_ARN',
      // The archive (docs/archive.md): the local store's bucket, and the key table.
      'ARCHIVE_BUCKET',
      'KEY_TABLE_NAME',
    ]);
    // AWS only: locally escalations are log lines, envelopes use a local key, keys come from the
    // environment, providers' credentials too, and no configuration set is named.
    const AWS_ONLY = new Set([
      'ESCALATION_EVENT_BUS',
      'ENVELOPE_KMS_KEY_ID',
      'FINGERPRINT_KEY_SECRET_ARN',
      'TWILIO_SECRET_ARN',
      'RESEND_SECRET_ARN',
      'SENDGRID_SECRET_ARN',
      'INFRAI_SECRET_ARN',
      'SES_CONFIGURATION_SET',
      'EUM_CONFIGURATION_SET',
      // Locally the signing secret is OUTCOME_WEBHOOK_SECRET itself.
      'OUTCOME_WEBHOOK_SECRET_ARN',
    ]);
    const KEYS = new Set([
      'kms:viaservice',
      'kms:encryptioncontext:purpose',
      'iam:passedtoservice',
      'ses:fromaddress',
      'events:source',
      // The archiver's key records (local/iam/requests.ts: item calls and batches carry it).
      'dynamodb:leadingkeys',
    ]);
    const placeholders = new Set<string>();
    const conditionKeys = new Set<string>();

    // Act
    for (const statements of Object.values(readRolePolicies().roles)) {
      for (const s of statements) {
        const texts = [
          ...s.resources,
          ...Object.values(s.conditions ?? {}).flatMap((k) => Object.values(k).flat()),
        ];
        for (const text of texts)
          for (const [, name] of text.matchAll(/\$\{([^}]+)\}/g)) placeholders.add(name as string);
        for (const keys of Object.values(s.conditions ?? {}))
          for (const key of Object.keys(keys)) conditionKeys.add(key.toLowerCase());
      }
    }

    // Assess
    const unknown = [...placeholders].filter(
      (p) => !LOCAL.has(p) && !AWS_ONLY.has(p) && !p.startsWith('unmapped:'),
    );
    expect(unknown).toEqual([]);
    expect([...LOCAL].filter((p) => !placeholders.has(p))).toEqual([]);
    expect([...conditionKeys].filter((k) => !KEYS.has(k))).toEqual([]);
  });
});
