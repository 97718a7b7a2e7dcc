/**
 * Shared pieces of the runbook and randomized fault tests (docs/architecture.md §7): providers that live in
 * the test process (so that what they received survives a kill -9 of the stack), the stack
 * configuration that points at them, the provider-side counts, and readers for the timeline.
 *
 * Provider-side truth, independent of the ledger:
 * - email: the SES emulator's store, one entry per accepted SendEmail, or the Resend
 *   simulator's emails (`startProviders({ email: 'resend' })`), matched to their intent by the
 *   `X-Notice-Intent` header both transports set (`<noticeId>-email`);
 * - SMS: the simulator's messages, matched by destination (each notice gets its own number).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import type { Channel } from '../../lambdas/domain/channel.ts';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { type ResendSimulator, startResendSimulator } from '../../local/email-simulators/resend.ts';
import { type FaultProxy, startFaultProxy } from '../../local/fault-proxy.ts';
import { readSesStore, type SesLocal, startSesLocal } from '../../local/ses/server.ts';
import { type SmsSimulator, startSmsSimulator } from '../../local/sms-simulator/server.ts';
import { ddbClient } from '../helpers/dynamodb.ts';
import type { StackProcess } from '../helpers/local-stack.ts';
import { type ChannelTimeline, getTimeline, postNotice, type Timeline, type Transition } from './support.ts';

export const TWILIO_FROM = '+15005550006';
export const EVENT_TYPE = 'lab-result-ready';
export const RECIPIENT_ID = 'pat_1042';

/** States after which the system owes nothing (docs/architecture.md §3). */
export const RESOLVED = new Set(['accepted', 'delivered', 'failed', 'suppressed']);
export const SENT = new Set(['accepted', 'delivered']);
/** Reasons a `failed` row is escalated with (a person must look), as opposed to a provider's verdict. */
export const ESCALATION_REASONS = new Set(['unknown_unresolved', 'attempts_exhausted', 'deadline_exceeded']);

/**
 * Short timings so that a lease expires, an `unknown` ages past its grace and a backoff runs
 * out within seconds. The lease outlives the provider timeout by far (a worker must never lose
 * its lease while it can still be waiting on the provider); the grace is several reconciler
 * periods, so an SES Delivery event (fed every 500 ms) settles an accepted mail well within it.
 */
export const SHORT_TIMINGS = {
  PROVIDER_TIMEOUT_MS: '600',
  SEND_LEASE_MS: '2500',
  RECONCILE_INTERVAL_MS: '500',
  UNKNOWN_GRACE_MS: '4000',
  RETRY_BASE_MS: '200',
  RETRY_CAP_MS: '2000',
  MAX_ATTEMPTS: '8',
} as const;

/** Longer than PROVIDER_TIMEOUT_MS: a hold this long always ends in the client's timeout. */
export const HOLD_PAST_TIMEOUT_MS = 1500;

