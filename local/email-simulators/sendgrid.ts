/**
 * A SendGrid v3 simulator: Mail Send (`POST /v3/mail/send`), the Email Activity API
 * (`GET /v3/messages`, when the account "has the add-on"), and the Signed Event Webhook, honouring
 * the published contract:
 * - `Authorization: Bearer <key>`: none → 401 `authorization required`, another → 401 (the
 *   grant is invalid); bodies `{ "errors": [{ "message", "field" }] }`;
 * - every answer carries `X-RateLimit-Limit`, `-Remaining`, `-Reset` (epoch seconds); over the
 *   limit (`rateLimitPerSecond`, null = none), 429 `too many requests`, no Retry-After;
 * - validation: personalizations with `to`, `from.email`, `subject`, `content` → 400 naming
 *   the field; accepted → 202, empty body, `X-Message-Id`;
 * - no idempotency key: the same request twice is two messages;
 * - events posted as a JSON array (several per delivery, `eventBatchMs` apart), each with
 *   `sg_event_id` and `sg_message_id` (`<X-Message-Id>.<suffix>`), the custom args flattened
 *   to the top level; signed with ECDSA P-256 / SHA-256 over the timestamp header followed by
 *   the body (`X-Twilio-Email-Event-Webhook-Signature` base64 DER,
 *   `X-Twilio-Email-Event-Webhook-Timestamp`); retried on failure.
 *
 * Where a message ends, by the recipient's local part: `bounce…` → processed, bounce;
 * `blocked…` → processed, bounce (type blocked); `dropped…` → dropped (Bounced Address);
 * `complain…` / `spam…` → processed, delivered, spamreport; `unsubscribe…` → processed,
 * delivered, unsubscribe; `deferred…` → processed, deferred, delivered; else processed, delivered.
 *
 * Fault controls: `failNext` (status, slow accept, slow drop, resets), seeded probabilities,
 * the rate limit, `duplicateEvents` (every event sent again in a later delivery, as SendGrid
 * often does), webhooks on/off, `activity` (the add-on) and its lag.
 * Test-only endpoints: `GET /__messages`, `GET|POST /__faults`, `POST /__reset`, `GET /__webhooks`.
 */

