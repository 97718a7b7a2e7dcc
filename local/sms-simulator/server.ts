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
 *   `FaultSettings` (`failNext` replaces the queue);
 * - `GET /__messages` → `{ messages, counters }`;
 * - `POST /__messages/{sid}/status` with `{ status, errorCode? }` → moves one message (and calls back);
 * - `POST /__reset` → no messages, zero counters, default faults.
 *
 * Create requests go through, in order: Basic auth (401/20003) → rate limit (429/20429) →
 * the next `failNext` entry, else a randomized fault → validation (400) → stored (201).
 *
 * The simulator keeps phone numbers and bodies in memory (tests read them back) but never
 * prints them: they may carry health information even in test data.
 *
 * CLI: `npx tsx local/sms-simulator/server.ts [--port 8020] [--account-sid AC…] [--auth-token …]`
 * (credentials default to TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN, else the constants below)
 * prints its base URL and runs until SIGINT/SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { computeTwilioSignature } from '../../lambdas/adapters/twilio/twilio-signature.ts';
import { closeOnSignal, isMainModule } from '../process-utils.ts';
import { seededRandom as prng } from '../seeded-random.ts';

export const DEFAULT_ACCOUNT_SID = 'AC00000000000000000000000000000001';
export const DEFAULT_AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const API_VERSION = '2010-04-01';
const MAX_FORM_BYTES = 64 * 1024;
const MAX_BODY_CHARS = 1600;
/** Upper bound for any configured hold, so a mistyped fault cannot hang a test run for hours. */
const MAX_DELAY_MS = 10 * 60_000;
const CALLBACK_TIMEOUT_MS = 5_000;

export const SimulatedStatus = {
  queued: 'queued',
  sending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'canceled',
} as const;
export type SimulatedStatus = (typeof SimulatedStatus)[keyof typeof SimulatedStatus];

export interface CallbackAttempt {
  readonly status: SimulatedStatus;
  /** `null` when the request failed (refused, timed out). */
  readonly httpStatus: number | null;
}

export interface SimulatedMessage {
  readonly sid: string;
  readonly accountSid: string;
  readonly to: string;
  readonly from: string;
  readonly body: string;
  readonly status: SimulatedStatus;
  readonly statusCallback: string | null;
  readonly numSegments: number;
  /** Epoch ms from the simulator's clock. */
  readonly dateCreated: number;
  readonly dateSent: number | null;
  readonly dateUpdated: number;
  readonly errorCode: number | null;
  readonly errorMessage: string | null;
  readonly callbacks: readonly CallbackAttempt[];
}

export type FailNextFault =
  /** Answer with this status and a Twilio error body; nothing stored. */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly code?: number;
      readonly retryAfterSeconds?: number;
    }
  /** Store the message, then hold the 201 for `delayMs`: the provider accepted, the client may time out. */
  | { readonly kind: 'timeout_after_accept'; readonly delayMs: number }
  /** Hold for `delayMs`, store nothing, then answer 503 if the client is still there. */
  | { readonly kind: 'timeout_before_accept'; readonly delayMs: number }
  /** Store the message, then destroy the socket without answering. */
  | { readonly kind: 'reset_after_accept' }
  /** Destroy the socket without storing anything. */
  | { readonly kind: 'reset_before_accept' };

/** Per create call, drawn from the seeded PRNG when `failNext` is empty; their sum must be ≤ 1. */
export interface FaultProbabilities {
  readonly timeoutAfterAccept: number;
  readonly timeoutBeforeAccept: number;
  readonly status500: number;
  readonly status429: number;
}

/** A destination whose number ends in `toSuffix` is accepted, then ends in `status` with `errorCode`. */
export interface DeliveryFailureRule {
  readonly toSuffix: string;
  readonly status: 'undelivered' | 'failed';
  readonly errorCode: number;
}

export interface FaultSettings {
  /** Token bucket: at most R tokens, refilled at R per second; `null` = unlimited. */
  rateLimitPerSecond: number | null;
  failNext: FailNextFault[];
  probabilities: FaultProbabilities;
  /** Setting it restarts the PRNG, so a run with the same seed draws the same faults. */
  seed: number;
  /** How long randomized timeouts hold the response. */
  randomTimeoutMs: number;
  callbacksEnabled: boolean;
  /** Delay between status changes. */
  statusDelayMs: number;
  /** When false, messages stay `queued` until moved with `setStatus`. */
  autoAdvance: boolean;
  deliveryFailures: DeliveryFailureRule[];
}