export interface Providers {
  readonly email: 'ses';
  readonly sms: SmsSimulator;
  readonly ses: SesLocal;
  /** What the stack calls for SES: every SendEmail passes through it; `/store` reads pass untouched. */
  readonly sesProxy: FaultProxy;
  /** Configuration that points a stack at these providers. */
  readonly env: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** The same, with Resend for email: its simulator in this process, posting webhooks to the stack. */
export interface ResendProviders {
  readonly email: 'resend';
  readonly sms: SmsSimulator;
  readonly resend: ResendSimulator;
  readonly env: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export type AnyProviders = Providers | ResendProviders;

/**
 * The SMS simulator and the email provider (the `email` parameter) in this process.
 * - `ses` (default): aws-ses-v2-local and the fault proxy in front of it;
 *   `LOCAL_SES_EVENTS=store` makes the stack feed SES events from the emulator's store through
 *   the proxy, as it does for an emulator it started itself;
 * - `resend`: the Resend simulator, its webhooks (Svix-signed) posted to `publicBaseUrl`'s
 *   `/v1/provider-events/resend`, i.e. the stack that will listen there.
 */
export async function startProviders(options?: { seed?: number; email?: 'ses' }): Promise<Providers>;
export async function startProviders(options: {
  seed?: number;
  email: 'resend';
  publicBaseUrl: string;
}): Promise<ResendProviders>;
export async function startProviders(
  options: { seed?: number; email?: 'ses' | 'resend'; publicBaseUrl?: string } = {},
): Promise<AnyProviders> {
  const sms = await startSmsSimulator({ ...(options.seed !== undefined ? { seed: options.seed } : {}) });
  const smsEnv = {
    TWILIO_BASE_URL: sms.baseUrl,
    TWILIO_ACCOUNT_SID: sms.accountSid,
    TWILIO_AUTH_TOKEN: sms.authToken,
    TWILIO_FROM,
  };
  if (options.email === 'resend') {
    const resend = await startResendSimulator({
      webhookUrl: `${options.publicBaseUrl}/v1/provider-events/resend`,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
    });
    return {
      email: 'resend',
      sms,
      resend,
      env: {
        ...smsEnv,
        EMAIL_PROVIDER: 'resend',
        RESEND_BASE_URL: resend.baseUrl,
        RESEND_API_KEY: resend.apiKey,
        RESEND_WEBHOOK_SECRET: resend.webhookSecret,
        RESEND_FROM: 'Clinic <notices@example.com>',
      },
      async close() {
        await Promise.all([sms.close(), resend.close()]);
      },
    };
  }
  const ses = await startSesLocal();
  const sesProxy = await startFaultProxy({ upstream: ses.endpoint });
  return {
    email: 'ses',
    sms,
    ses,
    sesProxy,
    env: {
      AWS_ENDPOINT_URL_SESV2: sesProxy.endpoint,
      LOCAL_SES_EVENTS: 'store',
      ...smsEnv,
    },
    async close() {
      await sesProxy.close();
      await Promise.all([sms.close(), ses.close()]);
    },
  };
}

/** Base64 of 32 random bytes: the keys two stacks sharing one table must share. */
export function randomKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * Unique North American test numbers for one test: consecutive from a random start, never
 * ending in 0000 (the simulator's "undeliverable" suffix) nor in any `avoid` suffix.
 */
export function phoneBook(avoid: readonly string[] = []): () => string {
  let next = 1_000_000 + (randomBytes(3).readUIntBE(0, 3) % 7_000_000);
  return () => {
    // A handful of suffixes can only rule out a handful of consecutive numbers.
    for (let skipped = 0; skipped < 1000; skipped++) {
      const phone = `+1555${String(next++).slice(-7)}`;
      if (!phone.endsWith('0000') && !avoid.some((suffix) => phone.endsWith(suffix))) return phone;
    }
    throw new Error('phoneBook: no usable number in 1000 consecutive ones');
  };
}

export interface NoticeSpec {
  readonly eventId: string;
  readonly email?: string;
  readonly phone?: string;
  /** ISO 8601; default a day ahead. */
  readonly deadline?: string;
  /** The lane (docs/architecture.md §11); absent: none given (standard). */
  readonly priority?: 'critical' | 'standard' | 'bulk';
}

/** The docs/architecture.md §6 example, with only the channels whose destination is given. */
export function noticeRequest(spec: NoticeSpec): { noticeId: string; body: Record<string, unknown> } {
  const channels = [...(spec.email ? ['email'] : []), ...(spec.phone ? ['sms'] : [])];
  return {
    noticeId: deriveNoticeId(EVENT_TYPE, spec.eventId, RECIPIENT_ID),
    body: {
      eventId: spec.eventId,
      eventType: EVENT_TYPE,
      recipient: {
        id: RECIPIENT_ID,
        ...(spec.email ? { email: spec.email } : {}),
        ...(spec.phone ? { phone: spec.phone } : {}),
      },
      channels,
      template: { id: 'lab-result-ready', version: 'v3' },
      variables: { firstName: 'Ada' },
      deadline: spec.deadline ?? new Date(Date.now() + 86_400_000).toISOString(),
      ...(spec.priority ? { priority: spec.priority } : {}),
    },
  };
}

/**
 * A priority drawn from the event id, so that a suite's notices are spread over the three
 * lanes (docs/architecture.md §11) the same way on every run of the same ids.
 */
export function lanePriority(eventId: string): 'critical' | 'standard' | 'bulk' {
  const lanes = ['critical', 'standard', 'bulk'] as const;
  let h = 0;
  for (const c of eventId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return lanes[h % lanes.length] as (typeof lanes)[number];
}

export function eventId(prefix: string): string {
  return `evt_${prefix}_${randomBytes(5).toString('hex')}`;
}

/** The correlation id the SES transport puts in `X-Notice-Intent`. */
export function emailIntent(noticeId: string): string {
  return `${noticeId}-email`;
}

export interface ProviderSide {
  /** `X-Notice-Intent` → the email provider's ids (SES MessageIds, Resend email ids), in order. */
  readonly emails: ReadonlyMap<string, readonly string[]>;
  /** Destination → Twilio SIDs, in creation order. */
  readonly texts: ReadonlyMap<string, readonly string[]>;
}

/** What the providers hold right now. */
export async function providerSide(providers: AnyProviders): Promise<ProviderSide> {
  const emails = new Map<string, string[]>();
  const held =
    providers.email === 'resend'
      ? providers.resend.emails().map((e) => ({ intent: e.headers['X-Notice-Intent'], id: e.id }))
      : (await readSesStore(providers.ses.endpoint)).map((e) => ({
          intent: e.headers?.find((h) => h.name.toLowerCase() === 'x-notice-intent')?.value,
          id: e.messageId,
        }));
  for (const { intent, id } of held) {
    if (intent === undefined) continue;
    emails.set(intent, [...(emails.get(intent) ?? []), id]);
  }
  const texts = new Map<string, string[]>();
  for (const message of providers.sms.messages()) {
    texts.set(message.to, [...(texts.get(message.to) ?? []), message.sid]);
  }
  return { emails, texts };
}

export function emailsFor(side: ProviderSide, noticeId: string): readonly string[] {
  return side.emails.get(emailIntent(noticeId)) ?? [];
}

export function textsFor(side: ProviderSide, phone: string): readonly string[] {
  return side.texts.get(phone) ?? [];
}

/** The ledger row of one channel, read straight from DynamoDB (works while the stack is down). */
export async function ledgerRow(tableName: string, noticeId: string, channel: Channel) {
  const client = ddbClient();
  try {
    return await new DynamoDbLedgerStore({ client, tableName }).get(noticeId, channel);
  } finally {
    client.destroy();
  }
}

export function channelOf(timeline: Timeline, channel: Channel): ChannelTimeline {
  const found = timeline.channels.find((c) => c.channel === channel);
  if (!found) throw new Error(`notice ${timeline.noticeId} has no ${channel} channel`);
  return found;
}

/** `to:reason` per record, e.g. `sending:claimed > unknown:lease_expired > accepted:reconciled_accepted`. */
export function path(channel: ChannelTimeline): string {
  return channel.transitions.map((t) => `${t.to}:${t.reason}`).join(' > ');
}

export function reasonsOf(channel: ChannelTimeline): string[] {
  return channel.transitions.map((t) => t.reason);
}

export function claimsOf(channel: ChannelTimeline): Transition[] {
  return channel.transitions.filter((t) => t.to === 'sending');
}

export function atMs(transition: Transition): number {
  return Date.parse(transition.at);
}

/**
 * For each `retry_scheduled` record followed by a claim: how long the row waited, from the
 * moment the retry was decided to the next claim, with the delay the record says was advised.
 */
export function retryGaps(
  channel: ChannelTimeline,
): { readonly waitedMs: number; readonly advisedMs: number | undefined; readonly detail: string }[] {
  const gaps: { waitedMs: number; advisedMs: number | undefined; detail: string }[] = [];
  channel.transitions.forEach((t, i) => {
    if (t.to !== 'retry_scheduled') return;
    const nextClaim = channel.transitions.slice(i + 1).find((n) => n.to === 'sending');
    if (!nextClaim) return;
    const detail = typeof t.detail === 'string' ? t.detail : '';
    const advised = /retry in (\d+) ms \(retry_after\)/.exec(detail);
    gaps.push({
      waitedMs: atMs(nextClaim) - atMs(t),
      advisedMs: advised ? Number(advised[1]) : undefined,
      detail,
    });
  });
  return gaps;
}

/**
 * Timelines of `noticeIds` once `done` holds for all of them; bounded in time and polls. Only
 * the notices still pending are read again on each poll (`done` must stay true once true, as
 * "resolved" does), so that waiting on hundreds of notices does not load the stack it watches;
 * the answer is one fresh read of all of them.
 *
 * With `stallMs`, a wait that keeps finishing notices is not cut short by a slow machine: it
 * fails when no notice finished for `stallMs` (something is stuck), or at `timeoutMs` at the
 * latest. The failure counts what is pending by channel and state, and shows ten of them.
 */
export async function waitForTimelines(
  apiUrl: string,
  noticeIds: readonly string[],
  done: (timeline: Timeline) => boolean,
  {
    timeoutMs = 30_000,
    stallMs,
    intervalMs = 250,
    what = 'the timelines',
    operator,
  }: {
    timeoutMs?: number;
    /** Fail once no notice finished for this long (default: only `timeoutMs` bounds the wait). */
    stallMs?: number;
    intervalMs?: number;
    what?: string;
    /** Looks at every poll's timelines and acts on them (the runbook's operator). */
    operator?: RunbookOperator;
  } = {},
): Promise<Timeline[]> {
  const startedAt = Date.now();
  const deadline = startedAt + timeoutMs;
  let progressAt = startedAt;
  let pending = [...noticeIds];
  let last: Timeline[] = [];
  let lastError: unknown;
  const stalled = () => stallMs !== undefined && Date.now() - progressAt > stallMs;
  for (
    let poll = 0;
    poll < Math.ceil(timeoutMs / intervalMs) + 1 && Date.now() < deadline && !stalled();
    poll++
  ) {
    try {
      last = await mapLimited(pending, 8, (id) => getTimeline(apiUrl, id));
      if (operator) await operator.act(last);
      const still = last.filter((t) => !done(t)).map((t) => t.noticeId);
      if (still.length < pending.length) progressAt = Date.now();
      pending = still;
      if (pending.length === 0) return await mapLimited(noticeIds, 8, (id) => getTimeline(apiUrl, id));
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  const waiting = last.filter((t) => !done(t));
  const byState = new Map<string, number>();
  for (const t of waiting)
    for (const c of t.channels)
      byState.set(`${c.channel} ${c.state}`, (byState.get(`${c.channel} ${c.state}`) ?? 0) + 1);
  const stuck = waiting.map(
    (t) => `${t.noticeId}: ${t.channels.map((c) => `${c.channel} ${c.state} [${path(c)}]`).join('; ')}`,
  );
  const why = stalled()
    ? `no notice finished for ${stallMs} ms (after ${Date.now() - startedAt} ms)`
    : `timed out after ${timeoutMs} ms`;
  throw new Error(
    `${why} waiting for ${what}; ${waiting.length} of ${noticeIds.length} pending (${[...byState]
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ')}): ${stuck.slice(0, 10).join(' | ') || '—'}${
      lastError instanceof Error ? ` (last error: ${lastError.message})` : ''
    }`,
  );
}

export interface OperatorAct {
  readonly noticeId: string;
  readonly channel: Channel;
  readonly outcome: 'accepted' | 'not_sent';
  readonly status: number;
}

export interface RunbookOperator {
  readonly acts: OperatorAct[];
  act(timelines: readonly Timeline[]): Promise<void>;
}

/** Who the runbook's operator is on the local stack (the body's `actor`). */
export const RUNBOOK_OPERATOR = 'runbook-operator';

/**
 * The runbook's person on call (UNKNOWN_POLICY=escalate): for every channel escalated while
 * `unknown`, look at the provider's side — the SES store by the intent's header, the SMS
 * simulator by the notice's number — and settle it through the resolution route: `accepted`
 * when the provider holds a message for it, `not_sent` when it holds none (a deliberate resend).
 * That is the deterministic next action an escalation leaves a person.
 */
export function runbookOperator(
  apiUrl: string,
  providers: Providers,
  phoneOf: (noticeId: string) => string | undefined = () => undefined,
): RunbookOperator {
  const acts: OperatorAct[] = [];
  return {
    acts,
    async act(timelines) {
      const escalated = timelines.flatMap((t) =>
        t.channels.filter((c) => c.state === 'unknown' && c.escalatedAt).map((c) => ({ t, c })),
      );
      if (escalated.length === 0) return;
      const side = await providerSide(providers);
      for (const { t, c } of escalated) {
        const phone = phoneOf(t.noticeId);
        const held = c.channel === 'email' ? emailsFor(side, t.noticeId) : phone ? textsFor(side, phone) : [];
        if (c.channel === 'sms' && phone === undefined) throw new Error(`no number known for ${t.noticeId}`);
        const outcome = held.length > 0 ? 'accepted' : 'not_sent';
        const res = await fetch(`${apiUrl}/v1/notices/${t.noticeId}/channels/${c.channel}/resolution`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            outcome,
            reason: held.length > 0 ? 'seen in provider console' : 'not in provider console',
            actor: RUNBOOK_OPERATOR,
          }),
        });
        await res.arrayBuffer();
        // 409: the provider's answer settled it first; the next poll shows how.
        acts.push({ noticeId: t.noticeId, channel: c.channel, outcome, status: res.status });
      }
    },
  };
}

export function allResolved(timeline: Timeline): boolean {
  return timeline.channels.length > 0 && timeline.channels.every((c) => RESOLVED.has(c.state));
}

export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        out[index] = await fn(items[index] as T, index);
      }
    }),
  );
  return out;
}

