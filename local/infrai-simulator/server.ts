/**
 * A simulator of the Infrai-style gateway contract (docs/architecture.md §10 states the
 * assumptions where the gateway's own docs are silent): Bearer key, the `{ok, data, error,
 * metadata}` envelope on every answer, `Idempotency-Key` (a replay within 24 h answers with the
 * original record; the same key with another body is a 409), e-mail and SMS send, get by id,
 * pull-only event lists, a suppression list (check and add), and the public discovery surface
 * (`GET /v1/discovery[/{capability}]`) that `npm run providers:check` reads.
 *
 * Each accepted message gets a `sent` event at once and a final one `deliveryDelayMs` later:
 * e-mail to a local part starting `bounce` → bounced (hard), `complaint` → delivered then
 * complained, otherwise delivered; SMS to a number ending `9005` → failed, otherwise delivered.
 * Events become visible to the event list `eventDelayMs` after they happen ("events appearing later").
 *
 * Fault controls (`POST /__faults` or `faults.set`): `failNext` (a status with an error code,
 * retryable flag and Retry-After; `slow_accept`: store, then hold the answer), `creditExhausted`
 * (402 INSUFFICIENT_CREDIT), `eventsAvailable` (false: the event list answers 503), `eventDelayMs`,
 * `deliveryDelayMs`, `suppressionCheckStatus` (a status every suppression check answers while set). `POST /__suppressions {channel, destination}` lists a destination;
 * `GET /__messages` returns messages and counters; `POST /__reset`.
 */

import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { JsonFileState, readBody } from '../json-file-state.ts';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';

export type InfraiFault =
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly code?: string;
      readonly retryable?: boolean;
      readonly retryAfterSeconds?: number;
    }
  /** Store the message (events follow), then hold the answer for `delayMs`: the client may time out. */
  | { readonly kind: 'slow_accept'; readonly delayMs: number }
  /** Hold for `delayMs`, store nothing, then answer 503. */
  | { readonly kind: 'slow_reject'; readonly delayMs: number };

export interface InfraiFaults {
  failNext: InfraiFault[];
  creditExhausted: boolean;
  eventsAvailable: boolean;
  eventDelayMs: number;
  deliveryDelayMs: number;
  /**
   * While set, the suppression checks (e-mail and SMS) answer this status (`INTERNAL`, retryable)
   * instead of looking the destination up: a provider's pre-send check that cannot be answered.
   */
  suppressionCheckStatus: number | null;
}

export interface InfraiMessage {
  readonly id: string;
  readonly channel: 'email' | 'sms';
  readonly to: string;
  readonly subject?: string;
  readonly vendor: string;
  readonly idempotencyKey: string;
  readonly bodyHash: string;
  readonly createdAt: number;
  readonly state: string;
}

interface StoredEvent {
  readonly event_id: string;
  readonly message_id: string;
  readonly type: string;
  readonly created_at: string;
  readonly bounce_type?: string;
  readonly at: number;
}

interface State {
  messages: InfraiMessage[];
  events: StoredEvent[];
  suppressions: { channel: 'email' | 'sms'; destination: string; reason: string; at: number }[];
}

export interface InfraiCounters {
  sendCalls: number;
  replays: number;
  eventListCalls: number;
  suppressionChecks: number;
  suppressionAdds: number;
  discoveryCalls: number;
}

export interface InfraiSimulator {
  /** The v1 base, as INFRAI_BASE_URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly faults: InfraiFaults & { set(patch: Partial<InfraiFaults>): void };
  readonly counters: InfraiCounters;
  /** Event-list calls per message id (the pulls a row cost). */
  readonly pullsPerMessage: ReadonlyMap<string, number>;
  messages(): InfraiMessage[];
  suppress(channel: 'email' | 'sms', destination: string, reason?: string): void;
  suppressed(channel: 'email' | 'sms'): string[];
  reset(): void;
  close(): Promise<void>;
}

const DEDUP_WINDOW_MS = 24 * 3_600_000;
const VENDORS = { email: ['resend', 'ses', 'tencent'], sms: ['twilio', 'sns'] } as const;