export interface SimulatorCounters {
  /** Every POST to Messages.json, whatever the answer. */
  readonly createCalls: number;
  /** Messages stored (including those whose response was then withheld). */
  readonly accepted: number;
  /** 429 answers, from the bucket or injected. */
  readonly rateLimited: number;
  readonly faultsInjected: number;
  readonly callbacksSent: number;
  readonly callbacksFailed: number;
}

export interface FaultControls extends FaultSettings {
  readonly counters: SimulatorCounters;
  /** Applies a partial patch, validated like the HTTP endpoint; throws `RangeError` on bad input. */
  set(patch: Partial<FaultSettings>): void;
  snapshot(): FaultSettings & { counters: SimulatorCounters };
}

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
}

function defaultSettings(options: SmsSimulatorOptions): FaultSettings {
  return {
    rateLimitPerSecond: null,
    failNext: [],
    probabilities: { timeoutAfterAccept: 0, timeoutBeforeAccept: 0, status500: 0, status429: 0 },
    seed: options.seed ?? 1,
    randomTimeoutMs: 15_000,
    callbacksEnabled: true,
    statusDelayMs: options.statusDelayMs ?? 50,
    autoAdvance: true,
    deliveryFailures: [{ toSuffix: '0000', status: 'undelivered', errorCode: 30003 }],
  };
}

class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #capacity: number;
  constructor(
    readonly rate: number,
    now: number,
  ) {
    // A fractional rate still needs room for one whole token.
    this.#capacity = Math.max(1, rate);
    this.#tokens = this.#capacity;
    this.#last = now;
  }
  /** `undefined` when a token was taken, else whole seconds until the next one (≥ 1). */
  take(now: number): number | undefined {
    if (now > this.#last) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#last) / 1000) * this.rate);
      this.#last = now;
    }
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.rate));
  }
}

class FaultState implements FaultControls {
  #settings: FaultSettings;
  #bucket: TokenBucket | undefined;
  #random: () => number;
  readonly #clock: () => number;
  mutableCounters = zeroCounters();

  constructor(settings: FaultSettings, clock: () => number) {
    this.#settings = settings;
    this.#clock = clock;
    this.#random = prng(settings.seed);
  }

