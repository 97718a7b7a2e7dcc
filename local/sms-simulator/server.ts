/**
 * A Twilio-compatible SMS simulator: the subset of the 2010-04-01 REST API our adapter and
 * reconciler use (create, fetch and list Messages; status callbacks with real
 * `X-Twilio-Signature`s), plus fault controls for fault-injection tests.
 *
 * Magic, by default:
 * - a destination ending in `0000` is accepted (201) but ends `undelivered` with ErrorCode
 *   30003 (unreachable handset), callback included; change with `faults.deliveryFailures`;
 * - messages move `queued → sent → delivered` `statusDelayMs` (50 ms) apart.
 *
 * Test-only endpoints, unauthenticated (the server binds 127.0.0.1 only), so that a test can
 * drive a simulator running in another process:
 * - `GET /__faults` → current settings and counters; `POST /__faults` with a JSON patch of
 *   `FaultSettings` (`failNext` replaces the queue; `listingStatus` makes list requests fail);
 * - `GET /__messages` → `{ messages, counters }`;
 * - `POST /__messages/{sid}/status` with `{ status, errorCode? }` → moves one message (and calls back);
 * - `POST /__reset` → no messages, zero counters, default faults.
 *
 * Create requests go through, in order: Basic auth (401/20003) → rate limit (429/20429) →
 * the next `failNext` entry, else a randomized fault → validation (400) → stored (201).
 *
 * With `storeFile` its messages are kept in that file and resume their progression after a
 * restart (./store.ts); phone numbers and bodies are kept (tests read them back) but never
 * printed: they may carry health information even in test data.
 *
 * Parts: ./store.ts (messages), ./api.ts (the Twilio REST surface), ./lifecycle.ts (status
 * progression and signed callbacks), ./faults.ts (fault controls); this file routes requests.
 *
 * CLI: `npx tsx local/sms-simulator/server.ts [--port 8020] [--account-sid AC…] [--auth-token …]`
 * (credentials default to TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN, else the constants below)
 * prints its base URL and runs until SIGINT/SIGTERM.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';
import { closeOnSignal, isMainModule } from '../process-utils.ts';
import {
  API_VERSION,
  DEFAULT_ERROR_CODES,
  HttpProblem,
  handleList,
  json,
  readForm,
  readJson,
  toTwilioJson,
  twilioError,
  validateCreate,
} from './api.ts';
import {
  defaultSettings,
  type FaultControls,
  type FaultSettings,
  FaultState,
  zeroCounters,
} from './faults.ts';
import { MessageLifecycle } from './lifecycle.ts';
import { countSegments, MessageStore, type SimulatedMessage, SimulatedStatus } from './store.ts';

export type {
  DeliveryFailureRule,
  FailNextFault,
  FaultControls,
  FaultProbabilities,
  FaultSettings,
  SimulatorCounters,
} from './faults.ts';
export type {
  CallbackAttempt,
  SimulatedMessage,
} from './store.ts';
export { countSegments, SimulatedStatus } from './store.ts';

export const DEFAULT_ACCOUNT_SID = 'AC00000000000000000000000000000001';
export const DEFAULT_AUTH_TOKEN = '0123456789abcdef0123456789abcdef';

export interface SmsSimulator {
  readonly baseUrl: string;
  readonly port: number;
  readonly accountSid: string;
  readonly authToken: string;
  readonly faults: FaultControls;
  /** Copies, in creation order. */
  messages(): SimulatedMessage[];
  /** Moves one message to `status` and sends its callback; resolves when the callback is done. */
  setStatus(sid: string, status: SimulatedStatus, errorCode?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

export interface SmsSimulatorOptions {
  /** 0 or absent: an ephemeral port. */
  port?: number;
  accountSid?: string;
  authToken?: string;
  /** When given, `From` must be one of them (else 21606), as with a real account's numbers. */
  fromNumbers?: string[];
  /** Epoch ms for timestamps and the token bucket; status progression uses real timers. */
  clock?: () => number;
  statusDelayMs?: number;
  seed?: number;
  /** Keep the messages in this file (created if missing) and resume them after a restart. */
  storeFile?: string;
}

export async function startSmsSimulator(options: SmsSimulatorOptions = {}): Promise<SmsSimulator> {
  const accountSid = options.accountSid ?? DEFAULT_ACCOUNT_SID;
  const authToken = options.authToken ?? DEFAULT_AUTH_TOKEN;
  const clock = options.clock ?? Date.now;
  const fromNumbers = options.fromNumbers === undefined ? undefined : new Set(options.fromNumbers);
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`, 'utf8').toString('base64')}`;
  const accountPath = `/${API_VERSION}/Accounts/${accountSid}`;

  const faults = new FaultState(defaultSettings(options), clock);
  const store = new MessageStore(options.storeFile);
  const lifecycle = new MessageLifecycle(store, faults, authToken, clock);
  const counters = () => faults.mutableCounters;

  async function handleCreate(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters().createCalls++;
    const form = await readForm(req);

    const retryAfter = faults.takeToken();
    if (retryAfter !== undefined) {
      counters().rateLimited++;
      twilioError(res, 429, 20429, 'Too Many Requests', { 'retry-after': String(retryAfter) });
      return;
    }

    const fault = faults.nextFault();
    if (fault !== undefined) counters().faultsInjected++;
    switch (fault?.kind) {
      case 'status': {
        const code = fault.code ?? DEFAULT_ERROR_CODES[fault.status] ?? (fault.status >= 500 ? 20500 : 20001);
        if (fault.status === 429) counters().rateLimited++;
        const headers: Record<string, string> =
          fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
        twilioError(res, fault.status, code, `Simulated HTTP ${fault.status}`, headers);
        return;
      }
      case 'timeout_before_accept':
        lifecycle.hold(fault.delayMs, () => twilioError(res, 503, 20503, 'Service Unavailable'));
        return;
      case 'reset_before_accept':
        req.socket.destroy();
        return;
      default:
        break;
    }

    const fields = validateCreate(form, fromNumbers);
    const now = clock();
    const message = store.add({
      accountSid,
      ...fields,
      status: SimulatedStatus.queued,
      numSegments: countSegments(fields.body),
      dateCreated: now,
      dateSent: null,
      dateUpdated: now,
      errorCode: null,
      errorMessage: null,
      callbacks: [],
    });
    counters().accepted++;
    lifecycle.begin(message);
    const body = toTwilioJson(accountPath, message);
    if (fault?.kind === 'timeout_after_accept') {
      lifecycle.hold(fault.delayMs, () => json(res, 201, body));
    } else if (fault?.kind === 'reset_after_accept') {
      req.socket.destroy();
    } else {
      json(res, 201, body);
    }
  }

  function resetState(): void {
    lifecycle.abort();
    store.clear();
    faults.set(defaultSettings(options));
    faults.mutableCounters = zeroCounters();
  }

  async function setStatus(sid: string, status: SimulatedStatus, errorCode?: number): Promise<void> {
    const message = store.get(sid);
    if (message === undefined) throw new RangeError('unknown message sid');
    if (!Object.values(SimulatedStatus).includes(status)) throw new RangeError('unknown status');
    await lifecycle.transition(message, status, errorCode ?? null);
  }

  /** The test-only endpoints (`/__…`); false when the path is none of them. */
  async function testEndpoint(
    path: string,
    method: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<boolean> {
    if (path === '/__faults') {
      if (method === 'GET') {
        json(res, 200, faults.snapshot());
        return true;
      }
      if (method === 'POST') {
        const patch = await readJson(req);
        try {
          faults.set(patch as Partial<FaultSettings>);
        } catch (error) {
          json(res, 400, { error: error instanceof Error ? error.message : 'invalid settings' });
          return true;
        }
        json(res, 200, faults.snapshot());
        return true;
      }
    }
    if (path === '/__messages' && method === 'GET') {
      json(res, 200, { messages: store.all.map((m) => store.copy(m)), counters: faults.counters });
      return true;
    }
    const statusMatch = /^\/__messages\/([A-Za-z0-9]+)\/status$/.exec(path);
    if (statusMatch?.[1] !== undefined && method === 'POST') {
      const raw = await readJson(req);
      const input = (typeof raw === 'object' && raw !== null ? raw : {}) as {
        status?: unknown;
        errorCode?: unknown;
      };
      try {
        await setStatus(
          statusMatch[1],
          input.status as SimulatedStatus,
          typeof input.errorCode === 'number' ? input.errorCode : undefined,
        );
      } catch (error) {
        json(res, 400, { error: error instanceof Error ? error.message : 'invalid status' });
        return true;
      }
      const message = store.get(statusMatch[1]);
      json(res, 200, message === undefined ? {} : store.copy(message));
      return true;
    }
    if (path === '/__reset' && method === 'POST') {
      resetState();
      res.writeHead(204).end();
      return true;
    }
    return false;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (await testEndpoint(path, method, req, res)) return;

    const api = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages(?:\/([^/]+))?\.json$/.exec(path);
    if (api === null) throw new HttpProblem(404, 20404, 'The requested resource was not found');
    if (req.headers.authorization !== expectedAuth) {
      // Drain the body so the 401 is read as an answer, not a reset.
      req.resume();
      if (method === 'POST' && api[2] === undefined) counters().createCalls++;
      return twilioError(res, 401, 20003, 'Authenticate', { 'www-authenticate': 'Basic realm="Twilio API"' });
    }
    if (api[1] !== accountSid)
      throw new HttpProblem(404, 20404, `The requested resource ${path} was not found`);
    const messageSid = api[2];
    if (messageSid === undefined) {
      if (method === 'POST') return handleCreate(req, res);
      if (method === 'GET') {
        const failing = faults.listingStatus;
        if (failing !== null) {
          return twilioError(
            res,
            failing,
            DEFAULT_ERROR_CODES[failing] ?? 20500,
            `Simulated HTTP ${failing}`,
          );
        }
        return handleList(store, accountPath, url, res);
      }
    } else if (method === 'GET') {
      const message = store.get(messageSid);
      if (message === undefined)
        throw new HttpProblem(404, 20404, `The requested resource ${path} was not found`);
      return json(res, 200, toTwilioJson(accountPath, message));
    }
    throw new HttpProblem(405, 20004, 'Method not allowed');
  }

  const server = createServer((req, res) => {
    // A client that gave up leaves a dead socket; writing to it must not crash the simulator.
    res.on('error', () => {});
    req.on('error', () => {});
    route(req, res).catch((error: unknown) => {
      if (error instanceof HttpProblem) twilioError(res, error.status, error.code, error.message);
      else twilioError(res, 500, 20500, 'Internal Server Error');
    });
  });

  const port = await listenOnLoopback(server, options.port);
  const baseUrl = `http://127.0.0.1:${port}`;
  // Messages the previous run left on their way go on (and call back where they were told to).
  lifecycle.resume();

  return {
    baseUrl,
    port,
    accountSid,
    authToken,
    faults,
    messages: () => store.all.map((m) => store.copy(m)),
    setStatus,
    reset: resetState,
    close: async () => {
      lifecycle.abort();
      await closeServer(server);
    },
  };
}

function parseCliArgs(argv: readonly string[]): SmsSimulatorOptions {
  const options: SmsSimulatorOptions = { port: 8020 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--port' && value !== undefined) {
      options.port = Number.parseInt(value, 10);
      i++;
    } else if (arg === '--account-sid' && value !== undefined) {
      options.accountSid = value;
      i++;
    } else if (arg === '--auth-token' && value !== undefined) {
      options.authToken = value;
      i++;
    } else {
      throw new Error(`unknown argument: ${arg}`);
    }
  }
  options.accountSid ??= process.env.TWILIO_ACCOUNT_SID || undefined;
  options.authToken ??= process.env.TWILIO_AUTH_TOKEN || undefined;
  if (options.accountSid === undefined) delete options.accountSid;
  if (options.authToken === undefined) delete options.authToken;
  return options;
}

if (isMainModule(import.meta.url)) {
  const simulator = await startSmsSimulator(parseCliArgs(process.argv.slice(2)));
  process.stdout.write(`${simulator.baseUrl}\n`);
  closeOnSignal(() => simulator.close());
}