import {
  createPrivateKey,
  createPublicKey,
  sign as ecdsaSign,
  generateKeyPairSync,
  randomBytes,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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

export interface SendGridMessage {
  readonly id: string;
  readonly seq: number;
  /** The request's `X-Message-Id`. */
  readonly xMessageId: string;
  /** Per recipient: `<X-Message-Id>.<suffix>`. */
  readonly sgMessageId: string;
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly customArgs: Readonly<Record<string, string>>;
  readonly createdAt: number;
  status: string;
}

export interface SendGridCounters {
  sendCalls: number;
  messagesCreated: number;
  rateLimited: number;
  faultsInjected: number;
  activityCalls: number;
}

export interface SendGridFaultSettings {
  rateLimitPerSecond: number | null;
  failNext: SendFault[];
  probabilities: SendFaultProbabilities;
  seed: number;
  randomTimeoutMs: number;
  webhooksEnabled: boolean;
  /** Between a message's events. */
  eventDelayMs: number;
  duplicateEvents: boolean;
  /** The account has the Email Activity add-on (else `GET /v3/messages` is 403). */
  activity: boolean;
  /** How long after the send a message shows in Email Activity. */
  activityDelayMs: number;
}

export interface SendGridSimulator {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Base64 DER (SubjectPublicKeyInfo) of the Event Webhook verification key. */
  readonly publicKey: string;
  /** PKCS#8 PEM of the signing key (kept by the local stack so signatures survive restarts). */
  readonly privateKeyPem: string;
  readonly counters: SendGridCounters;
  readonly faults: SendFaults;
  set(patch: Partial<SendGridFaultSettings>): void;
  setWebhookUrl(url: string | undefined): void;
  /** A delivery of these events as the Event Webhook would post it: body and signed headers. */
  signedDelivery(events: readonly unknown[]): { body: string; headers: Record<string, string> };
  messages(): SendGridMessage[];
  webhooks(): OutboxItem[];
  reset(): void;
  close(): Promise<void>;
}

export interface SendGridSimulatorOptions {
  readonly port?: number;
  readonly apiKey?: string;
  readonly privateKeyPem?: string;
  readonly webhookUrl?: string;
  readonly storeFile?: string;
  readonly seed?: number;
  readonly clock?: () => number;
  readonly activity?: boolean;
}

export const DEFAULT_SENDGRID_API_KEY = 'SG.local-simulator.key';

type Stored = ({ readonly kind: 'message' } & SendGridMessage) | ({ readonly kind: 'outbox' } & OutboxItem);

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function newKeyPair(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
}

export async function startSendGridSimulator(
  options: SendGridSimulatorOptions = {},
): Promise<SendGridSimulator> {
  const apiKey = options.apiKey ?? DEFAULT_SENDGRID_API_KEY;
  const privateKeyPem = options.privateKeyPem ?? newKeyPair();
  const privateKey = createPrivateKey(privateKeyPem);
  // The public half, as the Mail Settings page shows it: base64 of the DER SubjectPublicKeyInfo.
  const publicKey = (createPublicKey(privateKey).export({ format: 'der', type: 'spki' }) as Buffer).toString(
    'base64',
  );
  const clock = options.clock ?? Date.now;
  const store = new JsonlStore<Stored & { id: string }>(options.storeFile);
  const outboxStore = {
    get all() {
      return store.all.filter((r): r is { kind: 'outbox' } & OutboxItem => r.kind === 'outbox');
    },
    put: (item: OutboxItem) => store.put({ kind: 'outbox', ...item, id: item.id }),
  } as unknown as JsonlStore<OutboxItem>;
  const signedHeaders = (body: string, now: number): Record<string, string> => {
    const timestamp = String(Math.floor(now / 1000));
    const signature = ecdsaSign('sha256', Buffer.from(timestamp + body, 'utf8'), {
      key: privateKey,
      dsaEncoding: 'der',
    });
    return {
      'x-twilio-email-event-webhook-signature': signature.toString('base64'),
      'x-twilio-email-event-webhook-timestamp': timestamp,
      'user-agent': 'SendGrid Event API',
    };
  };
  const outbox = new WebhookOutbox(outboxStore, (item, now) => signedHeaders(item.body, now), clock);
  outbox.url = options.webhookUrl;
  const faults = new SendFaults(options.seed ?? 1);
  const holds = new Holds();
  const counters: SendGridCounters = {
    sendCalls: 0,
    messagesCreated: 0,
    rateLimited: 0,
    faultsInjected: 0,
    activityCalls: 0,
  };
  const defaults = () => ({
    rateLimitPerSecond: null as number | null,
    eventDelayMs: 50,
    duplicateEvents: false,
    activity: options.activity ?? false,
    activityDelayMs: 0,
  });
  let settings = defaults();
  let bucket: TokenBucket | undefined;
  let seq = Math.max(
    0,
    ...store.all.filter((r) => r.kind === 'message').map((r) => (r as SendGridMessage).seq + 1),
  );
  /** Events waiting to be posted together (a delivery is an array). */
  let pendingEvents: Record<string, unknown>[] = [];
  let flushTimer: NodeJS.Timeout | undefined;

  function set(patch: Partial<SendGridFaultSettings>): void {
    applyCommonSettings(patch, ['eventDelayMs', 'duplicateEvents', 'activity', 'activityDelayMs'], {
      faults,
      outbox,
      rateLimit(perSecond) {
        bucket = perSecond === null ? undefined : new TokenBucket(perSecond, clock());
      },
    });
    settings = { ...settings, ...Object.fromEntries(Object.entries(patch).filter(([k]) => k in settings)) };
  }

  function messages(): SendGridMessage[] {
    return store.all
      .filter((r) => r.kind === 'message')
      .map((r) => {
        const { kind: _kind, ...message } = r as { kind: 'message' } & SendGridMessage;
        return message as SendGridMessage;
      })
      .sort((a, b) => a.seq - b.seq);
  }

  // --- events ---------------------------------------------------------------------------------

  function eventsFor(message: SendGridMessage): Record<string, unknown>[] {
    const local = message.to.split('@')[0]?.toLowerCase() ?? '';
    if (/^bounce/.test(local))
      return [
        { event: 'processed' },
        { event: 'bounce', type: 'bounce', status: '5.1.1', reason: '550 5.1.1 user unknown' },
      ];
    if (/^blocked/.test(local))
      return [
        { event: 'processed' },
        { event: 'bounce', type: 'blocked', status: '4.0.0', reason: 'blocked' },
      ];
    if (/^dropped/.test(local)) return [{ event: 'dropped', reason: 'Bounced Address', status: '5.0.0' }];
    if (/^(complain|spam)/.test(local))
      return [{ event: 'processed' }, { event: 'delivered' }, { event: 'spamreport' }];
    if (/^unsubscribe/.test(local))
      return [{ event: 'processed' }, { event: 'delivered' }, { event: 'unsubscribe' }];
    if (/^deferred/.test(local))
      return [{ event: 'processed' }, { event: 'deferred', attempt: '1' }, { event: 'delivered' }];
    return [{ event: 'processed' }, { event: 'delivered' }];
  }

  function flush(): void {
    flushTimer = undefined;
    if (pendingEvents.length === 0) return;
    const batch = pendingEvents;
    pendingEvents = [];
    outbox.enqueue(`dlv_${randomBytes(9).toString('base64url')}`, JSON.stringify(batch), clock());
  }

  function queueEvent(event: Record<string, unknown>, after: number): void {
    holds.after(after, () => {
      pendingEvents.push(event);
      flushTimer ??= setTimeout(flush, 20);
    });
  }

  function scheduleEvents(message: SendGridMessage): void {
    const events = eventsFor(message);
    events.forEach((extra, i) => {
      const at = message.createdAt + settings.eventDelayMs * (i + 1);
      const event = {
        email: message.to,
        timestamp: Math.floor(at / 1000),
        'smtp-id': `<${message.xMessageId}@sim.sendgrid.local>`,
        sg_event_id: randomBytes(16).toString('base64url'),
        sg_message_id: message.sgMessageId,
        ...message.customArgs,
        ...extra,
      };
      queueEvent(event, settings.eventDelayMs * (i + 1));
      if (settings.duplicateEvents) {
        counters.faultsInjected++;
        queueEvent(event, settings.eventDelayMs * (i + 2));
      }
    });
    message.status = String(events.at(-1)?.event ?? 'processed');
  }

  // --- requests -------------------------------------------------------------------------------

  function limitHeaders(): Record<string, string> {
    const reading = bucket?.take(clock());
    const reset = String(Math.ceil(clock() / 1000) + (reading?.resetSeconds ?? 1));
    return {
      'x-ratelimit-limit': String(reading?.limit ?? 600),
      'x-ratelimit-remaining': String(reading?.remaining ?? 599),
      'x-ratelimit-reset': reset,
      ...(reading && !reading.ok ? { 'x-limited': '1' } : {}),
    };
  }

  function validate(
    body: unknown,
  ): { to: string; from: string; subject: string; customArgs: Record<string, string> }[] {
    const b = body as Record<string, unknown> | null;
    if (typeof b !== 'object' || b === null) throw new ApiError(400, 'Bad Request', null);
    const personalizations = b.personalizations;
    if (!Array.isArray(personalizations) || personalizations.length === 0 || personalizations.length > 1000) {
      throw new ApiError(
        400,
        'The personalizations field is required and must have at least one personalization.',
        'personalizations',
      );
    }
    const from = (b.from as { email?: unknown } | undefined)?.email;
    if (typeof from !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(from)) {
      throw new ApiError(400, 'The from object must be provided for every email send.', 'from');
    }
    if (typeof b.subject !== 'string' || b.subject === '')
      throw new ApiError(400, 'The subject is required.', 'subject');
    if (!Array.isArray(b.content) || b.content.length === 0)
      throw new ApiError(
        400,
        'Unless a valid template_id is provided, the content parameter is required.',
        'content',
      );
    const messageArgs =
      typeof b.custom_args === 'object' && b.custom_args !== null
        ? (b.custom_args as Record<string, string>)
        : {};
    return personalizations.flatMap((p: { to?: unknown; custom_args?: unknown }, i: number) => {
      if (!Array.isArray(p.to) || p.to.length === 0)
        throw new ApiError(
          400,
          'The to array is required for all personalization objects.',
          `personalizations.${i}.to`,
        );
      const args = {
        ...messageArgs,
        ...(typeof p.custom_args === 'object' && p.custom_args !== null
          ? (p.custom_args as Record<string, string>)
          : {}),
      };
      return (p.to as { email?: unknown }[]).map((to, j) => {
        if (typeof to?.email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(to.email)) {
          throw new ApiError(400, 'Does not contain a valid address.', `personalizations.${i}.to.${j}.email`);
        }
        return { to: to.email, from, subject: b.subject as string, customArgs: args };
      });
    });
  }

  async function handleSend(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters.sendCalls++;
    const raw = await readRaw(req);
    if (!req.headers.authorization) throw new ApiError(401, 'authorization required');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      throw new ApiError(401, 'The provided authorization grant is invalid, expired, or revoked');
    }
    const limits = limitHeaders();
    if (limits['x-limited']) {
      delete limits['x-limited'];
      counters.rateLimited++;
      throw new ApiError(429, 'too many requests', null, limits);
    }
    const fault = faults.next();
    if (fault) counters.faultsInjected++;
    if (fault?.kind === 'reset_before_accept') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'timeout_before_accept') {
      holds.after(fault.delayMs, () =>
        answerError(res, new ApiError(500, 'internal server error', null, limits)),
      );
      return;
    }
    if (fault?.kind === 'status' && !fault.afterAccept) {
      if (fault.status === 429) {
        counters.rateLimited++;
        // SendGrid says when the window resets (epoch seconds), not how long to wait.
        const reset = String(Math.ceil((clock() + (fault.retryAfterSeconds ?? 1) * 1000) / 1000));
        throw new ApiError(429, 'too many requests', null, {
          ...limits,
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': reset,
        });
      }
      throw new ApiError(fault.status, `simulated ${fault.status}`, null, limits);
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new ApiError(400, 'Bad Request', null, limits);
    }
    const recipients = validate(body);
    const xMessageId = randomBytes(16).toString('base64url').slice(0, 22);
    recipients.forEach((r, i) => {
      const message: SendGridMessage = {
        id: `${xMessageId}.${i}`,
        seq: seq++,
        xMessageId,
        sgMessageId: `${xMessageId}.filterdrecv-sim-${i}-${randomBytes(4).toString('hex').toUpperCase()}-0.0`,
        to: r.to,
        from: r.from,
        subject: r.subject,
        customArgs: r.customArgs,
        createdAt: clock(),
        status: 'processed',
      };
      counters.messagesCreated++;
      scheduleEvents(message);
      store.put({ kind: 'message', ...message });
    });
    const headers = { ...limits, 'x-message-id': xMessageId };
    if (fault?.kind === 'timeout_after_accept') {
      holds.after(fault.delayMs, () => sendJson(res, 202, undefined, headers));
      return;
    }
    if (fault?.kind === 'reset_after_accept') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'status') throw new ApiError(fault.status, `simulated ${fault.status}`, null, limits);
    sendJson(res, 202, undefined, headers);
  }

  function activity(url: URL, res: ServerResponse): void {
    counters.activityCalls++;
    if (!settings.activity) throw new ApiError(403, 'access forbidden');
    const query = url.searchParams.get('query') ?? '';
    const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 10) || 10));
    const arg = /unique_args\['([^']+)'\]="([^"]*)"/.exec(query);
    const to = /to_email="([^"]*)"/.exec(query);
    const visibleBefore = clock() - settings.activityDelayMs;
    const found = messages().filter(
      (m) =>
        m.createdAt <= visibleBefore &&
        (!arg || m.customArgs[arg[1] as string] === arg[2]) &&
        (!to || m.to === to[1]),
    );
    sendJson(res, 200, {
      messages: found.slice(0, limit).map((m) => ({
        from_email: m.from,
        msg_id: m.sgMessageId,
        subject: m.subject,
        to_email: m.to,
        status:
          m.status === 'delivered' ? 'delivered' : m.status === 'bounce' ? 'not_delivered' : 'processing',
        opens_count: 0,
        clicks_count: 0,
        last_event_time: new Date(m.createdAt).toISOString(),
      })),
    });
  }

  function answerError(res: ServerResponse, error: ApiError): void {
    sendJson(res, error.status, { errors: [{ message: error.message, field: error.field }] }, error.headers);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const controlled = await handleControl(req, res, {
      listPath: '/__messages',
      list: () => ({ messages: messages(), counters }),
      outbox,
      set: (patch) => set(patch as Partial<SendGridFaultSettings>),
      settings: () => ({
        ...settings,
        failNext: faults.failNext,
        probabilities: faults.probabilities,
        counters,
      }),
      reset,
    });
    if (controlled) return;
    if (path === '/v3/mail/send') {
      if (method !== 'POST') throw new ApiError(405, 'method not allowed');
      return handleSend(req, res);
    }
    if (path === '/v3/messages' && method === 'GET') {
      if (req.headers.authorization !== `Bearer ${apiKey}`) throw new ApiError(401, 'authorization required');
      return activity(url, res);
    }
    throw new ApiError(404, 'not found');
  }

  const server = createServer((req, res) => {
    res.on('error', () => {});
    req.on('error', () => {});
    route(req, res).catch((error: unknown) => {
      if (error instanceof ApiError) answerError(res, error);
      else if (error instanceof TooLarge) answerError(res, new ApiError(413, 'content too large'));
      else answerError(res, new ApiError(500, 'internal server error'));
    });
  });
  const port = await listenOnLoopback(server, options.port);
  const baseUrl = `http://127.0.0.1:${port}`;
  outbox.kick();

  function reset(): void {
    holds.clear();
    outbox.stop();
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = undefined;
    pendingEvents = [];
    store.clear();
    faults.failNext = [];
    faults.setProbabilities({ timeoutAfterAccept: 0, timeoutBeforeAccept: 0, status500: 0, status429: 0 });
    faults.random = undefined;
    settings = defaults();
    bucket = undefined;
    outbox.enabled = true;
    for (const key of Object.keys(counters) as (keyof SendGridCounters)[]) counters[key] = 0;
    seq = 0;
  }

  return {
    baseUrl,
    apiKey,
    publicKey,
    privateKeyPem,
    counters,
    faults,
    set,
    setWebhookUrl(url) {
      outbox.url = url;
      outbox.kick();
    },
    signedDelivery(events) {
      const body = JSON.stringify(events);
      return { body, headers: signedHeaders(body, clock()) };
    },
    messages,
    webhooks: () => outbox.delivered(),
    reset,
    async close() {
      holds.clear();
      outbox.stop();
      if (flushTimer) clearTimeout(flushTimer);
      await closeServer(server);
    },
  };
}