  get rateLimitPerSecond(): number | null {
    return this.#settings.rateLimitPerSecond;
  }
  set rateLimitPerSecond(value: number | null) {
    if (value !== null && !(Number.isFinite(value) && value > 0))
      throw new RangeError('rateLimitPerSecond must be > 0 or null');
    this.#settings.rateLimitPerSecond = value;
    this.#bucket = value === null ? undefined : new TokenBucket(value, this.#clock());
  }
  get failNext(): FailNextFault[] {
    return this.#settings.failNext;
  }
  set failNext(value: FailNextFault[]) {
    if (!Array.isArray(value)) throw new RangeError('failNext must be an array');
    this.#settings.failNext = value.map(validateFault);
  }
  get probabilities(): FaultProbabilities {
    return this.#settings.probabilities;
  }
  set probabilities(value: Partial<FaultProbabilities>) {
    const merged = { ...this.#settings.probabilities, ...value };
    let sum = 0;
    for (const [key, p] of Object.entries(merged)) {
      if (typeof p !== 'number' || !(p >= 0 && p <= 1))
        throw new RangeError(`probabilities.${key} must be in [0, 1]`);
      sum += p;
    }
    if (sum > 1 + 1e-9) throw new RangeError('probabilities must sum to at most 1');
    this.#settings.probabilities = merged;
  }
  get seed(): number {
    return this.#settings.seed;
  }
  set seed(value: number) {
    if (!Number.isInteger(value)) throw new RangeError('seed must be an integer');
    this.#settings.seed = value;
    this.#random = prng(value);
  }
  get randomTimeoutMs(): number {
    return this.#settings.randomTimeoutMs;
  }
  set randomTimeoutMs(value: number) {
    this.#settings.randomTimeoutMs = validDelay(value, 'randomTimeoutMs');
  }
  get callbacksEnabled(): boolean {
    return this.#settings.callbacksEnabled;
  }
  set callbacksEnabled(value: boolean) {
    if (typeof value !== 'boolean') throw new RangeError('callbacksEnabled must be a boolean');
    this.#settings.callbacksEnabled = value;
  }
  get statusDelayMs(): number {
    return this.#settings.statusDelayMs;
  }
  set statusDelayMs(value: number) {
    this.#settings.statusDelayMs = validDelay(value, 'statusDelayMs');
  }
  get autoAdvance(): boolean {
    return this.#settings.autoAdvance;
  }
  set autoAdvance(value: boolean) {
    if (typeof value !== 'boolean') throw new RangeError('autoAdvance must be a boolean');
    this.#settings.autoAdvance = value;
  }
  get deliveryFailures(): DeliveryFailureRule[] {
    return this.#settings.deliveryFailures;
  }
  set deliveryFailures(value: DeliveryFailureRule[]) {
    if (!Array.isArray(value)) throw new RangeError('deliveryFailures must be an array');
    this.#settings.deliveryFailures = value.map((rule) => {
      if (
        typeof rule !== 'object' ||
        rule === null ||
        typeof rule.toSuffix !== 'string' ||
        (rule.status !== 'undelivered' && rule.status !== 'failed') ||
        !Number.isInteger(rule.errorCode)
      ) {
        throw new RangeError(
          'deliveryFailures entries need toSuffix, status (undelivered|failed), errorCode',
        );
      }
      return { toSuffix: rule.toSuffix, status: rule.status, errorCode: rule.errorCode };
    });
  }
  get counters(): SimulatorCounters {
    return { ...this.mutableCounters };
  }

  set(patch: Partial<FaultSettings>): void {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
      throw new RangeError('expected an object');
    const known: (keyof FaultSettings)[] = [
      'rateLimitPerSecond',
      'failNext',
      'probabilities',
      'seed',
      'randomTimeoutMs',
      'callbacksEnabled',
      'statusDelayMs',
      'autoAdvance',
      'deliveryFailures',
    ];
    for (const key of Object.keys(patch)) {
      if (!(known as string[]).includes(key)) throw new RangeError(`unknown setting: ${key}`);
    }
    // Validate everything on a scratch copy first, so a bad patch changes nothing.
    const scratch = new FaultState(structuredClone(this.#settings), this.#clock);
    Object.assign(scratch, patch);
    Object.assign(this, patch);
  }

  snapshot(): FaultSettings & { counters: SimulatorCounters } {
    return { ...structuredClone(this.#settings), counters: this.counters };
  }

  /** `undefined` = a token was available (or no limit); else the Retry-After in seconds. */
  takeToken(): number | undefined {
    return this.#bucket?.take(this.#clock());
  }

  nextFault(): FailNextFault | undefined {
    const queued = this.#settings.failNext.shift();
    if (queued !== undefined) return queued;
    const p = this.#settings.probabilities;
    if (p.timeoutAfterAccept + p.timeoutBeforeAccept + p.status500 + p.status429 === 0) return undefined;
    const r = this.#random();
    let edge = p.timeoutAfterAccept;
    if (r < edge) return { kind: 'timeout_after_accept', delayMs: this.#settings.randomTimeoutMs };
    edge += p.timeoutBeforeAccept;
    if (r < edge) return { kind: 'timeout_before_accept', delayMs: this.#settings.randomTimeoutMs };
    edge += p.status500;
    if (r < edge) return { kind: 'status', status: 500 };
    edge += p.status429;
    if (r < edge) return { kind: 'status', status: 429, retryAfterSeconds: 1 };
    return undefined;
  }
}

/** Every message in flight waits on this signal; that many listeners is expected, not a leak. */
function lifecycleController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

function zeroCounters(): { -readonly [K in keyof SimulatorCounters]: number } {
  return {
    createCalls: 0,
    accepted: 0,
    rateLimited: 0,
    faultsInjected: 0,
    callbacksSent: 0,
    callbacksFailed: 0,
  };
}

function validDelay(value: unknown, name: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_DELAY_MS)) {
    throw new RangeError(`${name} must be between 0 and ${MAX_DELAY_MS} ms`);
  }
  return value;
}

function validateFault(fault: unknown): FailNextFault {
  if (typeof fault !== 'object' || fault === null)
    throw new RangeError('each failNext entry must be an object');
  const f = fault as Record<string, unknown>;
  switch (f.kind) {
    case 'status': {
      if (!Number.isInteger(f.status) || (f.status as number) < 400 || (f.status as number) > 599) {
        throw new RangeError('status fault needs a 4xx/5xx status');
      }
      if (f.code !== undefined && !Number.isInteger(f.code))
        throw new RangeError('status fault code must be an integer');
      if (
        f.retryAfterSeconds !== undefined &&
        !(Number.isInteger(f.retryAfterSeconds) && (f.retryAfterSeconds as number) >= 0)
      ) {
        throw new RangeError('retryAfterSeconds must be a non-negative integer');
      }
      return {
        kind: 'status',
        status: f.status as number,
        ...(f.code === undefined ? {} : { code: f.code as number }),
        ...(f.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: f.retryAfterSeconds as number }),
      };
    }
    case 'timeout_after_accept':
    case 'timeout_before_accept':
      return { kind: f.kind, delayMs: validDelay(f.delayMs, `${f.kind}.delayMs`) };
    case 'reset_after_accept':
    case 'reset_before_accept':
      return { kind: f.kind };
    default:
      throw new RangeError('unknown fault kind');
  }
}

const E164 = /^\+[1-9]\d{1,14}$/;
const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;
const SHORT_CODE = /^\d{3,8}$/;
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENSION = new Set('^{}\\[~]|€\f');

/** Segments as carriers count them: GSM-7 160/153 septets, otherwise UCS-2 70/67 code units. */
export function countSegments(body: string): number {
  let septets = 0;
  let gsm = true;
  for (const ch of body) {
    if (GSM7_BASIC.has(ch)) septets += 1;
    else if (GSM7_EXTENSION.has(ch)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  return body.length <= 70 ? 1 : Math.ceil(body.length / 67);
}

/** Twilio's date format: `Thu, 30 Jul 2015 20:12:31 +0000`. */
function rfc2822(ms: number): string {
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

interface StoredMessage {
  seq: number;
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  status: SimulatedStatus;
  statusCallback: string | null;
  numSegments: number;
  dateCreated: number;
  dateSent: number | null;
  dateUpdated: number;
  errorCode: number | null;
  errorMessage: string | null;
  callbacks: CallbackAttempt[];
}

const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  30003: 'Unreachable destination handset',
  30005: 'Unknown destination handset',
  30006: 'Landline or unreachable carrier',
  30007: 'Message filtered',
  30008: 'Unknown error',
};

/** Default Twilio error codes for injected status faults without an explicit code. */
const DEFAULT_ERROR_CODES: Readonly<Record<number, number>> = {
  400: 21211,
  401: 20003,
  403: 20003,
  404: 20404,
  429: 20429,
  500: 20500,
  503: 20503,
};

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface DateRange {
  from: number;
  to: number;
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` covers the whole UTC day; any other parseable timestamp is taken to the second. */
function parseDateFilter(value: string): DateRange {
  const trimmed = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const start = Date.parse(`${trimmed}T00:00:00Z`);
    if (!Number.isNaN(start)) return { from: start, to: start + DAY_MS - 1 };
  } else {
    const at = Date.parse(trimmed);
    if (!Number.isNaN(at)) {
      const second = Math.floor(at / 1000) * 1000;
      return { from: second, to: second + 999 };
    }
  }
  throw new HttpProblem(400, 20001, 'Invalid DateSent filter');
}

export async function startSmsSimulator(options: SmsSimulatorOptions = {}): Promise<SmsSimulator> {
  const accountSid = options.accountSid ?? DEFAULT_ACCOUNT_SID;
  const authToken = options.authToken ?? DEFAULT_AUTH_TOKEN;
  const clock = options.clock ?? Date.now;
  const fromNumbers = options.fromNumbers === undefined ? undefined : new Set(options.fromNumbers);
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`, 'utf8').toString('base64')}`;
  const accountPath = `/${API_VERSION}/Accounts/${accountSid}`;

  const faults = new FaultState(defaultSettings(options), clock);
  let store: StoredMessage[] = [];
  let bySid = new Map<string, StoredMessage>();
  let seq = 0;
  // Aborted on reset/close: stops status progression and in-flight callbacks of the old state.
  let lifecycle = lifecycleController();
  const holds = new Set<NodeJS.Timeout>();

  const counters = () => faults.mutableCounters;

  function json(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    if (res.writableEnded || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  function twilioError(
    res: ServerResponse,
    status: number,
    code: number,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    json(
      res,
      status,
      { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
      headers,
    );
  }

  function toTwilioJson(m: StoredMessage): Record<string, unknown> {
    const uri = `${accountPath}/Messages/${m.sid}.json`;
    return {
      account_sid: m.accountSid,
      api_version: API_VERSION,
      body: m.body,
      date_created: rfc2822(m.dateCreated),
      date_sent: m.dateSent === null ? null : rfc2822(m.dateSent),
      date_updated: rfc2822(m.dateUpdated),
      direction: 'outbound-api',
      error_code: m.errorCode,
      error_message: m.errorMessage,
      from: m.from,
      messaging_service_sid: null,
      num_media: '0',
      num_segments: String(m.numSegments),
      price: null,
      price_unit: 'USD',
      sid: m.sid,
      status: m.status,
      subresource_uris: { media: `${accountPath}/Messages/${m.sid}/Media.json` },
      to: m.to,
      uri,
    };
  }

  function copy(m: StoredMessage): SimulatedMessage {
    const { seq: _seq, ...rest } = m;
    return { ...rest, callbacks: [...m.callbacks] };
  }

  function hold(ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      holds.delete(timer);
      then();
    }, ms);
    holds.add(timer);
  }

  async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_FORM_BYTES) throw new HttpProblem(413, 20001, 'Request body too large');
      chunks.push(chunk as Buffer);
    }
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_FORM_BYTES) throw new HttpProblem(413, 20001, 'Request body too large');
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return text === '' ? {} : JSON.parse(text);
    } catch {
      throw new HttpProblem(400, 20001, 'Body is not JSON');
    }
  }

  /** Twilio's checks, in Twilio's order; the message quotes the number as Twilio's does. */
  function validateCreate(form: URLSearchParams): {
    to: string;
    from: string;
    body: string;
    statusCallback: string | null;
  } {
    const to = form.get('To');
    const from = form.get('From');
    const body = form.get('Body') ?? '';
    const statusCallback = form.get('StatusCallback');
    if (to === null || to === '') throw new HttpProblem(400, 21604, "A 'To' phone number is required.");
    if (!E164.test(to))
      throw new HttpProblem(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    if (from === null || from === '') throw new HttpProblem(400, 21603, "A 'From' phone number is required.");
    if (!E164.test(from) && !ALPHANUMERIC_SENDER.test(from) && !SHORT_CODE.test(from)) {
      throw new HttpProblem(
        400,
        21212,
        `The 'From' number ${from} is not a valid phone number, shortcode, or alphanumeric sender ID.`,
      );
    }
    if (fromNumbers !== undefined && !fromNumbers.has(from)) {
      throw new HttpProblem(
        400,
        21606,
        `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`,
      );
    }
    if (to === from) throw new HttpProblem(400, 21266, "'To' and 'From' number cannot be the same.");
    if (body === '') throw new HttpProblem(400, 21602, 'Message body is required.');
    if ([...body].length > MAX_BODY_CHARS) {
      throw new HttpProblem(400, 21617, 'The concatenated message body exceeds the 1600 character limit.');
    }
    if (statusCallback !== null && statusCallback !== '') {
      let valid = false;
      try {
        const url = new URL(statusCallback);
        valid = url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        valid = false;
      }
      if (!valid) throw new HttpProblem(400, 21609, 'The StatusCallback URL is not a valid URL.');
    }
    return { to, from, body, statusCallback: statusCallback === '' ? null : statusCallback };
  }

  function storeMessage(fields: {
    to: string;
    from: string;
    body: string;
    statusCallback: string | null;
  }): StoredMessage {
    const now = clock();
    const message: StoredMessage = {
      seq: seq++,
      sid: `SM${randomBytes(16).toString('hex')}`,
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
    };
    store.push(message);
    bySid.set(message.sid, message);
    counters().accepted++;
    if (faults.autoAdvance) void progress(message, lifecycle.signal);
    return message;
  }

  async function progress(message: StoredMessage, signal: AbortSignal): Promise<void> {
    try {
      const rule = faults.deliveryFailures.find((r) => message.to.endsWith(r.toSuffix));
      await sleep(faults.statusDelayMs, undefined, { signal });
      if (rule?.status === 'failed') {
        await transition(message, SimulatedStatus.failed, rule.errorCode, signal);
        return;
      }
      await transition(message, SimulatedStatus.sent, null, signal);
      await sleep(faults.statusDelayMs, undefined, { signal });
      if (rule !== undefined) await transition(message, SimulatedStatus.undelivered, rule.errorCode, signal);
      else await transition(message, SimulatedStatus.delivered, null, signal);
    } catch {
      // Aborted by reset/close: the old state is gone, nothing to report.
    }
  }

  async function transition(
    message: StoredMessage,
    status: SimulatedStatus,
    errorCode: number | null,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) return;
    const now = clock();
    message.status = status;
    message.dateUpdated = now;
    if (status === SimulatedStatus.sent && message.dateSent === null) message.dateSent = now;
    message.errorCode = errorCode;
    message.errorMessage = errorCode === null ? null : (ERROR_MESSAGES[errorCode] ?? 'Delivery failed');
    if (faults.callbacksEnabled && message.statusCallback !== null) await callback(message, status, signal);
  }

  async function callback(
    message: StoredMessage,
    status: SimulatedStatus,
    signal: AbortSignal,
  ): Promise<void> {
    const url = message.statusCallback;
    if (url === null) return;
    const params: Record<string, string> = {
      AccountSid: message.accountSid,
      ApiVersion: API_VERSION,
      From: message.from,
      MessageSid: message.sid,
      MessageStatus: status,
      SmsSid: message.sid,
      SmsStatus: status,
      To: message.to,
    };
    if (message.errorCode !== null) params.ErrorCode = String(message.errorCode);
    let httpStatus: number | null = null;
    // One controller per callback, detached afterwards, so thousands of messages do not pile
    // listeners onto the shared lifecycle signal.
    const request = new AbortController();
    const abort = () => request.abort();
    signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(abort, CALLBACK_TIMEOUT_MS);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': computeTwilioSignature(authToken, url, params),
          // Twilio's webhook dedupe token: the same for a retried delivery of one status.
          'i-twilio-idempotency-token': `${message.sid}-${status}`,
          'user-agent': 'TwilioProxy/1.1',
        },
        body: new URLSearchParams(params).toString(),
        signal: request.signal,
        redirect: 'manual',
      });
      httpStatus = response.status;
      await response.arrayBuffer();
    } catch {
      // Twilio gives up silently too (one retry at most); the test reads `callbacks` to see it.
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    }
    if (signal.aborted) return;
    message.callbacks.push({ status, httpStatus });
    if (httpStatus !== null && httpStatus < 300) counters().callbacksSent++;
    else counters().callbacksFailed++;
  }

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
        hold(fault.delayMs, () => twilioError(res, 503, 20503, 'Service Unavailable'));
        return;
      case 'reset_before_accept':
        req.socket.destroy();
        return;
      default:
        break;
    }

    const message = storeMessage(validateCreate(form));
    const body = toTwilioJson(message);
    if (fault?.kind === 'timeout_after_accept') {
      hold(fault.delayMs, () => json(res, 201, body));
    } else if (fault?.kind === 'reset_after_accept') {
      req.socket.destroy();
    } else {
      json(res, 201, body);
    }
  }

  function handleList(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const to = q.get('To');
    const from = q.get('From');
    // `DateSent>=D` arrives as the key `DateSent>` (the `=` separates key and value); accept
    // an encoded `DateSent>=` key too. Both bounds are inclusive, as Twilio documents.
    const afterRaw = q.get('DateSent>') ?? q.get('DateSent>=');
    const beforeRaw = q.get('DateSent<') ?? q.get('DateSent<=');
    const exactRaw = q.get('DateSent');
    const after = afterRaw === null ? undefined : parseDateFilter(afterRaw).from;
    const before = beforeRaw === null ? undefined : parseDateFilter(beforeRaw).to;
    const exact = exactRaw === null ? undefined : parseDateFilter(exactRaw);
    const pageSizeRaw = q.get('PageSize');
    const pageSize =
      pageSizeRaw === null ? 50 : Math.min(1000, Math.max(1, Number.parseInt(pageSizeRaw, 10) || 50));
    const page = Math.max(0, Number.parseInt(q.get('Page') ?? '0', 10) || 0);
    const token = q.get('PageToken');

    const matches = store
      .filter((m) => {
        if (to !== null && m.to !== to) return false;
        if (from !== null && m.from !== from) return false;
        // Real Twilio fills date_sent only once a message leaves its queue; the simulator falls
        // back to date_created so a still-queued message can be found (documented leniency).
        const date = m.dateSent ?? m.dateCreated;
        if (after !== undefined && date < after) return false;
        if (before !== undefined && date > before) return false;
        if (exact !== undefined && (date < exact.from || date > exact.to)) return false;
        return true;
      })
      .sort((a, b) => b.dateCreated - a.dateCreated || b.seq - a.seq);

    let start: number;
    if (token !== null) {
      if (!token.startsWith('PA')) throw new HttpProblem(400, 20001, 'Invalid PageToken');
      const index = matches.findIndex((m) => m.sid === token.slice(2));
      // A token for a message that no longer matches (reset) yields an empty page, not an error.
      start = index === -1 ? matches.length : index + 1;
    } else {
      start = page * pageSize;
    }
    const items = matches.slice(start, start + pageSize);

    const filters = new URLSearchParams();
    for (const key of ['To', 'From', 'DateSent', 'DateSent>', 'DateSent>=', 'DateSent<', 'DateSent<=']) {
      const value = q.get(key);
      if (value !== null) filters.set(key, value);
    }
    const pageUri = (extra: Record<string, string>) => {
      const params = new URLSearchParams(filters);
      params.set('PageSize', String(pageSize));
      for (const [k, v] of Object.entries(extra)) params.set(k, v);
      return `${accountPath}/Messages.json?${params.toString()}`;
    };
    const last = items[items.length - 1];
    const hasMore = start + items.length < matches.length && last !== undefined;
    json(res, 200, {
      messages: items.map(toTwilioJson),
      end: start + Math.max(0, items.length - 1),
      first_page_uri: pageUri({ Page: '0' }),
      next_page_uri: hasMore ? pageUri({ Page: String(page + 1), PageToken: `PA${last.sid}` }) : null,
      previous_page_uri: page > 0 ? pageUri({ Page: String(page - 1) }) : null,
      page,
      page_size: pageSize,
      start,
      uri: `${url.pathname}${url.search}`,
    });
  }

  function resetState(): void {
    lifecycle.abort();
    lifecycle = lifecycleController();
    store = [];
    bySid = new Map();
    seq = 0;
    faults.set(defaultSettings(options));
    faults.mutableCounters = zeroCounters();
  }

  async function setStatus(sid: string, status: SimulatedStatus, errorCode?: number): Promise<void> {
    const message = bySid.get(sid);
    if (message === undefined) throw new RangeError('unknown message sid');
    if (!Object.values(SimulatedStatus).includes(status)) throw new RangeError('unknown status');
    await transition(message, status, errorCode ?? null, lifecycle.signal);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';

    if (path === '/__faults') {
      if (method === 'GET') return json(res, 200, faults.snapshot());
      if (method === 'POST') {
        const patch = await readJson(req);
        try {
          faults.set(patch as Partial<FaultSettings>);
        } catch (error) {
          return json(res, 400, { error: error instanceof Error ? error.message : 'invalid settings' });
        }
        return json(res, 200, faults.snapshot());
      }
    }
    if (path === '/__messages' && method === 'GET') {
      return json(res, 200, { messages: store.map(copy), counters: faults.counters });
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
        return json(res, 400, { error: error instanceof Error ? error.message : 'invalid status' });
      }
      const message = bySid.get(statusMatch[1]);
      return json(res, 200, message === undefined ? {} : copy(message));
    }
    if (path === '/__reset' && method === 'POST') {
      resetState();
      res.writeHead(204).end();
      return;
    }

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
      if (method === 'GET') return handleList(url, res);
    } else if (method === 'GET') {
      const message = bySid.get(messageSid);
      if (message === undefined)
        throw new HttpProblem(404, 20404, `The requested resource ${path} was not found`);
      return json(res, 200, toTwilioJson(message));
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

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    port,
    accountSid,
    authToken,
    faults,
    messages: () => store.map(copy),
    setStatus,
    reset: resetState,
    close: async () => {
      lifecycle.abort();
      for (const timer of holds) clearTimeout(timer);
      holds.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
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
