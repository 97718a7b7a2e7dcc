/**
 * A Resend-compatible simulator: the part of the REST API the provider module uses
 * (`POST /emails`, `POST /emails/batch`, `GET /emails/{id}`, `GET /emails`), honouring the
 * published contract, and webhooks with real Svix signatures.
 *
 * Contract, as documented (docs/architecture.md §10 has the sources):
 * - `Authorization: Bearer <key>`: none → 401 `missing_api_key`, another → 403 `invalid_api_key`;
 * - a team rate limit (`rateLimitPerSecond`, null = none; Resend's default is 5/s): every
 *   answer carries `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset`; over it, 429
 *   `rate_limit_exceeded` with `retry-after` (seconds);
 * - `Idempotency-Key` (1–256 characters, else 400 `invalid_idempotency_key`), for 24 h of the
 *   simulator's clock: the same key with the same body (byte for byte: the strictest reading of
 *   "same payload") → the original answer, nothing sent again; the same key with another body →
 *   409 `invalid_idempotent_request`; while the first request with the key is still being
 *   answered → 409 `concurrent_idempotent_requests`. A request refused before anything was
 *   created (a 4xx, a 5xx before acceptance) does not use up its key (unverified at Resend;
 *   the conservative reading for a client that retries with the same key);
 * - validation: `from`, `to` (1–50), `subject`, `html` or `text` → 422 `missing_required_field`
 *   / `validation_error`; errors are `{ statusCode, name, message }`;
 * - `POST /emails/batch`: a JSON array of ≤ 100; `x-batch-validation: permissive` creates the
 *   valid ones and lists the invalid ones in `errors: [{ index, message }]`, `strict` (the
 *   default) refuses the whole batch for one invalid email. 200 `{ data: [{ id }] }`.
 * - webhooks (Svix: `svix-id`, `svix-timestamp`, `svix-signature` = `v1,` + HMAC-SHA256 of
 *   `id.timestamp.body` under the base64 key after `whsec_`), posted to `webhookUrl`, retried on
 *   failure, each delivery of one event with the same `svix-id`.
 *
 * Where an email ends, by the recipient's local part (Resend's own test addresses included):
 * `bounce…` / `bounced@resend.dev` → sent, then bounced (Permanent); `complain…` /
 * `complained@resend.dev` → sent, delivered, complained; `suppressed…` → suppressed;
 * `delay…` → sent, delivery_delayed, delivered; anything else → sent, delivered.
 *
 * Fault controls (like the SMS simulator's): `failNext` (status with a Resend error name,
 * before or after acceptance; slow accept; slow drop; resets), seeded probabilities, the rate
 * limit, `duplicateWebhooks` (each event delivered twice), webhook on/off and delay.
 * Test-only endpoints: `GET /__emails`, `GET|POST /__faults`, `POST /__reset`, `GET /__webhooks`.
 */

import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { sign } from '../../lambdas/providers/resend/svix.ts';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';
import {
  applyCommonSettings,
  Holds,
  handleControl,
  JsonlStore,
  type OutboxItem,
  readRaw,
  type SendFault,
  type SendFaultProbabilities,
  SendFaults,
  sendJson,
  TokenBucket,
  TooLarge,
  WebhookOutbox,
} from './kit.ts';

export const RESEND_IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60_000;
const MAX_BATCH = 100;

export interface ResendEmail {
  readonly id: string;
  readonly seq: number;
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tags: readonly { readonly name: string; readonly value: string }[];
  /** Epoch ms, simulator clock. */
  readonly createdAt: number;
  /** Which call created it. */
  readonly via: 'send' | 'batch';
  lastEvent: string;
}

interface IdempotencyEntry {
  readonly id: string;
  readonly bodyHash: string;
  readonly path: string;
  readonly createdAt: number;
  /** Absent while the first request is being answered. */
  readonly response?: { readonly status: number; readonly body: unknown };
}

export interface ResendCounters {
  /** Every POST /emails and /emails/batch, whatever the answer. */
  sendCalls: number;
  batchCalls: number;
  /** Emails created (each once, replays not counted). */
  emailsCreated: number;
  /** Answers given from the idempotency store (no email created). */
  replays: number;
  rateLimited: number;
  conflicts: number;
  faultsInjected: number;
}

