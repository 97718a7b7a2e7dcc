/**
 * What IAM authorizes for one AWS SDK call: its action(s), the resource ARN(s) the call names and
 * the condition keys it carries, per the service's authorization reference. A call this module
 * has no rule for is refused loudly (an Error, not an AccessDenied): a new kind of call needs its
 * rule here before the local stack can say whether the role may make it.
 */
import { LedgerTable } from '../../lambdas/contract/ledger-table.ts';
import type { AuthorizationRequest } from './policy.ts';
import {
  eventBusArn,
  kmsKeyArn,
  type LocalPlace,
  queueArnFromName,
  queueArnFromUrl,
  s3Arn,
  scheduleArn,
  secretArn,
  sesArn,
  smsVoiceArn,
  tableArn,
} from './resources.ts';

type Input = Readonly<Record<string, unknown>>;
type Rule = (command: string, input: Input, place: LocalPlace) => AuthorizationRequest[];

/** The IAM service prefix of each SDK client the functions build (`context.clientName`). */
const SERVICES: Readonly<Record<string, { readonly prefix: string; readonly rule: Rule }>> = {
  DynamoDBClient: { prefix: 'dynamodb', rule: dynamodb },
  // The event source of a stream consumer reads the stream as the function's role (Lambda does too).
  DynamoDBStreamsClient: { prefix: 'dynamodb', rule: dynamodbStreams },
  SQSClient: { prefix: 'sqs', rule: sqs },
  SchedulerClient: { prefix: 'scheduler', rule: scheduler },
  SESv2Client: { prefix: 'ses', rule: ses },
  PinpointSMSVoiceV2Client: { prefix: 'sms-voice', rule: smsVoice },
  EventBridgeClient: { prefix: 'events', rule: events },
  KMSClient: { prefix: 'kms', rule: kms },
  SecretsManagerClient: { prefix: 'secretsmanager', rule: secretsManager },
  S3Client: { prefix: 's3', rule: s3 },
};

export class UnmodelledCallError extends Error {
  override readonly name = 'UnmodelledCallError';
}

