/**
 * A local stand-in for Amazon EventBridge Scheduler: no emulator exists (see
 * `reference/local-emulators.md`), and the production adapter
 * (`lambdas/adapters/scheduler/retry-scheduler.ts`) must run unchanged against something that
 * speaks the service's REST-JSON protocol and actually fires the schedules.
 *
 * Scope: one-time `at(yyyy-mm-ddThh:mm:ss)` schedules in UTC whose target is an SQS queue ARN
 * (templated target → `SendMessage` with `MessageBody = Target.Input`):
 * - `POST /schedules/{Name}` CreateSchedule, `GET /schedules/{Name}?groupName=` GetSchedule,
 *   `DELETE /schedules/{Name}?groupName=&clientToken=` DeleteSchedule,
 *   `GET /schedules?ScheduleGroup=&NamePrefix=&State=&MaxResults=&NextToken=` ListSchedules.
 *   Anything else answers 404 `UnknownOperationException`.
 * - Errors carry the modelled shape name in `x-amzn-errortype` (and `__type`) with the status the
 *   model gives it, so the SDK throws its own classes (`ConflictException`, …).
 *
 * Deliberate differences from AWS, all in the direction of fast, deterministic tests:
 * - Firing is prompt: a timer (every `tickMs`, 250 ms) sends each due schedule, where AWS has
 *   60-second precision (and `FlexibleTimeWindow` may add minutes). Tests of the production
 *   system must therefore not depend on Scheduler's lateness either way.
 * - An `at()` already in the past is accepted and fires on the next tick (what AWS does with
 *   it is not verified).
 * - Schedule groups are implicit: any valid group name works without CreateScheduleGroup.
 * - Only UTC (`ScheduleExpressionTimezone` absent, `UTC`, `Etc/UTC`, `GMT`, `Etc/GMT`); rate(),
 *   cron(), other zones, universal targets and non-SQS targets answer ValidationException, so a
 *   test relying on them fails loudly instead of never firing.
 * - Failed sends are retried on later ticks with a capped exponential backoff (1 s doubling,
 *   ≤ 30 s) up to `RetryPolicy.MaximumRetryAttempts` within `MaximumEventAgeInSeconds`
 *   (defaults 185 / 86 400), then dropped with one log line; `DeadLetterConfig` is stored but
 *   not used. Delivery is at least once, as in AWS: a crash between the send and the state
 *   write fires the schedule again after a restart.
 * - `Target.Input` absent → body `{}`; the context placeholders `<aws.scheduler.schedule-arn>`,
 *   `<aws.scheduler.scheduled-time>`, `<aws.scheduler.execution-id>` and
 *   `<aws.scheduler.attempt-number>` are substituted.
 *
 * With `stateFile`, every change is written to that JSON file (temp file + rename) before the
 * request is answered, and the file is loaded at start: a stack killed with SIGKILL still fires
 * the retries it had accepted.
 *
 * Test-only endpoints (unauthenticated; the server binds 127.0.0.1 only):
 * - `POST /__faults` `{ "dropNextCreates": n }`: the next n valid, non-conflicting
 *   CreateSchedule calls answer 200 with an ARN but are forgotten ("lost schedule");
 *   `GET /__faults` → the current settings.
 * - `GET /__schedules` → `{ schedules, fired }` (names, group, `at`, Input: ids only in this
 *   project).
 *
 * CLI: `npx tsx local/scheduler/server.ts [--port 8030] [--sqs http://127.0.0.1:9324]
 * [--region us-east-1] [--state-file .local/scheduler.json] [--tick-ms 250]` (`--sqs`
 * defaults to AWS_ENDPOINT_URL_SQS) prints its endpoint and runs until SIGINT/SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { closeOnSignal, isMainModule } from '../process-utils.ts';

/** The account local-aws-sqs puts in its queue ARNs by default; cosmetic here. */
const ACCOUNT_ID = '123456789012';
const DEFAULT_GROUP = 'default';
const DEFAULT_TICK_MS = 250;
const DEFAULT_RETRY_POLICY = { MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 } as const;
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 30_000;
const MAX_BODY_BYTES = 256 * 1024;
/** Sends in flight per tick: enough for a burst of retries, small enough not to flood SQS. */
const FIRE_CONCURRENCY = 8;
const MAX_LIST_RESULTS = 100;
const STATE_VERSION = 1;