/** A kill -9 that the stack did to itself at a crash point: waits for the exit, bounded. */
export async function expectCrash(
  stack: StackProcess,
  timeoutMs = 40_000,
): Promise<{ signal: NodeJS.Signals | null; line: string | undefined }> {
  const exit = await Promise.race([stack.exited, sleep(timeoutMs).then(() => undefined)]);
  if (exit === undefined) {
    await stack.kill9();
    throw new Error(`the stack did not crash within ${timeoutMs} ms\n${stack.output().slice(-4000)}`);
  }
  const line = /crash point \S+ reached for \S+: SIGKILL/.exec(stack.output())?.[0];
  return { signal: exit.signal, line };
}

/** JSON log lines of a stack's output with `message` equal to `what` (Powertools Logger format). */
export function logRecords(output: string, what: string): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes(`"message":"${what}"`)) continue;
    try {
      records.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A line cut by the output tail or interleaved with another write: not evidence either way.
    }
  }
  return records;
}

// --- a lossy SQS -----------------------------------------------------------------------------

export interface LossySqs {
  /** The value for the stack's `AWS_ENDPOINT_URL_SQS`. */
  readonly endpoint: string;
  /**
   * The next `count` messages for (noticeId, channel) that match are acknowledged to the sender
   * and never stored: what "SQS lost the message" looks like from the sender's side.
   * `delayed`: only messages sent with a delay (retries), not the intake's.
   */
  loseNext(rule: { noticeId: string; channel: Channel; count: number; delayed?: boolean }): void;
  /** Bodies of the messages lost so far, with their delay. */
  readonly lost: { readonly body: string; readonly delaySeconds: number; readonly at: number }[];
  close(): Promise<void>;
}