/** The authorization requests of `clientName`'s `commandName` with `input`. */
export function authorizationRequests(
  clientName: string,
  commandName: string,
  input: unknown,
  place: LocalPlace,
): AuthorizationRequest[] {
  const service = SERVICES[clientName];
  if (!service) {
    throw new UnmodelledCallError(
      `local IAM: no rule for ${clientName} (local/iam/requests.ts): say which action and resource its calls need`,
    );
  }
  const command = commandName.replace(/Command$/, '');
  return service
    .rule(command, (input ?? {}) as Input, place)
    .map((r) => (r.action.includes(':') ? r : { ...r, action: `${service.prefix}:${r.action}` }));
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const record = (value: unknown): Input =>
  typeof value === 'object' && value !== null ? (value as Input) : {};
const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

function required(value: string | undefined, what: string, command: string): string {
  if (!value) throw new UnmodelledCallError(`local IAM: ${command} without ${what}`);
  return value;
}

/** A key attribute's string value, marshalled (`{ S: … }`) or as the document client gives it. */
function keyValue(key: unknown): string | undefined {
  const value = record(key)[LedgerTable.partitionKey];
  return text(value) ?? text(record(value).S);
}

/** `dynamodb:LeadingKeys`: the partition key of every item the call names, where it names some. */
function leadingKeys(items: readonly unknown[]): { context?: Record<string, readonly string[]> } {
  const keys = items.map(keyValue).filter((k): k is string => k !== undefined);
  return keys.length > 0 ? { context: { 'dynamodb:LeadingKeys': keys } } : {};
}

/**
 * Items and queries name a table (and an index); batches and transactions each of theirs. Item
 * calls and batches carry their items' partition keys as `dynamodb:LeadingKeys` (a Query's key
 * condition and a transaction's items are not read: no role is conditioned on them).
 */
function dynamodb(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  switch (command) {
    case 'BatchGetItem':
      return Object.entries(record(input.RequestItems)).map(([table, requests]) => ({
        action: command,
        resource: tableArn(place, table),
        ...leadingKeys(list(record(requests).Keys)),
      }));
    case 'BatchWriteItem':
      return Object.entries(record(input.RequestItems)).map(([table, requests]) => ({
        action: command,
        resource: tableArn(place, table),
        ...leadingKeys(
          list(requests).map((r) => record(record(r).PutRequest).Item ?? record(record(r).DeleteRequest).Key),
        ),
      }));
    case 'TransactWriteItems':
    case 'TransactGetItems':
      // Each item is authorized as its own action (ConditionCheck: dynamodb:ConditionCheckItem).
      return list(input.TransactItems).flatMap((item) =>
        Object.entries(record(item)).map(([kind, body]) => ({
          action:
            { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', Get: 'GetItem' }[kind] ??
            `${kind}Item`,
          resource: tableArn(place, required(text(record(body).TableName), 'TableName', command)),
        })),
      );
    default: {
      const table = required(text(input.TableName), 'TableName', command);
      return [
        {
          action: command,
          resource: tableArn(place, table, text(input.IndexName)),
          ...leadingKeys([input.Key ?? input.Item].filter((k) => k !== undefined)),
        },
      ];
    }
  }
}

/**
 * A table's change stream by its ARN (as DynamoDB Local writes it, the variable that names it in
 * the policy holds it whole); GetRecords names a shard iterator only, which belongs to the stream
 * the iterator was made for: authorized against the stream the local event source reads.
 */
function dynamodbStreams(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  if (command === 'ListStreams') return [{ action: command, resource: '*' }];
  const stream = text(input.StreamArn) ?? place.env.LEDGER_TABLE_STREAM_ARN;
  return [{ action: command, resource: required(stream, 'StreamArn', command) }];
}

/** A queue by its URL; the batch calls are authorized as their single forms. */
function sqs(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  const action = command.replace(/Batch$/, '');
  if (command === 'GetQueueUrl' || command === 'CreateQueue') {
    return [
      { action, resource: queueArnFromName(place, required(text(input.QueueName), 'QueueName', command)) },
    ];
  }
  return [{ action, resource: queueArnFromUrl(place, required(text(input.QueueUrl), 'QueueUrl', command)) }];
}

/** A schedule in its group; CreateSchedule also passes the target's role to Scheduler. */
function scheduler(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  const name = required(text(input.Name), 'Name', command);
  const requests: AuthorizationRequest[] = [
    { action: command, resource: scheduleArn(place, text(input.GroupName), name) },
  ];
  const role = text(record(input.Target).RoleArn);
  if (role && (command === 'CreateSchedule' || command === 'UpdateSchedule')) {
    requests.push({
      action: 'iam:PassRole',
      resource: role,
      context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
  }
  return requests;
}

/**
 * SendEmail: the identity that authorizes the From address (the address's own, or its domain's:
 * which one is verified is the account's business, so either passes) and the configuration
 * set, with `ses:FromAddress`.
 */
function ses(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  if (command !== 'SendEmail') throw new UnmodelledCallError(`local IAM: no rule for ses:${command}`);
  const from = required(text(input.FromEmailAddress), 'FromEmailAddress', command);
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
  const domain = address.slice(address.lastIndexOf('@') + 1);
  const identity = text(input.FromEmailAddressIdentityArn);
  const context = { 'ses:FromAddress': address };
  const requests: AuthorizationRequest[] = [
    {
      action: command,
      resource: identity ? identity : [sesArn(place, 'identity', address), sesArn(place, 'identity', domain)],
      context,
    },
  ];
  const configurationSet = text(input.ConfigurationSetName);
  if (configurationSet) {
    requests.push({
      action: command,
      resource: sesArn(place, 'configuration-set', configurationSet),
      context,
    });
  }
  return requests;
}

/** SendTextMessage: its origination identity and configuration set; PutOptedOutNumber: the list. */
function smsVoice(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  switch (command) {
    case 'SendTextMessage': {
      const requests: AuthorizationRequest[] = [];
      const identity = text(input.OriginationIdentity);
      if (identity) requests.push({ action: command, resource: smsVoiceArn(place, 'origination', identity) });
      const configurationSet = text(input.ConfigurationSetName);
      if (configurationSet) {
        requests.push({
          action: command,
          resource: smsVoiceArn(place, 'configuration-set', configurationSet),
        });
      }
      return requests.length > 0 ? requests : [{ action: command, resource: undefined }];
    }
    case 'PutOptedOutNumber':
      return [
        {
          action: command,
          resource: smsVoiceArn(
            place,
            'opt-out-list',
            required(text(input.OptOutListName), 'OptOutListName', command),
          ),
        },
      ];
    default:
      throw new UnmodelledCallError(`local IAM: no rule for sms-voice:${command}`);
  }
}

/** PutEvents: each entry's bus (the default bus when it names none). */
function events(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  if (command !== 'PutEvents') throw new UnmodelledCallError(`local IAM: no rule for events:${command}`);
  return list(input.Entries).map((entry) => {
    const source = text(record(entry).Source);
    return {
      action: command,
      resource: eventBusArn(place, text(record(entry).EventBusName)),
      ...(source ? { context: { 'events:source': source } } : {}),
    };
  });
}

/**
 * The key the call names (a Decrypt names none: its key is inside the ciphertext, so only the
 * action and the conditions are checked), with `kms:EncryptionContext:<key>` for each entry of
 * its encryption context; a direct call carries no `kms:ViaService`.
 */
function kms(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  const keyId = text(input.KeyId);
  const context = Object.fromEntries(
    Object.entries(record(input.EncryptionContext)).flatMap(([k, v]) =>
      typeof v === 'string' ? [[`kms:EncryptionContext:${k}`, v]] : [],
    ),
  );
  return [{ action: command, resource: keyId ? kmsKeyArn(place, keyId) : undefined, context }];
}

/**
 * S3 (the archive): an object by bucket and key, a listing by its bucket (with `s3:prefix` and
 * `s3:delimiter` when the call gives them); what a PutObject also sets asks for its own action.
 */
function s3(command: string, input: Input): AuthorizationRequest[] {
  const bucket = required(text(input.Bucket), 'Bucket', command);
  const object = (key = text(input.Key)) => s3Arn(bucket, required(key, 'Key', command));
  const versioned = text(input.VersionId) !== undefined;
  switch (command) {
    case 'PutObject': {
      const also = [
        ['PutObjectRetention', input.ObjectLockMode ?? input.ObjectLockRetainUntilDate],
        ['PutObjectLegalHold', input.ObjectLockLegalHoldStatus],
        ['PutObjectTagging', input.Tagging],
        ['PutObjectAcl', input.ACL ?? input.GrantRead ?? input.GrantFullControl],
      ] as const;
      return [
        { action: command, resource: object() },
        ...also.flatMap(([action, given]) => (given === undefined ? [] : [{ action, resource: object() }])),
      ];
    }
    case 'GetObject':
    case 'HeadObject':
      return [{ action: versioned ? 'GetObjectVersion' : 'GetObject', resource: object() }];
    case 'GetObjectRetention':
      return [{ action: command, resource: object() }];
    case 'DeleteObject':
      return [{ action: versioned ? 'DeleteObjectVersion' : 'DeleteObject', resource: object() }];
    case 'DeleteObjects':
      return list(record(input.Delete).Objects).map((entry) => ({
        action: text(record(entry).VersionId) ? 'DeleteObjectVersion' : 'DeleteObject',
        resource: object(text(record(entry).Key)),
      }));
    case 'ListObjectsV2':
    case 'ListObjects':
    case 'HeadBucket': {
      const context = Object.fromEntries(
        [
          ['s3:prefix', text(input.Prefix)],
          ['s3:delimiter', text(input.Delimiter)],
        ].filter(([, v]) => v !== undefined),
      ) as Record<string, string>;
      return [{ action: 'ListBucket', resource: s3Arn(bucket), context }];
    }
    case 'GetObjectLockConfiguration':
      return [{ action: 'GetBucketObjectLockConfiguration', resource: s3Arn(bucket) }];
    default:
      throw new UnmodelledCallError(`local IAM: no rule for s3:${command}`);
  }
}

/**
 * What S3 asks besides before it tells a caller that a key does not exist: a GetObject or
 * HeadObject of a missing key answers 404 only to a caller that may list the bucket
 * (`s3:ListBucket`), and 403 AccessDenied to any other. Undefined for every other call.
 */
export function missingKeyRequest(
  clientName: string,
  commandName: string,
  input: unknown,
): AuthorizationRequest | undefined {
  const command = commandName.replace(/Command$/, '');
  if (clientName !== 'S3Client' || (command !== 'GetObject' && command !== 'HeadObject')) return undefined;
  const bucket = text(record(input).Bucket);
  return bucket ? { action: 's3:ListBucket', resource: s3Arn(bucket) } : undefined;
}

function secretsManager(command: string, input: Input, place: LocalPlace): AuthorizationRequest[] {
  return [
    { action: command, resource: secretArn(place, required(text(input.SecretId), 'SecretId', command)) },
  ];
}