export interface ResendFaultSettings {
  rateLimitPerSecond: number | null;
  failNext: SendFault[];
  probabilities: SendFaultProbabilities;
  seed: number;
  randomTimeoutMs: number;
  webhooksEnabled: boolean;
  /** Between an email's events. */
  eventDelayMs: number;
  /** Deliver every event twice (same svix-id), as Svix's retries and replays do. */
  duplicateWebhooks: boolean;
}

export interface ResendSimulator {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly webhookSecret: string;
  readonly counters: ResendCounters;
  /** Scripted faults and probabilities; `random` lets a test draw its own fault per call. */
  readonly faults: SendFaults;
  set(patch: Partial<ResendFaultSettings>): void;
  /** Where webhooks go (`PUBLIC_BASE_URL` + `/v1/provider-events/resend`). */
  setWebhookUrl(url: string | undefined): void;
  emails(): ResendEmail[];
  /** Webhook deliveries made so far (2xx), their bodies. */
  webhooks(): OutboxItem[];
  /** Moves the simulator's clock (idempotency window, timestamps) by `ms`. */
  advance(ms: number): void;
  reset(): void;
  close(): Promise<void>;
}

export interface ResendSimulatorOptions {
  readonly port?: number;
  readonly apiKey?: string;
  /** `whsec_` + base64 of the key. */
  readonly webhookSecret?: string;
  readonly webhookUrl?: string;
  /** JSON-lines file of emails, keys and the webhook outbox; kept across restarts. */
  readonly storeFile?: string;
  readonly seed?: number;
  readonly clock?: () => number;
}

export const DEFAULT_RESEND_API_KEY = 're_local_simulator_key';
export const DEFAULT_RESEND_WEBHOOK_SECRET = 'whsec_c2ltdWxhdG9yLXNpZ25pbmcta2V5LTAwMDAwMDA=';