interface LoseRule {
  noticeId: string;
  channel: Channel;
  count: number;
  delayed: boolean;
}

interface BatchEntry {
  Id: string;
  MessageBody: string;
  DelaySeconds?: number;
}

/**
 * local-aws-sqs in this process behind a proxy that can drop messages. Only whole
 * `SendMessageBatch` calls to a channel queue whose every entry matches a rule are dropped (the ledger's queue
 * adapter sends one entry per intent and channel queue, so that is every call for one intent);
 * everything else, long polls included, is forwarded untouched. The fake answer carries the MD5
 * of each body, as SQS's does, so the SDK's checksum validation accepts it.
 */
export async function startLossySqs(): Promise<LossySqs> {
  const rules: LoseRule[] = [];
  const lost: LossySqs['lost'] = [];
  const sockets = new Set<Socket>();
  let upstreamPort = 0;

  function matchingRule(entries: readonly BatchEntry[]): LoseRule | undefined {
    for (const rule of rules) {
      if (rule.count <= 0) continue;
      const all = entries.every((entry) => {
        try {
          const body = JSON.parse(entry.MessageBody) as { noticeId?: string; channel?: string };
          const delayed = (entry.DelaySeconds ?? 0) > 0;
          return (
            body.noticeId === rule.noticeId && body.channel === rule.channel && (!rule.delayed || delayed)
          );
        } catch {
          return false;
        }
      });
      if (all && entries.length > 0) return rule;
    }
    return undefined;
  }

  function forward(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const out = httpRequest(
      {
        hostname: '127.0.0.1',
        port: upstreamPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `127.0.0.1:${upstreamPort}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    out.end(body);
  }

  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.headers['x-amz-target'] === 'AmazonSQS.SendMessageBatch') {
        let entries: BatchEntry[] = [];
        try {
          const batch = JSON.parse(body.toString('utf8')) as { QueueUrl?: string; Entries?: BatchEntry[] };
          // The channel queues' references only: the watches (docs/table-design.md "Watched rows")
          // name the same rows but are not the messages these rules lose.
          entries = batch.QueueUrl?.endsWith('-watch') ? [] : (batch.Entries ?? []);
        } catch {
          entries = [];
        }
        const rule = matchingRule(entries);
        if (rule) {
          rule.count -= 1;
          for (const entry of entries) {
            lost.push({ body: entry.MessageBody, delaySeconds: entry.DelaySeconds ?? 0, at: Date.now() });
          }
          const answer = JSON.stringify({
            Successful: entries.map((entry) => ({
              Id: entry.Id,
              MessageId: randomUUID(),
              MD5OfMessageBody: createHash('md5').update(entry.MessageBody, 'utf8').digest('hex'),
            })),
            Failed: [],
          });
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(answer);
          return;
        }
      }
      forward(req, body, res);
    });
  });
  proxy.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = proxy.address() as AddressInfo;
  // The emulator names its queues by the port it is told, and the SDK sends each request to the
  // origin of its QueueUrl: told the proxy's port, every call comes through the proxy.
  const { createRequestHandler } = await import('local-aws-sqs');
  const { requestHandler } = createRequestHandler({
    port,
    hostname: '127.0.0.1',
    region: 'us-east-1',
    accountId: '000000000000',
  });
  const upstream: Server = createServer((req, res) => void requestHandler(req, res));
  await new Promise<void>((resolve, reject) => {
    upstream.once('error', reject);
    upstream.listen(0, '127.0.0.1', () => resolve());
  });
  upstreamPort = (upstream.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    lost,
    loseNext(rule) {
      rules.push({ ...rule, delayed: rule.delayed ?? false });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await new Promise<void>((resolve) => {
        upstream.close(() => resolve());
        upstream.closeAllConnections();
      });
    },
  };
}

/** A positive integer from the environment (a test's size or seed), else `fallback`. */
export function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
}

export interface KillRun {
  /** Per body: the last status its POST got (0: no answer) and how many tries it took. */
  readonly posted: readonly { readonly status: number; readonly tries: number }[];
  readonly kills: readonly {
    readonly atMs: number;
    readonly signal: string | null;
    readonly downMs: number;
  }[];
  /** The stack running after the last restart. */
  readonly stack: StackProcess;
}

/**
 * The randomized fault runs' act: `producers` post the bodies on a schedule spread over
 * `windowMs`, each retrying through the kills as any client would (a 5xx or no answer is safe to
 * repeat) for up to `patienceMs`; meanwhile `kills` SIGKILLs land at evenly spaced moments of the
 * window (± 1 s), each followed by `restart()` on the same data.
 */
export async function postThroughKills(options: {
  readonly apiUrl: string;
  readonly bodies: readonly Record<string, unknown>[];
  readonly windowMs: number;
  readonly producers: number;
  readonly patienceMs: number;
  readonly kills: number;
  readonly stack: StackProcess;
  restart(): Promise<StackProcess>;
  /** Awaited at each kill's time, before the kill: lets a test aim it (bounded by the test). */
  beforeKill?(): Promise<void>;
}): Promise<KillRun> {
  const { bodies, windowMs } = options;
  const posted: { status: number; tries: number }[] = new Array(bodies.length);
  const postStart = Date.now();
  let stack = options.stack;
  let nextIndex = 0;
  const producers = Array.from({ length: options.producers }, async () => {
    while (nextIndex < bodies.length) {
      const i = nextIndex++;
      const slot = postStart + Math.floor((i * windowMs) / bodies.length);
      if (slot > Date.now()) await sleep(slot - Date.now());
      const giveUpAt = Date.now() + options.patienceMs;
      let tries = 0;
      let status = 0;
      while (Date.now() < giveUpAt && tries < 200) {
        tries += 1;
        try {
          status = (await postNotice(options.apiUrl, bodies[i] as Record<string, unknown>)).status;
          // 5xx: the stack is going down or coming up; the request is safe to repeat.
          if (status < 500) break;
        } catch {
          status = 0;
        }
        await sleep(200);
      }
      posted[i] = { status, tries };
    }
  });
  const kills: { atMs: number; signal: string | null; downMs: number }[] = [];
  const killer = (async () => {
    for (let k = 0; k < options.kills; k++) {
      const at = postStart + ((k + 1) * windowMs) / (options.kills + 1) + (Math.random() - 0.5) * 2000;
      if (at > Date.now()) await sleep(at - Date.now());
      await options.beforeKill?.();
      const killedAt = Date.now();
      await stack.kill9();
      const { signal } = await stack.exited;
      stack = await options.restart();
      kills.push({ atMs: killedAt - postStart, signal, downMs: Date.now() - killedAt });
    }
  })();
  await Promise.all([...producers, killer]);
  return { posted, kills, stack };
}
