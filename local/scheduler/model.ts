/**
 * The stand-in's model of EventBridge Scheduler: the records it keeps, the API's validation rules
 * and errors (shaped so the SDK throws its own modelled classes), and the GetSchedule output.
 */
/** The account local-aws-sqs puts in its queue ARNs by default; cosmetic here. */
export const ACCOUNT_ID = '123456789012';
export const DEFAULT_GROUP = 'default';
export const DEFAULT_TICK_MS = 250;
export const DEFAULT_RETRY_POLICY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 } as const;
export const RETRY_BASE_MS = 1_000;
export const RETRY_CAP_MS = 30_000;
export const MAX_BODY_BYTES = 256 * 1024;
/** Sends in flight per tick: enough for a burst of retries, small enough not to flood SQS. */
export const FIRE_CONCURRENCY = 8;
export const MAX_LIST_RESULTS = 100;
export const STATE_VERSION = 1;

export const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
export const AT_EXPRESSION = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;
export const SQS_QUEUE_ARN = /^arn:aws[a-z-]*:sqs:([a-z0-9-]+):(\d{12}):([a-zA-Z0-9_-]{1,80}(?:\.fifo)?)$/;
/** Time zones that are UTC all year, so no offset arithmetic is needed. */
export const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);

export interface RetryPolicy {
  readonly MaximumEventAgeInSeconds: number;
  readonly MaximumRetryAttempts: number;
}

/** `Target` as the API returns it; `RetryPolicy` has its defaults filled in. */
export interface ScheduleTarget {
  readonly Arn: string;
  readonly RoleArn: string;
  readonly Input?: string;
  readonly RetryPolicy: RetryPolicy;
  readonly SqsParameters?: { readonly MessageGroupId?: string };
  readonly DeadLetterConfig?: { readonly Arn?: string };
}

export interface ScheduleRecord {
  readonly name: string;
  readonly groupName: string;
  readonly arn: string;
  readonly scheduleExpression: string;
  readonly scheduleExpressionTimezone: string;
  /** Epoch ms of the `at()` time (UTC). */
  readonly at: number;
  readonly state: 'ENABLED' | 'DISABLED';
  readonly actionAfterCompletion: 'NONE' | 'DELETE';
  readonly flexibleTimeWindow: {
    readonly Mode: 'OFF' | 'FLEXIBLE';
    readonly MaximumWindowInMinutes?: number;
  };
  readonly target: ScheduleTarget;
  readonly description?: string;
  readonly kmsKeyArn?: string;
  /** Epoch ms, from the stand-in's clock. */
  readonly creationDate: number;
  readonly lastModificationDate: number;
  /** Sends tried so far (failed ones, while the schedule still exists). */
  readonly attempts: number;
  /** When a failed send is tried again; `null` before the first attempt. */
  readonly nextAttemptAt: number | null;
  /** Fired (or dropped) with `ActionAfterCompletion: NONE`: kept, as AWS keeps it, but never fired again. */
  readonly completed: boolean;
}

export interface FiredRecord {
  readonly name: string;
  readonly groupName: string;
  /** The `at()` time, epoch ms. */
  readonly scheduledAt: number;
  /** When the last attempt ended, epoch ms. */
  readonly firedAt: number;
  readonly attempts: number;
  readonly outcome: 'sent' | 'dropped';
  readonly queueUrl?: string;
  readonly messageId?: string;
  /** Why the last attempt failed (an SQS error name), for `dropped`. */
  readonly errorCode?: string;
}

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type StoredSchedule = Mutable<ScheduleRecord>;

/** An error the SDK maps to one of its modelled exception classes by `type`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export const validation = (message: string) => new ApiError(400, 'ValidationException', message);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function optionalString(
  body: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length < min || value.length > max) {
    throw validation(`${field} must be a string of ${min} to ${max} characters`);
  }
  return value;
}

export function requiredString(
  body: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
): string {
  const value = optionalString(body, field, min, max);
  if (value === undefined) throw validation(`${field} is required`);
  return value;
}

export function optionalInteger(
  body: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw validation(`${field} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function oneOf<const T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
): T | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw validation(`${field} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function checkName(value: string, field: string): string {
  if (!NAME.test(value)) throw validation(`${field} must match [0-9a-zA-Z-_.]{1,64}`);
  return value;
}

/** Epoch ms of an `at(yyyy-mm-ddThh:mm:ss)` expression read as UTC, or a ValidationException. */
export function parseAtExpression(expression: string): number {
  const match = AT_EXPRESSION.exec(expression);
  if (!match) {
    throw validation(
      `Invalid Schedule Expression ${expression}: the local stand-in supports one-time at(yyyy-mm-ddThh:mm:ss) expressions only`,
    );
  }
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const at = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 2026-02-30 over into March; a round trip catches impossible dates.
  const date = new Date(at);
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    date.getUTCHours() !== hour ||
    date.getUTCMinutes() !== minute ||
    date.getUTCSeconds() !== second
  ) {
    throw validation(`Invalid Schedule Expression ${expression}: not a calendar date and time`);
  }
  return at;
}

