/**
 * The one mapping between the resources the CDK stacks grant and the local stack's own
 * (docs/architecture.md §7, "IAM, locally").
 *
 * Every resource a function is granted is named to it by an environment variable the CDK sets
 * with the grant (lib/constructs/notice-function.ts `bind*`, the providers' `bindTransport`):
 * `LEDGER_TABLE_NAME` with the table grant, `EMAIL_QUEUE_ARN` with the queue grant, … The local
 * stack sets the same variables to its own resources. So the generator (./synthesize.ts) writes a
 * granted resource as the variable that names it (`arn:${Partition}:dynamodb:${Region}:${Account}:
 * table/${LEDGER_TABLE_NAME}/index/open-due`), and the local stack puts in its own values. A
 * resource no variable names (a log group, the table's KMS key) stays `${unmapped:…}`: nothing a
 * local call names matches it.
 */
import { keyTableNameOf } from '../../lambdas/contract/key-table.ts';
import { SETTINGS, type Setting } from '../../lambdas/contract/settings.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { LOCAL_ACCOUNT_ID } from '../lambda-context.ts';

/** CloudFormation's pseudo parameters, as the policy file writes them. */
export const PSEUDO_PARAMETERS: Readonly<Record<string, string>> = {
  'AWS::Partition': `\${Partition}`,
  'AWS::Region': `\${Region}`,
  'AWS::AccountId': `\${Account}`,
  'AWS::URLSuffix': `\${URLSuffix}`,
};

/**
 * Names the CDK writes as a literal (a setting's value) rather than a reference, each set on the
 * granted function under this variable with the same value: a whole path segment of a granted
 * ARN, or a condition value, equal to one of these is written `${VAR}`; the domain of
 * `SES_FROM_ADDRESS` (the SES identity the sender is granted by default) `${SES_FROM_ADDRESS@domain}`.
 */
export const LITERAL_NAME_VARIABLES = [
  'SCHEDULE_GROUP_NAME',
  'SES_FROM_ADDRESS',
  'SES_CONFIGURATION_SET',
  'EUM_CONFIGURATION_SET',
  'EUM_OPT_OUT_LIST',
  'EUM_ORIGINATION_IDENTITY',
  // `<prefix>-archive-<account>-<region>`: the stack writes the name (lib/constructs/archive-bucket.ts).
  'ARCHIVE_BUCKET',
] as const;

/**
 * Resource types whose `Ref` (what the function's variable holds) is their name, and their ARN
 * from it: a grant on `GetAtt X.Arn` when only `Ref X` is in a variable.
 */
export const ARN_FROM_NAME: Readonly<Record<string, (name: string) => string>> = {
  'AWS::S3::Bucket': (name) => `arn:\${Partition}:s3:::${name}`,
  'AWS::DynamoDB::Table': (name) => `arn:\${Partition}:dynamodb:\${Region}:\${Account}:table/${name}`,
  'AWS::Events::EventBus': (name) => `arn:\${Partition}:events:\${Region}:\${Account}:event-bus/${name}`,
};

/** Where the local stack's resources are: what the placeholders stand for. */
export interface LocalPlace {
  readonly region: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export const LOCAL_PARTITION = 'aws';

const PLACEHOLDER = /\$\{([^}]+)\}/g;

/**
 * A policy file string with the local stack's values put in; `undefined` when it names a
 * variable the stack does not set (a bus, a key, a secret the local stack has none of) or a
 * resource no variable names: such a grant cannot match any local call.
 */
export function instantiate(template: string, place: LocalPlace): string | undefined {
  let missing = false;
  const value = template.replace(PLACEHOLDER, (_, name: string) => {
    const resolved = placeholderValue(name, place);
    if (resolved === undefined) missing = true;
    return resolved ?? '';
  });
  return missing ? undefined : value;
}

function placeholderValue(name: string, place: LocalPlace): string | undefined {
  switch (name) {
    case 'Partition':
      return LOCAL_PARTITION;
    case 'Region':
      return place.region;
    case 'Account':
      return LOCAL_ACCOUNT_ID;
    case 'URLSuffix':
      return 'amazonaws.com';
  }
  if (name.startsWith('unmapped:')) return undefined;
  const [variable = '', form] = name.split('@', 2);
  const value = variableValue(variable, place.env);
  if (!value) return undefined;
  if (form === undefined) return value;
  if (form === 'domain') return value.includes('@') ? value.slice(value.lastIndexOf('@') + 1) : undefined;
  throw new Error(`role policies: unknown placeholder form \${${name}}`);
}

