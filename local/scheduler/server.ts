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
 * Parts: ./model.ts (records, validation, errors), ./store.ts (schedules and their state file),
 * ./firing.ts (the firing timer and retries), ./faults.ts (the lost-schedule fault); this file
 * serves the REST-JSON API and the test endpoints.
 *
 * CLI: `npx tsx local/scheduler/server.ts [--port 8030] [--sqs http://127.0.0.1:9324]
 * [--region us-east-1] [--state-file .local/scheduler.json] [--tick-ms 250]` (`--sqs`
 * defaults to AWS_ENDPOINT_URL_SQS) prints its endpoint and runs until SIGINT/SIGTERM.
 */

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';
import { closeOnSignal, isMainModule } from '../process-utils.ts';
import { SchedulerFaults } from './faults.ts';
import { createFiring } from './firing.ts';
import {
  ApiError,
  checkName,
  copy,
  DEFAULT_TICK_MS,
  errorName,
  type FiredRecord,
  isRecord,
  MAX_BODY_BYTES,
  optionalInteger,
  type ScheduleRecord,
  toGetScheduleOutput,
  validation,
} from './model.ts';
import { createScheduleStore } from './store.ts';

export type { FiredRecord, RetryPolicy, ScheduleRecord, ScheduleTarget } from './model.ts';
export { parseAtExpression } from './model.ts';

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
  /** Added to the client that enqueues the targets' messages: the role Scheduler assumes (local IAM). */
  sendAs?: { applyToStack(stack: unknown): void };
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

/** Starts the stand-in on 127.0.0.1 and its firing timer. */
export async function startSchedulerStandIn(options: SchedulerStandInOptions): Promise<SchedulerStandIn> {
  const region = options.region ?? 'us-east-1';
  const clock = options.clock ?? Date.now;
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const faults = new SchedulerFaults();
  const schedules = createScheduleStore({
    stateFile: options.stateFile,
    region,
    clock,
    log,
    dropThisCreate: () => faults.takeDrop(),
  });
  const store = schedules.schedules;
  const firing = createFiring({
    schedules,
    sqsEndpoint: options.sqsEndpoint,
    region,
    clock,
    tickMs,
    log,
    sendAs: options.sendAs,
  });
  const fired = firing.fired;

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
    return faults.view();
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
        if (n !== undefined) faults.dropNextCreates(n);
        return sendJson(res, 200, faultsView());
      }
    }
    if (url.pathname === '/__schedules' && method === 'GET') return sendJson(res, 200, debugView());

    if (segments[0] === 'schedules' && segments.length === 1 && method === 'GET') {
      return sendJson(res, 200, schedules.list(url));
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
        return sendJson(res, 200, schedules.create(name, body));
      }
      if (method === 'GET') return sendJson(res, 200, toGetScheduleOutput(schedules.find(name, url)));
      if (method === 'DELETE') {
        schedules.remove(schedules.find(name, url));
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

  const port = await listenOnLoopback(server, options.port);
  firing.start();

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    schedules: () => [...store.values()].map(copy),
    fired: () => fired.map(copy),
    dropNextCreates: (n: number) => faults.dropNextCreates(n),
    tick: () => firing.runPass(),
    close() {
      closing ??= (async () => {
        await closeServer(server);
        await firing.close();
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