const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;
const AT_EXPRESSION = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;
const SQS_QUEUE_ARN = /^arn:aws[a-z-]*:sqs:([a-z0-9-]+):(\d{12}):([a-zA-Z0-9_-]{1,80}(?:\.fifo)?)$/;
/** Time zones that are UTC all year, so no offset arithmetic is needed. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);

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

export interface SchedulerStandInOptions {
  /** 0 or absent: an ephemeral port. */
  port?: number;
  /** The SQS endpoint the target queues live at (local-aws-sqs). */
  sqsEndpoint: string;
  /** Region in schedule ARNs and for the SQS client; default us-east-1. */
  region?: string;
  /** JSON file holding the schedules across restarts; in memory only when absent. */
  stateFile?: string;
  tickMs?: number;
  /** Epoch ms; decides what is due and stamps the records. Timers stay real. */
  clock?: () => number;
  /** One line per notable event (dropped send, lost schedule); default stderr. Never given a message body. */
  log?: (line: string) => void;
}

export interface SchedulerStandIn {
  /** `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_SCHEDULER`. */
  readonly endpoint: string;
  readonly port: number;
  /** Copies, in creation order. */
  schedules(): ScheduleRecord[];
  /** Every send that ended (sent or dropped), oldest first; in memory only. */
  fired(): FiredRecord[];
  /** The next `n` valid CreateSchedule calls answer 200 but are forgotten (replaces any pending count). */
  dropNextCreates(n: number): void;
  /** Runs one firing pass now (after any pass in progress): for tests that drive `clock`. */
  tick(): Promise<void>;
  /** Stops the timer, waits for sends in flight, closes connections. Idempotent. */
  close(): Promise<void>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type StoredSchedule = Mutable<ScheduleRecord>;

/** An error the SDK maps to one of its modelled exception classes by `type`. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const validation = (message: string) => new ApiError(400, 'ValidationException', message);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(
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

function requiredString(body: Record<string, unknown>, field: string, min: number, max: number): string {
  const value = optionalString(body, field, min, max);
  if (value === undefined) throw validation(`${field} is required`);
  return value;
}

function optionalInteger(
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

function oneOf<const T extends string>(
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

function checkName(value: string, field: string): string {
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

function parseTarget(value: unknown): ScheduleTarget {
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

function parseFlexibleTimeWindow(value: unknown): ScheduleRecord['flexibleTimeWindow'] {
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
function toGetScheduleOutput(s: ScheduleRecord): Record<string, unknown> {
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

function copy<T>(value: T): T {
  return structuredClone(value);
}

function key(groupName: string, name: string): string {
  return `${groupName}/${name}`;
}

function loadState(file: string): StoredSchedule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  // A corrupt file is an error, not an empty stack: silently dropping accepted retries is the
  // failure this file exists to prevent.
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed) || parsed.version !== STATE_VERSION || !Array.isArray(parsed.schedules)) {
    throw new Error(`${file}: not a scheduler stand-in state file (version ${STATE_VERSION})`);
  }
  for (const s of parsed.schedules) {
    if (
      !isRecord(s) ||
      typeof s.name !== 'string' ||
      typeof s.groupName !== 'string' ||
      typeof s.at !== 'number' ||
      !isRecord(s.target)
    ) {
      throw new Error(`${file}: malformed schedule entry`);
    }
  }
  return parsed.schedules as StoredSchedule[];
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name;
  return 'UnknownError';
}

/** Starts the stand-in on 127.0.0.1 and its firing timer. */
export async function startSchedulerStandIn(options: SchedulerStandInOptions): Promise<SchedulerStandIn> {
  const region = options.region ?? 'us-east-1';
  const clock = options.clock ?? Date.now;
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const stateFile = options.stateFile;

  const store = new Map<string, StoredSchedule>();
  if (stateFile !== undefined) {
    mkdirSync(dirname(stateFile), { recursive: true });
    for (const s of loadState(stateFile)) store.set(key(s.groupName, s.name), s);
  }
  const fired: FiredRecord[] = [];
  /** Schedules with a send in flight, so an overlapping `tick()` cannot send one twice. */
  const inFlight = new Set<StoredSchedule>();
  let dropNext = 0;
  let closed = false;

  const sqs = new SQSClient({
    endpoint: options.sqsEndpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // One try per attempt: the retry policy above decides when to try again.
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 2_000, requestTimeout: 5_000 }),
  });
  const queueUrls = new Map<string, string>();

  function persist(): void {
    if (stateFile === undefined) return;
    const tmp = `${stateFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: STATE_VERSION, schedules: [...store.values()] }));
    // rename is atomic: a kill -9 leaves either the old file or the new one, never half of one.
    renameSync(tmp, stateFile);
  }

  async function queueUrlFor(arn: string): Promise<string> {
    const cached = queueUrls.get(arn);
    if (cached !== undefined) return cached;
    const match = SQS_QUEUE_ARN.exec(arn);
    const queueName = match?.[3];
    if (queueName === undefined) throw new Error(`not an SQS queue ARN: ${arn}`);
    const out = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
    if (!out.QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${queueName}`);
    queueUrls.set(arn, out.QueueUrl);
    return out.QueueUrl;
  }

  function messageBody(s: StoredSchedule, attempt: number): string {
    if (s.target.Input === undefined) return '{}';
    return s.target.Input.replaceAll('<aws.scheduler.schedule-arn>', s.arn)
      .replaceAll('<aws.scheduler.scheduled-time>', `${new Date(s.at).toISOString().slice(0, 19)}Z`)
      .replaceAll('<aws.scheduler.execution-id>', randomUUID())
      .replaceAll('<aws.scheduler.attempt-number>', String(attempt));
  }

  /** After the last invocation: delete (DELETE) or keep as completed (NONE), as AWS does. */
  function finish(s: StoredSchedule): void {
    const k = key(s.groupName, s.name);
    // The schedule may have been deleted, or deleted and recreated, while the send was in flight.
    if (store.get(k) !== s) return;
    if (s.actionAfterCompletion === 'DELETE') store.delete(k);
    else {
      s.completed = true;
      s.nextAttemptAt = null;
    }
    persist();
  }

  async function fire(s: StoredSchedule): Promise<void> {
    const attempt = s.attempts + 1;
    try {
      const queueUrl = await queueUrlFor(s.target.Arn);
      const groupId = s.target.SqsParameters?.MessageGroupId;
      const out = await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: messageBody(s, attempt),
          ...(groupId === undefined ? {} : { MessageGroupId: groupId }),
        }),
      );
      s.attempts = attempt;
      fired.push({
        name: s.name,
        groupName: s.groupName,
        scheduledAt: s.at,
        firedAt: clock(),
        attempts: attempt,
        outcome: 'sent',
        queueUrl,
        ...(out.MessageId === undefined ? {} : { messageId: out.MessageId }),
      });
      finish(s);
    } catch (error) {
      // The queue may have been deleted and recreated under another URL.
      queueUrls.delete(s.target.Arn);
      const now = clock();
      s.attempts = attempt;
      const { MaximumRetryAttempts, MaximumEventAgeInSeconds } = s.target.RetryPolicy;
      const retriesLeft = attempt - 1 < MaximumRetryAttempts;
      const backoff = Math.max(tickMs, Math.min(RETRY_BASE_MS * 2 ** (attempt - 1), RETRY_CAP_MS));
      const next = now + backoff;
      if (retriesLeft && next - s.at <= MaximumEventAgeInSeconds * 1000) {
        s.nextAttemptAt = next;
        if (store.get(key(s.groupName, s.name)) === s) persist();
        return;
      }
      const code = errorName(error);
      log(
        `scheduler stand-in: dropped ${s.groupName}/${s.name} after ${attempt} attempt(s) (${code}); target ${s.target.Arn}`,
      );
      fired.push({
        name: s.name,
        groupName: s.groupName,
        scheduledAt: s.at,
        firedAt: now,
        attempts: attempt,
        outcome: 'dropped',
        errorCode: code,
      });
      finish(s);
    }
  }

  async function fireDue(): Promise<void> {
    // A `tick()` after close() must not send with a destroyed client or rewrite the state file.
    if (closed) return;
    const now = clock();
    const due = [...store.values()].filter(
      (s) => s.state === 'ENABLED' && !s.completed && !inFlight.has(s) && (s.nextAttemptAt ?? s.at) <= now,
    );
    for (let i = 0; i < due.length; i += FIRE_CONCURRENCY) {
      const batch = due.slice(i, i + FIRE_CONCURRENCY);
      for (const s of batch) inFlight.add(s);
      await Promise.all(batch.map((s) => fire(s).finally(() => inFlight.delete(s))));
    }
  }

  // Passes run one after another: the timer's and any `tick()` a test asks for.
  let passes: Promise<void> = Promise.resolve();
  function runPass(): Promise<void> {
    const pass = passes.then(fireDue).catch((error: unknown) => {
      // Per-schedule errors are handled in fire(); this is a bug or a failed state write.
      log(`scheduler stand-in: firing pass failed: ${errorName(error)}: ${(error as Error).message}`);
    });
    passes = pass;
    return pass;
  }

  let timer: NodeJS.Timeout | undefined;
  function scheduleTick(): void {
    timer = setTimeout(() => {
      void runPass().then(() => {
        if (!closed) scheduleTick();
      });
    }, tickMs);
  }

  function create(name: string, body: Record<string, unknown>): { ScheduleArn: string } {
    const groupName = checkName(optionalString(body, 'GroupName', 1, 64) ?? DEFAULT_GROUP, 'GroupName');
    const expression = requiredString(body, 'ScheduleExpression', 1, 256);
    const timezone = optionalString(body, 'ScheduleExpressionTimezone', 1, 50) ?? 'UTC';
    if (!UTC_ZONES.has(timezone)) {
      throw validation(`ScheduleExpressionTimezone ${timezone}: the local stand-in supports UTC only`);
    }
    const at = parseAtExpression(expression);
    const flexibleTimeWindow = parseFlexibleTimeWindow(body.FlexibleTimeWindow);
    const target = parseTarget(body.Target);
    const state = oneOf(body, 'State', ['ENABLED', 'DISABLED'] as const) ?? 'ENABLED';
    const actionAfterCompletion = oneOf(body, 'ActionAfterCompletion', ['NONE', 'DELETE'] as const) ?? 'NONE';
    const description = optionalString(body, 'Description', 0, 512);
    const kmsKeyArn = optionalString(body, 'KmsKeyArn', 1, 2048);

    const k = key(groupName, name);
    if (store.has(k)) {
      throw new ApiError(409, 'ConflictException', `Schedule ${name} already exists in group ${groupName}.`);
    }
    const arn = `arn:aws:scheduler:${region}:${ACCOUNT_ID}:schedule/${groupName}/${name}`;
    if (dropNext > 0) {
      dropNext--;
      log(`scheduler stand-in: fault: accepted and lost schedule ${groupName}/${name}`);
      return { ScheduleArn: arn };
    }
    const now = clock();
    store.set(k, {
      name,
      groupName,
      arn,
      scheduleExpression: expression,
      scheduleExpressionTimezone: timezone,
      at,
      state,
      actionAfterCompletion,
      flexibleTimeWindow,
      target,
      ...(description === undefined ? {} : { description }),
      ...(kmsKeyArn === undefined ? {} : { kmsKeyArn }),
      creationDate: now,
      lastModificationDate: now,
      attempts: 0,
      nextAttemptAt: null,
      completed: false,
    });
    try {
      persist();
    } catch (error) {
      // Answer 500 with nothing kept, rather than 200 for a schedule a restart would lose.
      store.delete(k);
      throw error;
    }
    return { ScheduleArn: arn };
  }

  function find(name: string, url: URL): StoredSchedule {
    const groupName = checkName(url.searchParams.get('groupName') ?? DEFAULT_GROUP, 'groupName');
    const s = store.get(key(groupName, name));
    if (s === undefined) {
      throw new ApiError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
    }
    return s;
  }

  function list(url: URL): Record<string, unknown> {
    const group = url.searchParams.get('ScheduleGroup');
    const prefix = url.searchParams.get('NamePrefix') ?? '';
    const state = url.searchParams.get('State');
    const maxText = url.searchParams.get('MaxResults');
    const max = maxText === null ? MAX_LIST_RESULTS : Number(maxText);
    if (!Number.isInteger(max) || max < 1 || max > MAX_LIST_RESULTS) {
      throw validation(`MaxResults must be an integer from 1 to ${MAX_LIST_RESULTS}`);
    }
    const tokenText = url.searchParams.get('NextToken');
    const start = tokenText === null ? 0 : Number(Buffer.from(tokenText, 'base64url').toString('utf8'));
    if (!Number.isInteger(start) || start < 0) throw validation('Invalid NextToken');
    const matching = [...store.values()].filter(
      (s) =>
        (group === null || s.groupName === group) &&
        s.name.startsWith(prefix) &&
        (state === null || s.state === state),
    );
    const page = matching.slice(start, start + max);
    const end = start + page.length;
    return {
      Schedules: page.map((s) => ({
        Arn: s.arn,
        Name: s.name,
        GroupName: s.groupName,
        State: s.state,
        CreationDate: s.creationDate / 1000,
        LastModificationDate: s.lastModificationDate / 1000,
        Target: { Arn: s.target.Arn },
      })),
      ...(end < matching.length ? { NextToken: Buffer.from(String(end)).toString('base64url') } : {}),
    };
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw validation('Request body too large');
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return {};
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError(400, 'SerializationException', 'Request body is not JSON');
    }
  }

  function sendJson(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'x-amzn-requestid': randomUUID(),
      ...headers,
    });
    res.end(payload);
  }

  function sendError(res: ServerResponse, error: ApiError): void {
    // The SDK's REST-JSON deserializer reads the header first, then `code`, then `__type`, and
    // takes the message from `Message` (the member the model gives every Scheduler error).
    sendJson(
      res,
      error.status,
      { __type: error.type, Message: error.message },
      {
        'x-amzn-errortype': error.type,
      },
    );
  }

  function faultsView(): Record<string, unknown> {
    return { dropNextCreates: dropNext };
  }

  function debugView(): Record<string, unknown> {
    return {
      schedules: [...store.values()].map((s) => ({
        name: s.name,
        groupName: s.groupName,
        at: new Date(s.at).toISOString(),
        scheduleExpression: s.scheduleExpression,
        state: s.state,
        completed: s.completed,
        attempts: s.attempts,
        targetArn: s.target.Arn,
        // This project's Input is `{noticeId, channel, attempt}`: ids, no personal data.
        input: s.target.Input,
      })),
      fired,
    };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const segments = url.pathname.split('/').filter((part) => part !== '');

    if (url.pathname === '/__faults') {
      if (method === 'GET') return sendJson(res, 200, faultsView());
      if (method === 'POST') {
        const body = await readJson(req);
        if (!isRecord(body)) throw validation('expected a JSON object');
        const n = optionalInteger(body, 'dropNextCreates', 0, 10_000);
        if (n !== undefined) dropNext = n;
        return sendJson(res, 200, faultsView());
      }
    }
    if (url.pathname === '/__schedules' && method === 'GET') return sendJson(res, 200, debugView());

    if (segments[0] === 'schedules' && segments.length === 1 && method === 'GET') {
      return sendJson(res, 200, list(url));
    }
    const label = segments[1];
    if (segments[0] === 'schedules' && segments.length === 2 && label !== undefined) {
      let name: string;
      try {
        name = checkName(decodeURIComponent(label), 'Name');
      } catch (error) {
        throw error instanceof ApiError ? error : validation('Name is not valid percent-encoding');
      }
      if (method === 'POST') {
        const body = await readJson(req);
        if (!isRecord(body)) throw validation('expected a JSON object');
        return sendJson(res, 200, create(name, body));
      }
      if (method === 'GET') return sendJson(res, 200, toGetScheduleOutput(find(name, url)));
      if (method === 'DELETE') {
        const s = find(name, url);
        store.delete(key(s.groupName, s.name));
        persist();
        return sendJson(res, 200, {});
      }
    }
    // Drain the body so the keep-alive socket stays usable.
    req.resume();
    throw new ApiError(404, 'UnknownOperationException', `${method} ${url.pathname} is not supported here`);
  }

  const server = createServer((req, res) => {
    // A client that gave up leaves a dead socket; writing to it must not crash the stand-in.
    res.on('error', () => {});
    req.on('error', () => {});
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof ApiError) sendError(res, error);
      else {
        log(`scheduler stand-in: internal error: ${errorName(error)}: ${(error as Error).message}`);
        sendError(res, new ApiError(500, 'InternalServerException', 'Internal error in the local stand-in'));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  scheduleTick();

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    schedules: () => [...store.values()].map(copy),
    fired: () => fired.map(copy),
    dropNextCreates(n: number) {
      if (!Number.isInteger(n) || n < 0) throw new RangeError('dropNextCreates: n must be a whole number');
      dropNext = n;
    },
    tick: runPass,
    close() {
      closing ??= (async () => {
        closed = true;
        clearTimeout(timer);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await stopped;
        // Sends in flight end within the SQS request timeout.
        await passes;
        sqs.destroy();
      })();
      return closing;
    },
  };
}

function parseCliArgs(argv: readonly string[]): SchedulerStandInOptions {
  let port = 8030;
  let sqsEndpoint = process.env.AWS_ENDPOINT_URL_SQS;
  const options: Partial<SchedulerStandInOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`missing value for ${arg}`);
    if (arg === '--port') port = Number.parseInt(value, 10);
    else if (arg === '--sqs') sqsEndpoint = value;
    else if (arg === '--region') options.region = value;
    else if (arg === '--state-file') options.stateFile = value;
    else if (arg === '--tick-ms') options.tickMs = Number.parseInt(value, 10);
    else throw new Error(`unknown argument: ${arg}`);
    i++;
  }
  if (!sqsEndpoint) throw new Error('--sqs <endpoint> (or AWS_ENDPOINT_URL_SQS) is required');
  return { ...options, port, sqsEndpoint };
}

if (isMainModule(import.meta.url)) {
  const standIn = await startSchedulerStandIn(parseCliArgs(process.argv.slice(2)));
  process.stdout.write(`${standIn.endpoint}\n`);
  closeOnSignal(() => standIn.close());
}