/** What the discovery surface says about each capability (the same contract the module assumes). */
export const DISCOVERY: Readonly<
  Record<string, { method: string; path: string; params: { name: string; required: boolean; in: string }[] }>
> = {
  'email.send': {
    method: 'POST',
    path: '/v1/email/send',
    params: [
      { name: 'to', required: true, in: 'body' },
      { name: 'subject', required: true, in: 'body' },
      { name: 'text', required: false, in: 'body' },
      { name: 'html', required: false, in: 'body' },
      { name: 'from', required: false, in: 'body' },
      { name: 'cc', required: false, in: 'body' },
      { name: 'bcc', required: false, in: 'body' },
      { name: 'template_id', required: false, in: 'body' },
      { name: 'template_vars', required: false, in: 'body' },
      { name: 'attachments', required: false, in: 'body' },
      { name: 'vendor', required: false, in: 'body' },
      { name: 'idempotency_key', required: false, in: 'body' },
    ],
  },
  'sms.send': {
    method: 'POST',
    path: '/v1/sms/send',
    params: [
      { name: 'to', required: true, in: 'body' },
      { name: 'body', required: false, in: 'body' },
      { name: 'from', required: false, in: 'body' },
      { name: 'template_id', required: false, in: 'body' },
      { name: 'vendor', required: false, in: 'body' },
      { name: 'idempotency_key', required: false, in: 'body' },
    ],
  },
  'email.get': {
    method: 'GET',
    path: '/v1/email/get/{id}',
    params: [{ name: 'id', required: true, in: 'path' }],
  },
  'sms.get': {
    method: 'GET',
    path: '/v1/sms/get/{id}',
    params: [{ name: 'id', required: true, in: 'path' }],
  },
  'email.event.list': {
    method: 'GET',
    path: '/v1/email/event/list',
    params: [{ name: 'message_id', required: false, in: 'query' }],
  },
  'sms.event.list': {
    method: 'GET',
    path: '/v1/sms/event/list',
    params: [{ name: 'message_id', required: false, in: 'query' }],
  },
  'email.suppression.check': {
    method: 'GET',
    path: '/v1/email/suppression/check/{email}',
    params: [{ name: 'email', required: true, in: 'path' }],
  },
  'email.suppression.add': {
    method: 'POST',
    path: '/v1/email/suppression/add',
    params: [
      { name: 'email', required: true, in: 'body' },
      { name: 'reason', required: false, in: 'body' },
    ],
  },
  'sms.suppression.check': {
    method: 'POST',
    path: '/v1/sms/suppression/check',
    params: [{ name: 'to', required: true, in: 'body' }],
  },
  'sms.suppression.add': {
    method: 'POST',
    path: '/v1/sms/suppression/add',
    params: [
      { name: 'to', required: true, in: 'body' },
      { name: 'reason', required: false, in: 'body' },
    ],
  },
};

function defaultFaults(): InfraiFaults {
  return {
    failNext: [],
    creditExhausted: false,
    eventsAvailable: true,
    eventDelayMs: 0,
    deliveryDelayMs: 100,
    suppressionCheckStatus: null,
  };
}

