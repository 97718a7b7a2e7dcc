/**
 * What the e-mail provider simulators (local/email-simulators/resend.ts, sendgrid.ts) share: a
 * token bucket that also reports the rate-limit headers, an append-only JSON-lines store that
 * survives a kill -9, held responses that a close cancels, a webhook outbox that retries and
 * survives restarts, and the faults every simulator offers (scripted and seeded random).
 * Addresses and bodies are kept (tests read them back) but never printed.
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { seededRandom } from '../seeded-random.ts';
import {
  type FaultProbabilities,
  mergeProbabilities,
  NO_FAULT_PROBABILITIES,
  type TransportFault,
  validateStatusFields,
  validateTransportFault,
  validDelay,
} from '../simulator-faults.ts';

// --- rate limit ------------------------------------------------------------------------------

export interface BucketReading {
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until a token is back (≥ 1 when empty). */
  readonly resetSeconds: number;
}

/** At most R tokens, refilled at R per second; `take` answers what rate-limit headers say. */
export class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #capacity: number;
  constructor(
    readonly rate: number,
    now: number,
  ) {
    this.#capacity = Math.max(1, rate);
    this.#tokens = this.#capacity;
    this.#last = now;
  }

  take(now: number): { readonly ok: boolean } & BucketReading {
    if (now > this.#last) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#last) / 1000) * this.rate);
      this.#last = now;
    }
    const ok = this.#tokens >= 1;
    if (ok) this.#tokens -= 1;
    return {
      ok,
      limit: Math.floor(this.#capacity),
      remaining: Math.max(0, Math.floor(this.#tokens)),
      resetSeconds: this.#tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - this.#tokens) / this.rate)),
    };
  }
}

// --- store -----------------------------------------------------------------------------------

/**
 * Records by id, in insertion order. With a file, every change is appended as the record's new
 * snapshot (synchronously, before the request that made it is answered) and the file is
 * replayed at start (last snapshot per id wins; a line cut short by a kill -9 is skipped) and
 * compacted.
 */
export class JsonlStore<T extends { readonly id: string }> {
  #records = new Map<string, T>();
  constructor(private readonly file?: string) {
    if (file) this.#load(file);
  }

  get all(): T[] {
    return [...this.#records.values()];
  }

  get(id: string): T | undefined {
    return this.#records.get(id);
  }

  put(record: T): T {
    this.#records.delete(record.id);
    this.#records.set(record.id, record);
    if (this.file) appendFileSync(this.file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    return record;
  }

  delete(id: string): void {
    if (!this.#records.delete(id)) return;
    if (this.file) appendFileSync(this.file, `${JSON.stringify({ id, deleted: true })}\n`, { mode: 0o600 });
  }

  clear(): void {
    this.#records = new Map();
    if (this.file) writeFileSync(this.file, '', { mode: 0o600 });
  }

  #load(file: string): void {
    mkdirSync(dirname(file), { recursive: true });
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let record: T & { deleted?: boolean };
      try {
        record = JSON.parse(line) as T & { deleted?: boolean };
      } catch {
        continue;
      }
      if (record.deleted) this.#records.delete(record.id);
      else this.#records.set(record.id, record);
    }
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, this.all.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
    renameSync(staging, file);
  }
}

// --- holds -----------------------------------------------------------------------------------

/** Timers for held responses; `clear` (reset, close) drops them all. */
export class Holds {
  readonly #timers = new Set<NodeJS.Timeout>();
  after(ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      then();
    }, ms);
    this.#timers.add(timer);
  }
  clear(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}

// --- http ------------------------------------------------------------------------------------

export class TooLarge extends Error {}

export async function readRaw(req: IncomingMessage, limit = 1_000_000): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new TooLarge('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

// --- faults ----------------------------------------------------------------------------------

/** A fault for the next send call; each simulator answers `status` in its provider's words. */
export type SendFault =
  /** Answer this status (with the provider's error body; `name` picks Resend's error name). */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly name?: string;
      readonly retryAfterSeconds?: number;
      /** Take the message first, then answer the status (a 5xx after the provider took it). */
      readonly afterAccept?: boolean;
    }
  | TransportFault;

export type SendFaultProbabilities = FaultProbabilities;
export const NO_PROBABILITIES = NO_FAULT_PROBABILITIES;

export function validateFault(fault: unknown): SendFault {
  if (typeof fault !== 'object' || fault === null) throw new RangeError('each fault must be an object');
  const f = fault as Record<string, unknown>;
  if (f.kind !== 'status') {
    const transport = validateTransportFault(f);
    if (!transport) throw new RangeError('unknown fault kind');
    return transport;
  }
  const common = validateStatusFields(f);
  if (f.name !== undefined && (typeof f.name !== 'string' || !/^[a-z_]{1,64}$/.test(f.name))) {
    throw new RangeError('status fault name must be snake_case');
  }
  return {
    kind: 'status',
    status: common.status,
    ...(f.name === undefined ? {} : { name: f.name as string }),
    ...(common.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: common.retryAfterSeconds }),
    ...(f.afterAccept === true ? { afterAccept: true } : {}),
  };
}

/** Scripted faults first, then seeded random draws; `random` may be replaced by a test. */
export class SendFaults {
  failNext: SendFault[] = [];
  #probabilities: SendFaultProbabilities = NO_PROBABILITIES;
  #random: () => number;
  randomTimeoutMs = 15_000;
  /** A test's own draw per call (overrides `failNext` and the probabilities when set). */
  random: (() => SendFault | undefined) | undefined;

  constructor(seed = 1) {
    this.#random = seededRandom(seed);
  }

  get probabilities(): SendFaultProbabilities {
    return this.#probabilities;
  }

  setProbabilities(value: Partial<SendFaultProbabilities>): void {
    this.#probabilities = mergeProbabilities(this.#probabilities, value);
  }

  reseed(seed: number): void {
    if (!Number.isInteger(seed)) throw new RangeError('seed must be an integer');
    this.#random = seededRandom(seed);
  }

  setRandomTimeoutMs(ms: number): void {
    this.randomTimeoutMs = validDelay(ms, 'randomTimeoutMs');
  }

  next(): SendFault | undefined {
    if (this.random) return this.random();
    const queued = this.failNext.shift();
    if (queued !== undefined) return queued;
    const p = this.#probabilities;
    if (p.timeoutAfterAccept + p.timeoutBeforeAccept + p.status500 + p.status429 === 0) return undefined;
    const r = this.#random();
    let edge = p.timeoutAfterAccept;
    if (r < edge) return { kind: 'timeout_after_accept', delayMs: this.randomTimeoutMs };
    edge += p.timeoutBeforeAccept;
    if (r < edge) return { kind: 'timeout_before_accept', delayMs: this.randomTimeoutMs };
    edge += p.status500;
    if (r < edge) return { kind: 'status', status: 500 };
    edge += p.status429;
    if (r < edge) return { kind: 'status', status: 429, retryAfterSeconds: 1 };
    return undefined;
  }
}

/** The settings every email simulator takes (each adds its own). */
export interface CommonSendSettings {
  rateLimitPerSecond: number | null;
  failNext: SendFault[];
  probabilities: SendFaultProbabilities;
  seed: number;
  randomTimeoutMs: number;
  webhooksEnabled: boolean;
}

const COMMON_SETTING_KEYS = [
  'rateLimitPerSecond',
  'failNext',
  'probabilities',
  'seed',
  'randomTimeoutMs',
  'webhooksEnabled',
] as const;

/**
 * Checks a settings patch (no unknown key, a valid rate and faults) and applies its common part:
 * faults, webhooks on/off, and the rate limit (`rateLimit` is told the new rate, null = none).
 * A patch that is refused changes nothing of the faults it names; the caller applies its own keys.
 */
export function applyCommonSettings(
  patch: Partial<CommonSendSettings> & Record<string, unknown>,
  ownKeys: readonly string[],
  target: { faults: SendFaults; outbox: WebhookOutbox; rateLimit(perSecond: number | null): void },
): void {
  for (const key of Object.keys(patch))
    if (!(COMMON_SETTING_KEYS as readonly string[]).includes(key) && !ownKeys.includes(key))
      throw new RangeError(`unknown setting: ${key}`);
  const failNext = patch.failNext === undefined ? undefined : patch.failNext.map(validateFault);
  if (patch.rateLimitPerSecond !== undefined && patch.rateLimitPerSecond !== null) {
    if (!(Number.isFinite(patch.rateLimitPerSecond) && patch.rateLimitPerSecond > 0))
      throw new RangeError('rateLimitPerSecond must be > 0 or null');
  }
  const { faults, outbox } = target;
  if (patch.probabilities) faults.setProbabilities(patch.probabilities);
  if (patch.seed !== undefined) faults.reseed(patch.seed);
  if (patch.randomTimeoutMs !== undefined) faults.setRandomTimeoutMs(patch.randomTimeoutMs);
  if (failNext) faults.failNext = failNext;
  if (patch.webhooksEnabled !== undefined) {
    outbox.enabled = patch.webhooksEnabled;
    if (outbox.enabled) outbox.kick();
  }
  if (patch.rateLimitPerSecond !== undefined) target.rateLimit(patch.rateLimitPerSecond);
}

/**
 * The test-only control endpoints both email simulators serve: `GET <listPath>` (what it holds),
 * `GET /__webhooks`, `GET|POST /__faults` (POST: a settings patch, 400 naming what is wrong),
 * `POST /__reset`. True when the request was one of them (and is answered).
 */
export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  control: {
    readonly listPath: string;
    list(): Record<string, unknown>;
    readonly outbox: WebhookOutbox;
    set(patch: Record<string, unknown>): void;
    settings(): Record<string, unknown>;
    reset(): void;
  },
): Promise<boolean> {
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  const method = req.method ?? 'GET';
  if (path === control.listPath && method === 'GET') {
    sendJson(res, 200, control.list());
    return true;
  }
  if (path === '/__webhooks' && method === 'GET') {
    const { outbox } = control;
    sendJson(res, 200, {
      delivered: outbox.delivered(),
      pending: outbox.pending(),
      counters: outbox.counters,
    });
    return true;
  }
  if (path === '/__faults') {
    if (method === 'POST') {
      try {
        control.set(JSON.parse(await readRaw(req)) as Record<string, unknown>);
      } catch (error) {
        sendJson(res, 400, { error: error instanceof Error ? error.message : 'invalid settings' });
        return true;
      }
    }
    sendJson(res, 200, control.settings());
    return true;
  }
  if (path === '/__reset' && method === 'POST') {
    control.reset();
    sendJson(res, 204, undefined);
    return true;
  }
  return false;
}