export function parseTarget(value: unknown): ScheduleTarget {
  if (!isRecord(value)) throw validation('Target is required');
  const arn = requiredString(value, 'Arn', 1, 1600);
  if (!SQS_QUEUE_ARN.test(arn)) {
    throw validation(
      `Target.Arn ${arn}: the local stand-in supports SQS queue targets (arn:aws:sqs:<region>:<account>:<queue>) only`,
    );
  }
  const roleArn = requiredString(value, 'RoleArn', 1, 1600);
  if (!roleArn.startsWith('arn:')) throw validation('Target.RoleArn must be an ARN');
  const input = optionalString(value, 'Input', 1, 262_144);

  let retryPolicy: RetryPolicy = DEFAULT_RETRY_POLICY;
  if (value.RetryPolicy !== undefined && value.RetryPolicy !== null) {
    if (!isRecord(value.RetryPolicy)) throw validation('Target.RetryPolicy must be an object');
    retryPolicy = {
      MaximumEventAgeInSeconds:
        optionalInteger(value.RetryPolicy, 'MaximumEventAgeInSeconds', 60, 86_400) ??
        DEFAULT_RETRY_POLICY.MaximumEventAgeInSeconds,
      MaximumRetryAttempts:
        optionalInteger(value.RetryPolicy, 'MaximumRetryAttempts', 0, 185) ??
        DEFAULT_RETRY_POLICY.MaximumRetryAttempts,
    };
  }

  let sqsParameters: ScheduleTarget['SqsParameters'];
  if (isRecord(value.SqsParameters)) {
    const groupId = optionalString(value.SqsParameters, 'MessageGroupId', 1, 128);
    sqsParameters = groupId === undefined ? {} : { MessageGroupId: groupId };
  }
  let deadLetterConfig: ScheduleTarget['DeadLetterConfig'];
  if (isRecord(value.DeadLetterConfig)) {
    const dlq = optionalString(value.DeadLetterConfig, 'Arn', 1, 1600);
    deadLetterConfig = dlq === undefined ? {} : { Arn: dlq };
  }
  return {
    Arn: arn,
    RoleArn: roleArn,
    ...(input === undefined ? {} : { Input: input }),
    RetryPolicy: retryPolicy,
    ...(sqsParameters === undefined ? {} : { SqsParameters: sqsParameters }),
    ...(deadLetterConfig === undefined ? {} : { DeadLetterConfig: deadLetterConfig }),
  };
}

export function parseFlexibleTimeWindow(value: unknown): ScheduleRecord['flexibleTimeWindow'] {
  if (!isRecord(value)) throw validation('FlexibleTimeWindow is required');
  const mode = oneOf(value, 'Mode', ['OFF', 'FLEXIBLE'] as const);
  if (mode === undefined) throw validation('FlexibleTimeWindow.Mode is required');
  const window = optionalInteger(value, 'MaximumWindowInMinutes', 1, 1440);
  if (mode === 'FLEXIBLE' && window === undefined) {
    throw validation('FlexibleTimeWindow.MaximumWindowInMinutes is required when Mode is FLEXIBLE');
  }
  return window === undefined ? { Mode: mode } : { Mode: mode, MaximumWindowInMinutes: window };
}

/** Exactly what GetSchedule returns; timestamps as epoch seconds, the REST-JSON default. */
export function toGetScheduleOutput(s: ScheduleRecord): Record<string, unknown> {
  return {
    Arn: s.arn,
    GroupName: s.groupName,
    Name: s.name,
    ScheduleExpression: s.scheduleExpression,
    ScheduleExpressionTimezone: s.scheduleExpressionTimezone,
    State: s.state,
    ActionAfterCompletion: s.actionAfterCompletion,
    FlexibleTimeWindow: s.flexibleTimeWindow,
    Target: s.target,
    CreationDate: s.creationDate / 1000,
    LastModificationDate: s.lastModificationDate / 1000,
    ...(s.description === undefined ? {} : { Description: s.description }),
    ...(s.kmsKeyArn === undefined ? {} : { KmsKeyArn: s.kmsKeyArn }),
  };
}

export function copy<T>(value: T): T {
  return structuredClone(value);
}

export function key(groupName: string, name: string): string {
  return `${groupName}/${name}`;
}

export function errorName(error: unknown): string {
  if (error instanceof Error) return error.name;
  return 'UnknownError';
}