type Stored =
  | ({ readonly kind: 'email' } & ResendEmail)
  | ({ readonly kind: 'key' } & IdempotencyEntry)
  | ({ readonly kind: 'outbox' } & OutboxItem);

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Resend's timestamp style in API answers: `2023-04-03 22:13:42.674981+00`. */
function resendTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}000+00`;
}

export async function startResendSimulator(options: ResendSimulatorOptions = {}): Promise<ResendSimulator> {
  const apiKey = options.apiKey ?? DEFAULT_RESEND_API_KEY;
  const webhookSecret = options.webhookSecret ?? DEFAULT_RESEND_WEBHOOK_SECRET;
  let offset = 0;
  const baseClock = options.clock ?? Date.now;
  const clock = () => baseClock() + offset;
  const store = new JsonlStore<Stored & { id: string }>(options.storeFile);
  const outboxStore = {
    get all() {
      return store.all.filter((r): r is { kind: 'outbox' } & OutboxItem => r.kind === 'outbox');
    },
    put: (item: OutboxItem) => store.put({ kind: 'outbox', ...item, id: item.id }),
  } as unknown as JsonlStore<OutboxItem>;
  const outbox = new WebhookOutbox(
    outboxStore,
    (item, now) => {
      const timestamp = Math.floor(now / 1000);
      // The svix-id is the event's: the same on every delivery of it.
      const id = item.id.replace(/#\d+$/, '');
      return {
        'svix-id': id,
        'svix-timestamp': String(timestamp),
        'svix-signature': sign(webhookSecret, id, timestamp, item.body),
      };
    },
    clock,
  );
  outbox.url = options.webhookUrl;
  const faults = new SendFaults(options.seed ?? 1);
  const holds = new Holds();
  const counters: ResendCounters = {
    sendCalls: 0,
    batchCalls: 0,
    emailsCreated: 0,
    replays: 0,
    rateLimited: 0,
    conflicts: 0,
    faultsInjected: 0,
  };
  let settings = {
    rateLimitPerSecond: null as number | null,
    eventDelayMs: 50,
    duplicateWebhooks: false,
  };
  let bucket: TokenBucket | undefined;
  let seq = Math.max(
    0,
    ...store.all.filter((r) => r.kind === 'email').map((r) => (r as ResendEmail).seq + 1),
  );

  function set(patch: Partial<ResendFaultSettings>): void {
    applyCommonSettings(patch, ['eventDelayMs', 'duplicateWebhooks'], {
      faults,
      outbox,
      rateLimit(perSecond) {
        settings.rateLimitPerSecond = perSecond;
        bucket = perSecond === null ? undefined : new TokenBucket(perSecond, clock());
      },
    });
    if (patch.eventDelayMs !== undefined) settings.eventDelayMs = patch.eventDelayMs;
    if (patch.duplicateWebhooks !== undefined) settings.duplicateWebhooks = patch.duplicateWebhooks;
  }

  function emails(): ResendEmail[] {
    return store.all
      .filter((r) => r.kind === 'email')
      .map((r) => {
        const { kind: _kind, ...email } = r as { kind: 'email' } & ResendEmail;
        return email as ResendEmail;
      })
      .sort((a, b) => a.seq - b.seq);
  }

  // --- webhooks -------------------------------------------------------------------------------

  function eventsFor(email: ResendEmail): { type: string; extra?: Record<string, unknown> }[] {
    const local = (email.to[0] ?? '').split('@')[0]?.toLowerCase() ?? '';
    if (/^bounce/.test(local)) {
      return [
        { type: 'email.sent' },
        {
          type: 'email.bounced',
          extra: {
            bounce: {
              type: 'Permanent',
              subType: 'General',
              message: 'The recipient’s mail server permanently rejected the email.',
              diagnosticCode: ['smtp; 550 5.1.1 user unknown'],
            },
          },
        },
      ];
    }
    if (/^complain/.test(local))
      return [{ type: 'email.sent' }, { type: 'email.delivered' }, { type: 'email.complained' }];
    if (/^suppressed/.test(local)) {
      return [
        {
          type: 'email.suppressed',
          extra: {
            suppressed: {
              type: 'OnAccountSuppressionList',
              reason: 'previous_bounce',
              message: 'suppressed',
            },
          },
        },
      ];
    }
    if (/^delay/.test(local))
      return [{ type: 'email.sent' }, { type: 'email.delivery_delayed' }, { type: 'email.delivered' }];
    return [{ type: 'email.sent' }, { type: 'email.delivered' }];
  }

  function scheduleEvents(email: ResendEmail): void {
    const events = eventsFor(email);
    events.forEach((event, i) => {
      const at = clock() + settings.eventDelayMs * (i + 1);
      const tags = Object.fromEntries(email.tags.map((t) => [t.name, t.value]));
      const body = JSON.stringify({
        type: event.type,
        created_at: new Date(at).toISOString(),
        data: {
          email_id: email.id,
          created_at: new Date(email.createdAt).toISOString(),
          from: email.from,
          to: email.to,
          subject: email.subject,
          tags,
          ...(Object.keys(email.headers).length > 0
            ? { headers: Object.entries(email.headers).map(([name, value]) => ({ name, value })) }
            : {}),
          ...event.extra,
        },
      });
      const svixId = `msg_${randomUUID().replaceAll('-', '').slice(0, 26)}`;
      outbox.enqueue(svixId, body, at);
      if (settings.duplicateWebhooks) {
        counters.faultsInjected++;
        outbox.counters.duplicates++;
        outbox.enqueue(`${svixId}#2`, body, at + settings.eventDelayMs);
      }
      // The last event is the email's state.
      email.lastEvent = events.at(-1)?.type.replace('email.', '') ?? 'sent';
    });
  }

  // --- requests -------------------------------------------------------------------------------

  function rateLimitHeaders(reading: { limit: number; remaining: number; resetSeconds: number }) {
    return {
      'ratelimit-limit': String(reading.limit),
      'ratelimit-remaining': String(reading.remaining),
      'ratelimit-reset': String(reading.resetSeconds),
    };
  }

  function validateEmail(
    value: unknown,
  ):
    | { ok: true; email: Omit<ResendEmail, 'id' | 'seq' | 'createdAt' | 'via' | 'lastEvent'> }
    | { ok: false; name: string; message: string } {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, name: 'validation_error', message: 'The email must be an object.' };
    }
    const v = value as Record<string, unknown>;
    if (typeof v.from !== 'string' || v.from === '')
      return { ok: false, name: 'missing_required_field', message: 'The `from` field is missing.' };
    const to = typeof v.to === 'string' ? [v.to] : Array.isArray(v.to) ? v.to : undefined;
    if (!to || to.length === 0)
      return { ok: false, name: 'missing_required_field', message: 'The `to` field is missing.' };
    if (to.length > 50)
      return { ok: false, name: 'validation_error', message: 'Too many recipients (max 50).' };
    if (!to.every((t) => typeof t === 'string' && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(t))) {
      return { ok: false, name: 'validation_error', message: 'Invalid `to` field.' };
    }
    if (typeof v.subject !== 'string' || v.subject === '')
      return { ok: false, name: 'missing_required_field', message: 'The `subject` field is missing.' };
    if (typeof v.html !== 'string' && typeof v.text !== 'string') {
      return { ok: false, name: 'missing_required_field', message: 'Either `html` or `text` is required.' };
    }
    const tags = Array.isArray(v.tags) ? v.tags : [];
    for (const tag of tags) {
      const t = tag as { name?: unknown; value?: unknown };
      if (
        typeof t?.name !== 'string' ||
        typeof t.value !== 'string' ||
        !/^[A-Za-z0-9_-]{1,256}$/.test(t.name) ||
        !/^[A-Za-z0-9_-]{1,256}$/.test(t.value)
      ) {
        return {
          ok: false,
          name: 'validation_error',
          message: 'Tags may contain only ASCII letters, numbers, underscores or dashes.',
        };
      }
    }
    const headers =
      typeof v.headers === 'object' && v.headers !== null ? (v.headers as Record<string, string>) : {};
    return {
      ok: true,
      email: {
        from: v.from,
        to: to as string[],
        subject: v.subject,
        ...(typeof v.html === 'string' ? { html: v.html } : {}),
        ...(typeof v.text === 'string' ? { text: v.text } : {}),
        headers,
        tags: tags as { name: string; value: string }[],
      },
    };
  }

  function create(
    fields: Omit<ResendEmail, 'id' | 'seq' | 'createdAt' | 'via' | 'lastEvent'>,
    via: 'send' | 'batch',
  ): ResendEmail {
    const email: ResendEmail = {
      ...fields,
      id: randomUUID(),
      seq: seq++,
      createdAt: clock(),
      via,
      lastEvent: 'queued',
    };
    counters.emailsCreated++;
    scheduleEvents(email);
    store.put({ kind: 'email', ...email });
    return email;
  }

  /**
   * The send calls: auth, rate limit, key checks, fault, validation, creation, answer. Returns
   * once the answer is written (or dropped); a held answer keeps its key "in progress".
   */
  async function handleSend(
    req: IncomingMessage,
    res: ServerResponse,
    path: '/emails' | '/emails/batch',
  ): Promise<void> {
    counters.sendCalls++;
    if (path === '/emails/batch') counters.batchCalls++;
    const raw = await readRaw(req);
    const auth = req.headers.authorization;
    if (!auth) throw new ApiError(401, 'missing_api_key', 'Missing API key in the authorization header.');
    if (auth !== `Bearer ${apiKey}`) throw new ApiError(403, 'invalid_api_key', 'API key is invalid.');
    let limits: Record<string, string> = {};
    if (bucket) {
      const reading = bucket.take(clock());
      limits = rateLimitHeaders(reading);
      if (!reading.ok) {
        counters.rateLimited++;
        throw new ApiError(
          429,
          'rate_limit_exceeded',
          'Too many requests. You can only make 5 requests per second.',
          {
            ...limits,
            'retry-after': String(reading.resetSeconds),
          },
        );
      }
    }
    const key = req.headers['idempotency-key'];
    if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 256)) {
      throw new ApiError(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.', limits);
    }
    const bodyHash = createHash('sha256').update(raw, 'utf8').digest('hex');
    const keyId = key === undefined ? undefined : `key:${path}:${key}`;
    if (keyId) {
      const entry = store.get(keyId) as ({ kind: 'key' } & IdempotencyEntry) | undefined;
      if (entry && clock() - entry.createdAt > RESEND_IDEMPOTENCY_WINDOW_MS) store.delete(keyId);
      else if (entry) {
        if (entry.bodyHash !== bodyHash) {
          counters.conflicts++;
          throw new ApiError(
            409,
            'invalid_idempotent_request',
            'Same idempotency key used with a different request payload. Change your idempotency key or payload.',
            limits,
          );
        }
        if (!entry.response) {
          counters.conflicts++;
          throw new ApiError(
            409,
            'concurrent_idempotent_requests',
            'Same idempotency key used while original request is still in progress. Try the request again later.',
            limits,
          );
        }
        counters.replays++;
        sendJson(res, entry.response.status, entry.response.body, limits);
        return;
      }
    }
    const fault = faults.next();
    if (fault) counters.faultsInjected++;
    const release = () => {
      if (keyId) store.delete(keyId);
    };
    if (keyId) store.put({ kind: 'key', id: keyId, bodyHash, path, createdAt: clock() });
    const before =
      fault &&
      (fault.kind === 'timeout_before_accept' ||
        fault.kind === 'reset_before_accept' ||
        (fault.kind === 'status' && !fault.afterAccept));
    if (fault && before) {
      release();
      if (fault.kind === 'reset_before_accept') {
        req.socket.destroy();
        return;
      }
      if (fault.kind === 'timeout_before_accept') {
        holds.after(fault.delayMs, () =>
          errorAnswer(res, new ApiError(500, 'application_error', 'Internal server error.', limits)),
        );
        return;
      }
      if (fault.kind === 'status') throw statusFault(fault, limits);
    }

    // Process: validation, creation.
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      release();
      throw new ApiError(400, 'validation_error', 'The body is not valid JSON.', limits);
    }
    let answer: { status: number; body: unknown };
    if (path === '/emails') {
      const checked = validateEmail(parsed);
      if (!checked.ok) {
        release();
        throw new ApiError(422, checked.name, checked.message, limits);
      }
      answer = { status: 200, body: { id: create(checked.email, 'send').id } };
    } else {
      if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_BATCH) {
        release();
        throw new ApiError(422, 'validation_error', `The batch must hold 1 to ${MAX_BATCH} emails.`, limits);
      }
      const permissive = req.headers['x-batch-validation'] === 'permissive';
      const checked = parsed.map(validateEmail);
      const invalid = checked.flatMap((c, index) => (c.ok ? [] : [{ index, message: c.message }]));
      if (!permissive && invalid.length > 0) {
        release();
        const first = checked.find((c) => !c.ok) as { name: string; message: string };
        throw new ApiError(422, first.name, first.message, limits);
      }
      const data = checked.flatMap((c) => (c.ok ? [{ id: create(c.email, 'batch').id }] : []));
      answer = { status: 200, body: permissive ? { data, errors: invalid } : { data } };
    }
    const finalAnswer =
      fault?.kind === 'status' && fault.afterAccept
        ? {
            status: fault.status,
            body: errorBody(fault.status, fault.name ?? 'internal_server_error', 'Internal server error.'),
          }
        : answer;
    const settle = () => {
      if (keyId) store.put({ kind: 'key', id: keyId, bodyHash, path, createdAt: clock(), response: answer });
    };
    if (fault?.kind === 'timeout_after_accept') {
      holds.after(fault.delayMs, () => {
        settle();
        sendJson(res, answer.status, answer.body, limits);
      });
      return;
    }
    settle();
    if (fault?.kind === 'reset_after_accept') {
      req.socket.destroy();
      return;
    }
    sendJson(res, finalAnswer.status, finalAnswer.body, limits);
  }

  function statusFault(
    fault: Extract<SendFault, { kind: 'status' }>,
    limits: Record<string, string>,
  ): ApiError {
    const name =
      fault.name ??
      (fault.status === 429
        ? 'rate_limit_exceeded'
        : fault.status >= 500
          ? 'internal_server_error'
          : fault.status === 401
            ? 'missing_api_key'
            : fault.status === 403
              ? 'invalid_api_key'
              : 'validation_error');
    const headers = {
      ...limits,
      ...(fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) }),
    };
    if (fault.status === 429) counters.rateLimited++;
    return new ApiError(fault.status, name, `Simulated ${fault.status} ${name}.`, headers);
  }

  function errorBody(status: number, name: string, message: string) {
    return { statusCode: status, name, message };
  }

  function errorAnswer(res: ServerResponse, error: ApiError): void {
    sendJson(res, error.status, errorBody(error.status, error.errorName, error.message), error.headers);
  }

  function emailJson(email: ResendEmail): Record<string, unknown> {
    return {
      object: 'email',
      id: email.id,
      to: email.to,
      from: email.from,
      created_at: resendTime(email.createdAt),
      subject: email.subject,
      html: email.html ?? null,
      text: email.text ?? null,
      bcc: null,
      cc: null,
      reply_to: null,
      last_event: email.lastEvent,
      tags: email.tags,
    };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const controlled = await handleControl(req, res, {
      listPath: '/__emails',
      list: () => ({ emails: emails(), counters }),
      outbox,
      set: (patch) => set(patch as Partial<ResendFaultSettings>),
      settings: () => ({
        ...settings,
        failNext: faults.failNext,
        probabilities: faults.probabilities,
        counters,
      }),
      reset,
    });
    if (controlled) return;
    if ((path === '/emails' || path === '/emails/batch') && method === 'POST')
      return handleSend(req, res, path);
    if (!req.headers.authorization)
      throw new ApiError(401, 'missing_api_key', 'Missing API key in the authorization header.');
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      throw new ApiError(403, 'invalid_api_key', 'API key is invalid.');
    if (path === '/emails' && method === 'GET') {
      const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
      const all = emails().reverse();
      const after = url.searchParams.get('after');
      const start = after ? all.findIndex((e) => e.id === after) + 1 : 0;
      const page = all.slice(start, start + limit);
      return sendJson(res, 200, {
        object: 'list',
        has_more: start + limit < all.length,
        data: page.map((e) => {
          const { html: _h, text: _t, tags: _tags, ...rest } = emailJson(e);
          return rest;
        }),
      });
    }
    const one = /^\/emails\/([A-Za-z0-9-]+)$/.exec(path);
    if (one && method === 'GET') {
      const email = emails().find((e) => e.id === one[1]);
      if (!email) throw new ApiError(404, 'not_found', 'Email not found.');
      return sendJson(res, 200, emailJson(email));
    }
    throw new ApiError(
      path.startsWith('/emails') ? 405 : 404,
      path.startsWith('/emails') ? 'method_not_allowed' : 'not_found',
      'Not found.',
    );
  }

  const server = createServer((req, res) => {
    res.on('error', () => {});
    req.on('error', () => {});
    route(req, res).catch((error: unknown) => {
      if (error instanceof ApiError) errorAnswer(res, error);
      else if (error instanceof TooLarge)
        errorAnswer(res, new ApiError(413, 'validation_error', 'Request too large.'));
      else errorAnswer(res, new ApiError(500, 'application_error', 'Internal server error.'));
    });
  });
  const port = await listenOnLoopback(server, options.port);
  const baseUrl = `http://127.0.0.1:${port}`;
  // Keys whose first request was cut short by the last stop: that request is no longer running.
  for (const record of store.all) {
    if (record.kind === 'key' && !(record as IdempotencyEntry).response) store.delete(record.id);
  }
  outbox.kick();

  function reset(): void {
    offset = 0;
    holds.clear();
    outbox.stop();
    store.clear();
    faults.failNext = [];
    faults.setProbabilities({ timeoutAfterAccept: 0, timeoutBeforeAccept: 0, status500: 0, status429: 0 });
    faults.random = undefined;
    settings = { rateLimitPerSecond: null, eventDelayMs: 50, duplicateWebhooks: false };
    bucket = undefined;
    outbox.enabled = true;
    for (const key of Object.keys(counters) as (keyof ResendCounters)[]) counters[key] = 0;
    seq = 0;
  }

  return {
    baseUrl,
    apiKey,
    webhookSecret,
    counters,
    faults,
    set,
    setWebhookUrl(url) {
      outbox.url = url;
      outbox.kick();
    },
    emails,
    webhooks: () => outbox.delivered(),
    advance(ms) {
      offset += ms;
    },
    reset,
    async close() {
      holds.clear();
      outbox.stop();
      await closeServer(server);
    },
  };
}