// --- webhooks --------------------------------------------------------------------------------

export interface OutboxItem {
  readonly id: string;
  /** The exact body to post (what the signature covers). */
  readonly body: string;
  /** Epoch ms before which it is not posted. */
  readonly notBefore: number;
  readonly attempts: number;
  readonly done: boolean;
  readonly lastStatus: number | null;
}

export interface OutboxCounters {
  sent: number;
  failed: number;
  duplicates: number;
}

/**
 * Webhook deliveries, kept in a store (so a restart of the simulator goes on delivering what it
 * owed) and posted in order of due time, each retried on a non-2xx or a network error after the
 * configured delays, then given up. `headers` signs each attempt (Svix signs per attempt with a
 * fresh timestamp; SendGrid's signature covers its timestamp header too).
 */
export class WebhookOutbox {
  readonly counters: OutboxCounters = { sent: 0, failed: 0, duplicates: 0 };
  url: string | undefined;
  enabled = true;
  retryDelaysMs: number[] = [1000, 5000, 30_000];
  #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(
    private readonly store: JsonlStore<OutboxItem>,
    private readonly headers: (item: OutboxItem, now: number) => Record<string, string>,
    private readonly clock: () => number,
    private readonly contentType = 'application/json',
  ) {}

  /** Queues a delivery of `body` due at `notBefore` (ms); `copies` > 1 delivers it again (a duplicate). */
  enqueue(id: string, body: string, notBefore: number): void {
    this.store.put({ id, body, notBefore, attempts: 0, done: false, lastStatus: null });
    this.kick();
  }

  pending(): OutboxItem[] {
    return this.store.all.filter((item) => !item.done);
  }

  delivered(): OutboxItem[] {
    return this.store.all.filter((item) => item.done && item.lastStatus !== null && item.lastStatus < 300);
  }

  /** Starts (or nudges) the delivery loop. */
  kick(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#drain();
    }, 5);
  }

  async #drain(): Promise<void> {
    if (this.#busy || !this.enabled || !this.url) return;
    this.#busy = true;
    try {
      for (;;) {
        const now = this.clock();
        const due = this.pending()
          .filter((item) => item.notBefore <= now)
          .sort((a, b) => a.notBefore - b.notBefore);
        if (due.length === 0) break;
        await Promise.all(due.slice(0, 8).map((item) => this.#post(item)));
        if (this.#controller.signal.aborted) return;
      }
      const next = Math.min(...this.pending().map((item) => item.notBefore));
      if (Number.isFinite(next)) {
        this.#timer = setTimeout(
          () => {
            this.#timer = undefined;
            void this.#drain();
          },
          Math.max(5, next - this.clock()),
        );
      }
    } finally {
      this.#busy = false;
    }
  }

  async #post(item: OutboxItem): Promise<void> {
    const url = this.url;
    if (!url) return;
    let status: number | null = null;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': this.contentType, ...this.headers(item, this.clock()) },
        body: item.body,
        signal: AbortSignal.any([this.#controller.signal, AbortSignal.timeout(5_000)]),
        redirect: 'manual',
      });
      status = response.status;
      await response.arrayBuffer();
    } catch {
      status = null;
    }
    if (this.#controller.signal.aborted) return;
    const attempts = item.attempts + 1;
    const ok = status !== null && status < 300;
    const delay = this.retryDelaysMs[attempts - 1];
    if (ok) this.counters.sent++;
    else this.counters.failed++;
    this.store.put({
      ...item,
      attempts,
      lastStatus: status,
      done: ok || delay === undefined,
      notBefore: ok || delay === undefined ? item.notBefore : this.clock() + delay,
    });
  }

  /** Stops delivering (close, reset); what is owed stays in the store for the next start. */
  stop(): void {
    this.#controller.abort();
    this.#controller = new AbortController();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