/**
 * A variable as the functions read it: the environment's value, else the default the runtime
 * applies (lambdas/contract/settings.ts, the provider descriptors): the table is
 * `notice-ledger` whether or not LEDGER_TABLE_NAME is set, and the key table the ledger table's
 * name + `-keys` whether or not KEY_TABLE_NAME is (lambdas/wiring/ledger.ts `keyTableNameIn`).
 */
export function variableValue(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const value = env[name]?.trim();
  if (value) return value;
  if (name === 'KEY_TABLE_NAME') return keyTableNameOf(variableValue('LEDGER_TABLE_NAME', env) as string);
  const setting = (SETTINGS as Readonly<Record<string, Setting>>)[name];
  if (setting?.default !== undefined) return String(setting.default);
  for (const { descriptor } of PROVIDERS) {
    const declared = descriptor.settings.find((s) => s.name === name);
    if (declared && 'default' in declared && declared.default !== undefined) return String(declared.default);
  }
  return undefined;
}

// --- the ARNs a local call names (the same places, seen from the request) ----------------------

function arnOf(place: LocalPlace, service: string, resource: string, region = place.region): string {
  return `arn:${LOCAL_PARTITION}:${service}:${region}:${LOCAL_ACCOUNT_ID}:${resource}`;
}

/** A table's ARN (DynamoDB takes a table name or its ARN), or that of one of its indexes. */
export function tableArn(place: LocalPlace, table: string, index?: string): string {
  const base = table.startsWith('arn:') ? table : arnOf(place, 'dynamodb', `table/${table}`);
  return index ? `${base}/index/${index}` : base;
}

/** A queue's ARN from its URL (`…/<account>/<name>`, as SQS and local-aws-sqs write them). */
export function queueArnFromUrl(place: LocalPlace, url: string): string {
  const [name = '', account = LOCAL_ACCOUNT_ID] = new URL(url).pathname.split('/').filter(Boolean).reverse();
  return `arn:${LOCAL_PARTITION}:sqs:${place.region}:${account}:${name}`;
}

export function queueArnFromName(place: LocalPlace, name: string): string {
  return arnOf(place, 'sqs', name);
}

export function scheduleArn(place: LocalPlace, group: string | undefined, name: string): string {
  return arnOf(place, 'scheduler', `schedule/${group ?? 'default'}/${name}`);
}

export function sesArn(place: LocalPlace, resource: 'identity' | 'configuration-set', name: string): string {
  return arnOf(place, 'ses', `${resource}/${name}`);
}

/**
 * An End User Messaging resource: an ARN as given; `phone-…`, `pool-…` ids as the service types
 * them; an E.164 number or a sender id as the phone number or sender id of that name (AWS looks
 * the number's id up; locally the number stands for it).
 */
export function smsVoiceArn(
  place: LocalPlace,
  resource: 'origination' | 'configuration-set' | 'opt-out-list',
  id: string,
): string {
  if (id.startsWith('arn:')) return id;
  if (resource !== 'origination') return arnOf(place, 'sms-voice', `${resource}/${id}`);
  if (id.startsWith('pool-')) return arnOf(place, 'sms-voice', `pool/${id}`);
  if (id.startsWith('phone-') || id.startsWith('+')) return arnOf(place, 'sms-voice', `phone-number/${id}`);
  return arnOf(place, 'sms-voice', `sender-id/${id}`);
}

export function eventBusArn(place: LocalPlace, bus: string | undefined): string {
  if (bus?.startsWith('arn:')) return bus;
  return arnOf(place, 'events', `event-bus/${bus || 'default'}`);
}

export function kmsKeyArn(place: LocalPlace, keyId: string): string {
  if (keyId.startsWith('arn:')) return keyId;
  return arnOf(place, 'kms', keyId.startsWith('alias/') ? keyId : `key/${keyId}`);
}

export function secretArn(place: LocalPlace, secretId: string): string {
  return secretId.startsWith('arn:') ? secretId : arnOf(place, 'secretsmanager', `secret:${secretId}`);
}

/** A bucket's ARN, or an object's in it: S3's ARNs name no Region or account. */
export function s3Arn(bucket: string, key?: string): string {
  return `arn:${LOCAL_PARTITION}:s3:::${bucket}${key === undefined ? '' : `/${key}`}`;
}

/** The role a function runs as, as IAM names it in an AccessDenied message. */
export function assumedRoleArn(role: string, session: string): string {
  return `arn:${LOCAL_PARTITION}:sts::${LOCAL_ACCOUNT_ID}:assumed-role/${role}/${session}`;
}