export async function startInfraiSimulator(
  options: {
    port?: number;
    apiKey?: string;
    storeFile?: string;
    clock?: () => number;
    /** A discovery surface other than DISCOVERY (tests of the on-call check). */
    discovery?: typeof DISCOVERY;
  } = {},
): Promise<InfraiSimulator> {
  const discovery = options.discovery ?? DISCOVERY;
  const clock = options.clock ?? Date.now;
  const apiKey = options.apiKey ?? 'ifr_pk_proj_local';
  const state = new JsonFileState<State>(options.storeFile, () => ({
    messages: [],
    events: [],
    suppressions: [],
  }));
  const faults = defaultFaults();
  const counters: InfraiCounters = {
    sendCalls: 0,
    replays: 0,
    eventListCalls: 0,
    suppressionChecks: 0,
    suppressionAdds: 0,
    discoveryCalls: 0,
  };
  const pulls = new Map<string, number>();
  const holds = new Set<NodeJS.Timeout>();
  const hold = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        holds.delete(timer);
        resolve();
      }, ms);
      holds.add(timer);
    });

  const send = (
    res: ServerResponse,
    status: number,
    payload: { data?: unknown; error?: unknown },
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(
      JSON.stringify({
        ok: status < 400,
        data: payload.data ?? null,
        error: payload.error ?? null,
        metadata: { request_id: randomUUID(), latency_ms: 1, cost_usd: 0, vendor: null, cache_hit: false },
      }),
    );
  };
  const fail = (
    res: ServerResponse,
    status: number,
    code: string,
    retryable: boolean,
    headers: Record<string, string> = {},
  ) =>
    send(
      res,
      status,
      { error: { code, message: code.toLowerCase().replace(/_/g, ' '), retryable } },
      headers,
    );

  const isSuppressed = (channel: 'email' | 'sms', destination: string) =>
    state.value.suppressions.some(
      (s) => s.channel === channel && s.destination === destination.toLowerCase(),
    );

  const recordOf = (m: InfraiMessage) => ({
    [m.channel === 'email' ? 'email_id' : 'sms_id']: m.id,
    state: stateOf(m),
    to: m.to,
    ...(m.subject !== undefined ? { subject: m.subject } : {}),
    vendor: m.vendor,
    created_at: new Date(m.createdAt).toISOString(),
  });
  const visibleEvents = (id: string) =>
    state.value.events.filter((e) => e.message_id === id && e.at + faults.eventDelayMs <= clock());
  const stateOf = (m: InfraiMessage) => {
    const events = state.value.events.filter((e) => e.message_id === m.id && e.at <= clock());
    return events[events.length - 1]?.type ?? 'queued';
  };

  const accept = (
    channel: 'email' | 'sms',
    body: Record<string, unknown>,
    key: string,
    bodyHash: string,
  ): InfraiMessage => {
    const now = clock();
    const to = String(body.to);
    const message: InfraiMessage = {
      id: `${channel === 'email' ? 'em' : 'sm'}_${randomUUID().replace(/-/g, '')}`,
      channel,
      to,
      ...(typeof body.subject === 'string' ? { subject: body.subject } : {}),
      vendor: typeof body.vendor === 'string' ? body.vendor : (VENDORS[channel][0] as string),
      idempotencyKey: key,
      bodyHash,
      createdAt: now,
      state: 'queued',
    };
    state.value.messages.push(message);
    const event = (type: string, at: number, extra: Record<string, string> = {}) =>
      state.value.events.push({
        event_id: `ev_${randomUUID().replace(/-/g, '')}`,
        message_id: message.id,
        type,
        created_at: new Date(at).toISOString(),
        at,
        ...extra,
      });
    event('sent', now);
    const later = now + faults.deliveryDelayMs;
    const local = to.toLowerCase().split('@')[0] ?? '';
    if (channel === 'email' && local.startsWith('bounce')) event('bounced', later, { bounce_type: 'hard' });
    else if (channel === 'email' && local.startsWith('complaint')) {
      event('delivered', later);
      event('complained', later + 1);
    } else if (channel === 'sms' && to.endsWith('9005')) event('failed', later);
    else event('delivered', later);
    state.save();
    return message;
  };

  async function handleSend(
    channel: 'email' | 'sms',
    req: IncomingMessage,
    res: ServerResponse,
    text: string,
  ) {
    counters.sendCalls += 1;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return fail(res, 400, 'INVALID_JSON', false);
    }
    const fault = faults.failNext.shift();
    if (fault?.kind === 'status') {
      const headers: Record<string, string> =
        fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      return fail(
        res,
        fault.status,
        fault.code ?? `HTTP_${fault.status}`,
        fault.retryable ?? fault.status >= 500,
        headers,
      );
    }
    if (fault?.kind === 'slow_reject') {
      await hold(fault.delayMs);
      return fail(res, 503, 'UNAVAILABLE', true);
    }
    if (faults.creditExhausted) return fail(res, 402, 'INSUFFICIENT_CREDIT', false);
    const missing = (DISCOVERY[`${channel}.send`]?.params ?? []).filter(
      (p) => p.required && body[p.name] === undefined,
    );
    if (missing.length > 0 || (channel === 'email' && body.text === undefined && body.html === undefined)) {
      return fail(res, 400, 'VALIDATION_ERROR', false);
    }
    const bodyHash = createHash('sha256').update(text).digest('hex');
    // No key given: the gateway derives one from the content, which is what merges two identical notices.
    const key = String(req.headers['idempotency-key'] ?? body.idempotency_key ?? `derived:${bodyHash}`);
    const now = clock();
    const earlier = state.value.messages.find(
      (m) => m.channel === channel && m.idempotencyKey === key && now - m.createdAt < DEDUP_WINDOW_MS,
    );
    if (earlier) {
      if (earlier.bodyHash !== bodyHash) return fail(res, 409, 'IDEMPOTENCY_KEY_REUSED', false);
      counters.replays += 1;
      return send(res, 200, { data: recordOf(earlier) });
    }
    if (isSuppressed(channel, String(body.to))) return fail(res, 422, 'RECIPIENT_SUPPRESSED', false);
    const message = accept(channel, body, key, bodyHash);
    if (fault?.kind === 'slow_accept') await hold(fault.delayMs);
    send(res, 200, { data: recordOf(message) });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname.startsWith('/__')) return control(req, res, url);
    const text = req.method === 'POST' ? await readBody(req) : '';
    const path = url.pathname.replace(/^\/v1/, '');
    if (req.method === 'GET' && path.startsWith('/discovery')) {
      counters.discoveryCalls += 1;
      const capability = decodeURIComponent(path.replace(/^\/discovery\/?/, ''));
      if (capability === '') {
        return send(res, 200, {
          data: {
            capabilities: Object.entries(DISCOVERY).map(([id, c]) => ({
              id,
              method: c.method,
              path: c.path,
              available: true,
            })),
          },
        });
      }
      const found = discovery[capability];
      if (!found) return fail(res, 404, 'CAPABILITY_NOT_FOUND', false);
      return send(res, 200, {
        data: {
          id: capability,
          ...found,
          available: true,
          vendors: capability.startsWith('sms') ? VENDORS.sms : VENDORS.email,
          errors: [
            { code: 'INSUFFICIENT_CREDIT', status: 402, retryable: false },
            { code: 'RATE_LIMITED', status: 429, retryable: true },
            { code: 'VALIDATION_ERROR', status: 400, retryable: false },
          ],
        },
      });
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, 401, 'UNAUTHORIZED', false);
    const on = (method: string, pattern: RegExp) => (req.method === method ? path.match(pattern) : null);
    const sendRoute = on('POST', /^\/(email|sms)\/send$/);
    if (sendRoute) return handleSend(sendRoute[1] as 'email' | 'sms', req, res, text);
    const getRoute = on('GET', /^\/(email|sms)\/get\/([^/]+)$/);
    if (getRoute) {
      const found = state.value.messages.find(
        (m) => m.channel === getRoute[1] && m.id === decodeURIComponent(getRoute[2] ?? ''),
      );
      return found ? send(res, 200, { data: recordOf(found) }) : fail(res, 404, 'NOT_FOUND', false);
    }
    if (on('GET', /^\/(email|sms)\/event\/list$/)) {
      counters.eventListCalls += 1;
      if (!faults.eventsAvailable) return fail(res, 503, 'UNAVAILABLE', true);
      const id = url.searchParams.get('message_id') ?? '';
      pulls.set(id, (pulls.get(id) ?? 0) + 1);
      const items = visibleEvents(id).map(({ at: _at, ...event }) => event);
      return send(res, 200, { data: { items } });
    }
    const checkRoute = on('GET', /^\/email\/suppression\/check\/(.+)$/);
    const checking = checkRoute || (req.method === 'POST' && path === '/sms/suppression/check');
    if (checking && faults.suppressionCheckStatus !== null) {
      counters.suppressionChecks += 1;
      return fail(res, faults.suppressionCheckStatus, 'INTERNAL', true);
    }
    if (checkRoute) {
      counters.suppressionChecks += 1;
      const email = decodeURIComponent(checkRoute[1] ?? '');
      const entry = state.value.suppressions.find(
        (s) => s.channel === 'email' && s.destination === email.toLowerCase(),
      );
      return send(res, 200, {
        // As the gateway answers: `reason` is there, null, when nothing is listed.
        data: { suppressed: Boolean(entry), reason: entry ? entry.reason : null },
      });
    }
    if (req.method === 'POST' && path === '/sms/suppression/check') {
      counters.suppressionChecks += 1;
      const to = String((JSON.parse(text || '{}') as { to?: unknown }).to ?? '');
      const entry = state.value.suppressions.find((s) => s.channel === 'sms' && s.destination === to);
      return send(res, 200, {
        data: { suppressed: Boolean(entry), reason: entry ? entry.reason : null },
      });
    }
    const addRoute = on('POST', /^\/(email|sms)\/suppression\/add$/);
    if (addRoute) {
      counters.suppressionAdds += 1;
      const parsed = JSON.parse(text || '{}') as { email?: unknown; to?: unknown; reason?: unknown };
      const channel = addRoute[1] as 'email' | 'sms';
      const destination = String(channel === 'email' ? parsed.email : parsed.to);
      simulator.suppress(channel, destination, typeof parsed.reason === 'string' ? parsed.reason : 'manual');
      return send(res, 200, { data: { added: true } });
    }
    fail(res, 404, 'ROUTE_NOT_FOUND', false);
  }

  async function control(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/__messages') {
      return json(200, { messages: state.value.messages, counters, pulls: Object.fromEntries(pulls) });
    }
    try {
      const body =
        req.method === 'POST' ? (JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>) : {};
      if (req.method === 'POST' && url.pathname === '/__faults') {
        simulator.faults.set(body as Partial<InfraiFaults>);
        return json(200, faults);
      }
      if (req.method === 'POST' && url.pathname === '/__suppressions') {
        simulator.suppress(
          body.channel as 'email' | 'sms',
          String(body.destination),
          String(body.reason ?? 'manual'),
        );
        return json(200, {});
      }
      if (req.method === 'POST' && url.pathname === '/__reset') {
        simulator.reset();
        return json(200, {});
      }
    } catch (error) {
      return json(400, { error: error instanceof Error ? error.message : 'bad request' });
    }
    json(404, { error: 'not found' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => fail(res, 500, 'INTERNAL', false));
  });
  const port = await listenOnLoopback(server, options.port);
  const simulator: InfraiSimulator = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    faults: Object.assign(faults, {
      set(patch: Partial<InfraiFaults>) {
        const known = [
          'failNext',
          'creditExhausted',
          'eventsAvailable',
          'eventDelayMs',
          'deliveryDelayMs',
          'suppressionCheckStatus',
        ];
        for (const key of Object.keys(patch))
          if (!known.includes(key)) throw new RangeError(`unknown setting: ${key}`);
        Object.assign(faults, patch);
      },
    }),
    counters,
    pullsPerMessage: pulls,
    messages: () => state.value.messages.map((m) => ({ ...m, state: stateOf(m) })),
    suppress(channel, destination, reason = 'manual') {
      const normalised = channel === 'email' ? destination.toLowerCase() : destination;
      if (!isSuppressed(channel, normalised)) {
        state.value.suppressions.push({ channel, destination: normalised, reason, at: clock() });
        state.save();
      }
    },
    suppressed: (channel) =>
      state.value.suppressions.filter((s) => s.channel === channel).map((s) => s.destination),
    reset() {
      state.value = { messages: [], events: [], suppressions: [] };
      state.save();
      Object.assign(faults, defaultFaults());
      for (const key of Object.keys(counters) as (keyof InfraiCounters)[]) counters[key] = 0;
      pulls.clear();
    },
    async close() {
      for (const timer of holds) clearTimeout(timer);
      holds.clear();
      await closeServer(server);
    },
  };
  return simulator;
}
