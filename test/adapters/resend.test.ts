/**
 * The Resend module against its published contract (through the simulator) and its classifier
 * as a table: every (status, name) pair the documentation lists, the idempotency semantics a
 * replay relies on, permissive batches, the lookup's replay / listing split, and the events.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmailMessage } from '../../lambdas/ports/transport.port.ts';
import {
  outcomeForResendError,
  outcomesOfBatch,
  REPLAY_WINDOW_MS,
} from '../../lambdas/providers/resend/api.ts';
import { facet as inboundFacet, mapResendEvent } from '../../lambdas/providers/resend/inbound.ts';
import { ResendProviderLookup } from '../../lambdas/providers/resend/lookup.ts';
import { sign } from '../../lambdas/providers/resend/svix.ts';
import { ResendEmailTransport } from '../../lambdas/providers/resend/transport.ts';
import { type ResendSimulator, startResendSimulator } from '../../local/email-simulators/resend.ts';

const FROM = 'Clinic <notices@example.com>';
const none = new Headers();

describe('outcomeForResendError: (status, name) → outcome', () => {
  const table: [number, string | undefined, Record<string, string>, unknown][] = [
    [
      429,
      'rate_limit_exceeded',
      { 'retry-after': '2' },
      { kind: 'retryable', throttled: true, retryAfterMs: 2000 },
    ],
    [
      429,
      'rate_limit_exceeded',
      { 'ratelimit-reset': '3' },
      { kind: 'retryable', throttled: true, retryAfterMs: 3000 },
    ],
    [429, undefined, {}, { kind: 'retryable', throttled: true }],
    [
      429,
      'daily_quota_exceeded',
      { 'retry-after': '3600' },
      { kind: 'operator_action_required', retryAfterMs: 3_600_000 },
    ],
    [429, 'monthly_quota_exceeded', {}, { kind: 'operator_action_required' }],
    [409, 'concurrent_idempotent_requests', {}, { kind: 'retryable', throttled: false, retryAfterMs: 1000 }],
    [409, 'resource_locked', {}, { kind: 'retryable', throttled: false }],
    [409, 'invalid_idempotent_request', {}, { kind: 'ambiguous' }],
    [409, undefined, {}, { kind: 'ambiguous' }],
    [401, 'missing_api_key', {}, { kind: 'operator_action_required' }],
    [401, 'restricted_api_key', {}, { kind: 'operator_action_required' }],
    [401, 'validation_error', {}, { kind: 'operator_action_required' }],
    [403, 'invalid_api_key', {}, { kind: 'operator_action_required' }],
    [403, 'validation_error', {}, { kind: 'operator_action_required' }],
    [404, 'not_found', {}, { kind: 'operator_action_required' }],
    [405, 'method_not_allowed', {}, { kind: 'operator_action_required' }],
    [400, 'invalid_idempotency_key', {}, { kind: 'operator_action_required' }],
    [422, 'invalid_from_address', {}, { kind: 'operator_action_required' }],
    [400, 'validation_error', {}, { kind: 'rejected', permanent: true }],
    [422, 'missing_required_field', {}, { kind: 'rejected', permanent: true }],
    [422, 'invalid_attachment', {}, { kind: 'rejected', permanent: true }],
    [413, undefined, {}, { kind: 'rejected', permanent: true }],
    [408, undefined, {}, { kind: 'retryable', throttled: false }],
    [500, 'application_error', {}, { kind: 'ambiguous' }],
    [500, 'internal_server_error', {}, { kind: 'ambiguous' }],
    [503, undefined, {}, { kind: 'ambiguous' }],
  ];
  for (const [status, name, headers, expected] of table) {
    it(`${status} ${name ?? '(no name)'} → ${(expected as { kind: string }).kind}`, () => {
      const outcome = outcomeForResendError(
        status,
        name === undefined ? {} : { statusCode: status, name, message: 'patient@example.com is quoted here' },
        new Headers(headers),
        0,
      );
      expect(outcome).toMatchObject(expected as object);
      // No free text (the message may quote an address) reaches a code.
      expect(JSON.stringify(outcome)).not.toContain('patient@');
    });
  }
});

describe('outcomesOfBatch: one outcome per email, mapped by index', () => {
  const answered = (body: unknown, status = 200) => ({
    kind: 'answered' as const,
    status,
    body,
    headers: none,
  });
  it('permissive: created ids in order, invalid indices rejected', () => {
    expect(
      outcomesOfBatch(
        answered({ data: [{ id: 'a' }, { id: 'c' }], errors: [{ index: 1, message: 'x' }] }),
        3,
        0,
      ),
    ).toEqual([
      { kind: 'accepted', receiptId: 'a' },
      { kind: 'rejected', code: 'resend_batch_item_invalid', permanent: true },
      { kind: 'accepted', receiptId: 'c' },
    ]);
  });
  it('counts that do not add up are ambiguous for every email, never guessed', () => {
    expect(outcomesOfBatch(answered({ data: [{ id: 'a' }] }), 3, 0)).toEqual(
      Array(3).fill({ kind: 'ambiguous', code: 'resend_batch_unmapped' }),
    );
  });
  it('a whole-call answer is every email’s; a whole-call 422 is retried (the call, not one email, was wrong)', () => {
    expect(outcomesOfBatch(answered({ name: 'rate_limit_exceeded' }, 429), 2, 0).map((o) => o.kind)).toEqual([
      'retryable',
      'retryable',
    ]);
    expect(outcomesOfBatch(answered({ name: 'validation_error' }, 422), 2, 0)).toEqual(
      Array(2).fill({ kind: 'rejected', code: 'resend_422_validation_error', permanent: false }),
    );
    expect(
      outcomesOfBatch({ kind: 'failed', outcome: { kind: 'ambiguous', code: 'timeout' } }, 2, 0),
    ).toEqual(Array(2).fill({ kind: 'ambiguous', code: 'timeout' }));
  });
});

describe('against the Resend simulator', () => {
  let resend: ResendSimulator;
  let transport: ResendEmailTransport;
  beforeAll(async () => {
    resend = await startResendSimulator();
  });
  afterAll(async () => {
    await resend.close();
  });
  beforeEach(() => {
    resend.reset();
    resend.set({ webhooksEnabled: false });
    transport = new ResendEmailTransport({
      baseUrl: resend.baseUrl,
      apiKey: resend.apiKey,
      from: FROM,
      timeoutMs: 600,
    });
  });
  let n = 0;
  const message = (overrides: Partial<EmailMessage> = {}): EmailMessage => {
    n += 1;
    return {
      to: `patient.${n}@example.com`,
      subject: 'Your lab result is ready',
      text: 'Hello',
      html: '<p>Hello</p>',
      correlationId: `ntc_${String(n).padStart(26, 'a')}-email`,
      idempotencyKey: `ntc_${String(n).padStart(26, 'a')}.email`,
      ...overrides,
    };
  };

  it('same key + same body: the original id, nothing sent again; same key + another body: ambiguous (409)', async () => {
    const m = message();
    const first = await transport.send(m);
    const replay = await transport.send(m);
    expect(first.kind).toBe('accepted');
    expect(replay).toEqual(first);
    expect(resend.emails()).toHaveLength(1);
    expect(resend.counters.replays).toBe(1);
    expect(await transport.send({ ...m, subject: 'Changed copy' })).toEqual({
      kind: 'ambiguous',
      code: 'resend_409_invalid_idempotent_request',
    });
    expect(resend.emails()).toHaveLength(1);
  });

  it('a request under a key still being answered: 409 concurrent_idempotent_requests, retryable', async () => {
    const m = message();
    resend.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: 1_000 }] });
    const first = transport.send(m);
    // The first request is at the simulator: its email created, its answer held.
    await vi.waitFor(() => expect(resend.counters.emailsCreated).toBe(1), { timeout: 5_000, interval: 10 });
    const slow = new ResendEmailTransport({
      baseUrl: resend.baseUrl,
      apiKey: resend.apiKey,
      from: FROM,
      timeoutMs: 2_000,
    });
    expect(await slow.send(m)).toMatchObject({
      kind: 'retryable',
      code: 'resend_409_concurrent_idempotent_requests',
    });
    expect(await first).toEqual({ kind: 'ambiguous', code: 'timeout' });
    // Once answered (the hold ends a second after acceptance; until then the key answers 409 as
    // above), the key replays the id of the one email.
    await vi.waitFor(
      async () => expect(await slow.send(m)).toEqual({ kind: 'accepted', receiptId: resend.emails()[0]?.id }),
      { timeout: 5_000, interval: 100 },
    );
    expect(resend.emails()).toHaveLength(1);
  });

  it('a refusal before anything was created does not use up the key; 24 h later the key is new again', async () => {
    const m = message();
    resend.set({ failNext: [{ kind: 'status', status: 429, retryAfterSeconds: 2 }] });
    expect(await transport.send(m)).toMatchObject({ kind: 'retryable', throttled: true, retryAfterMs: 2000 });
    const accepted = await transport.send(m);
    expect(accepted.kind).toBe('accepted');
    resend.advance(REPLAY_WINDOW_MS + 60_000);
    // Past the window a replay is a second email: why the lookup stops replaying before it.
    const late = await transport.send(m);
    expect(late.kind).toBe('accepted');
    expect(late).not.toEqual(accepted);
    expect(resend.emails()).toHaveLength(2);
  });

  it('the team rate limit: ratelimit-* headers, 429 with retry-after; credentials refused are operational', async () => {
    resend.set({ rateLimitPerSecond: 2 });
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await transport.send(message()));
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'retryable', 'retryable']);
    expect(outcomes[2]).toMatchObject({
      code: 'resend_429_rate_limit_exceeded',
      throttled: true,
      retryAfterMs: 1000,
    });
    const response = await fetch(`${resend.baseUrl}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${resend.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.headers.get('ratelimit-limit')).toBe('2');
    expect(response.headers.get('ratelimit-remaining')).toBe('0');
    resend.set({ rateLimitPerSecond: null });
    const wrongKey = new ResendEmailTransport({
      baseUrl: resend.baseUrl,
      apiKey: 're_wrong',
      from: FROM,
      timeoutMs: 600,
    });
    expect(await wrongKey.send(message())).toEqual({
      kind: 'operator_action_required',
      code: 'resend_403_invalid_api_key',
    });
    resend.set({
      failNext: [{ kind: 'status', status: 429, name: 'daily_quota_exceeded', retryAfterSeconds: 60 }],
    });
    expect(await transport.send(message())).toEqual({
      kind: 'operator_action_required',
      code: 'resend_429_daily_quota_exceeded',
      retryAfterMs: 60_000,
    });
    expect(resend.emails()).toHaveLength(2);
  });

  it('a 5xx after acceptance is ambiguous, and the replay under the key names the email', async () => {
    const m = message();
    resend.set({ failNext: [{ kind: 'status', status: 500, afterAccept: true }] });
    expect(await transport.send(m)).toEqual({ kind: 'ambiguous', code: 'resend_500_internal_server_error' });
    expect(await transport.send(m)).toEqual({ kind: 'accepted', receiptId: resend.emails()[0]?.id });
    expect(resend.emails()).toHaveLength(1);
  });

  it('batch (permissive): a bad address fails only its index; the replay under the batch key returns the same ids', async () => {
    const messages = [message(), message({ to: 'not-an-address' }), message()];
    const batch = { idempotencyKey: 'batch.bat_test1', messages };
    const first = await transport.sendBatch(batch);
    expect(first.map((o) => o.kind)).toEqual(['accepted', 'rejected', 'accepted']);
    expect(resend.emails().map((e) => e.to[0])).toEqual([messages[0]?.to, messages[2]?.to]);
    expect(await transport.sendBatch(batch)).toEqual(first);
    expect(resend.emails()).toHaveLength(2);
    await expect(
      transport.sendBatch({ idempotencyKey: 'k', messages: Array(101).fill(message()) }),
    ).rejects.toThrow(RangeError);
  });

  it('lookup: replays within the window; past it lists and matches; past the deadline sends nothing', async () => {
    const lookup = new ResendProviderLookup({
      baseUrl: resend.baseUrl,
      apiKey: resend.apiKey,
      from: FROM,
      timeoutMs: 600,
    });
    const m = message();
    const sent = await transport.send(m);
    const base = {
      correlationId: m.correlationId,
      destination: m.to,
      content: m.subject,
      attemptStartedAt: Date.now() - 1_000,
      attemptEndedAt: Date.now(),
      replay: m,
      deadline: Date.now() + 3_600_000,
      keyFirstUsedAt: Date.now() - 1_000,
    };
    expect(await lookup.lookup(base)).toEqual({
      kind: 'found',
      receiptId: (sent as { receiptId: string }).receiptId,
      detail: 'replayed under its idempotency key',
    });
    // Past the safe window: no replay, the listing (recipient, subject, time) finds it.
    const old = { ...base, keyFirstUsedAt: Date.now() - REPLAY_WINDOW_MS };
    expect(await lookup.lookup(old)).toMatchObject({
      kind: 'found',
      detail: 'matched by recipient, subject and time',
    });
    // Two emails to the same person with the same subject in the window cannot be told apart.
    await transport.send({ ...m, idempotencyKey: 'another.key', correlationId: 'x' });
    expect(await lookup.lookup(old)).toMatchObject({ kind: 'undecidable' });
    // Never sent, past its deadline: the lookup must not send it; the complete listing has none.
    const never = message();
    const pastDeadline = {
      ...base,
      destination: never.to,
      content: never.subject,
      replay: never,
      deadline: Date.now() - 1,
    };
    expect(await lookup.lookup(pastDeadline)).toMatchObject({ kind: 'absent' });
    expect(resend.emails().some((e) => e.to.includes(never.to))).toBe(false);
  });
});

describe('Resend events', () => {
  const ref = 'ntc_abcdefghijklmnopqrstuvwxyz-email';
  const event = (type: string, data: Record<string, unknown> = {}) => ({
    type,
    created_at: '2026-11-30T10:00:00.000Z',
    data: { email_id: 'e-1', created_at: '2026-11-30T09:59:59.000Z', tags: { notice_intent: ref }, ...data },
  });
  it('maps each type as the issue says', () => {
    const kinds = (type: string, data?: Record<string, unknown>) => {
      const m = mapResendEvent(event(type, data), 'msg_1');
      return m.kind === 'report'
        ? [m.report.kind, m.report.failure, m.report.suppress ?? false, m.report.code, m.report.eventId]
        : [m.kind];
    };
    expect(kinds('email.sent')).toEqual(['accepted', undefined, false, undefined, 'msg_1']);
    expect(kinds('email.delivered')).toEqual(['delivered', undefined, false, undefined, 'msg_1']);
    expect(kinds('email.bounced', { bounce: { type: 'Permanent', subType: 'General' } })).toEqual([
      'failed',
      'hard_bounce',
      true,
      'resend_bounce_Permanent_General',
      'msg_1',
    ]);
    expect(kinds('email.bounced', { bounce: { type: 'Transient', subType: 'MailboxFull' } })).toEqual([
      'failed',
      'delivery_failed',
      false,
      'resend_bounce_Transient_MailboxFull',
      'msg_1',
    ]);
    expect(kinds('email.complained')).toEqual(['failed', 'complaint', true, 'resend_complaint', 'msg_1']);
    expect(kinds('email.suppressed', { suppressed: { reason: 'previous_complaint' } })).toEqual([
      'failed',
      'complaint',
      true,
      'resend_suppressed_previous_complaint',
      'msg_1',
    ]);
    expect(kinds('email.delivery_delayed')).toEqual(['ignore']);
    expect(kinds('email.opened')).toEqual(['ignore']);
    expect(kinds('contact.created')).toEqual(['ignore']);
    // Correlation by the custom header when tags are absent; no correlation: not ours.
    expect(
      mapResendEvent(
        event('email.sent', { tags: {}, headers: [{ name: 'X-Notice-Intent', value: ref }] }),
        undefined,
      ).kind,
    ).toBe('report');
    expect(mapResendEvent(event('email.sent', { tags: {} }), undefined).kind).toBe('unmatched');
  });

  it('the webhook facet: verified → reports; malformed → 400 naming the field; forged → refused', () => {
    const secret = 'whsec_c2ltdWxhdG9yLXNpZ25pbmcta2V5LTAwMDAwMDA=';
    const handle = inboundFacet.create({
      settings: { RESEND_WEBHOOK_SECRET: secret },
      timeoutMs: 1000,
      publicBaseUrl: 'http://127.0.0.1',
      clock: { now: Date.now },
      awsClient: (client) => client,
    }) as (
      r: import('../../lambdas/ports/provider.port.ts').InboundRequest,
    ) => import('../../lambdas/ports/provider.port.ts').InboundVerdict;
    const request = (body: string, signature?: string) => {
      const ts = Math.floor(Date.now() / 1000);
      const h: Record<string, string> = {
        'svix-id': 'msg_x',
        'svix-timestamp': String(ts),
        'svix-signature': signature ?? sign(secret, 'msg_x', ts, body),
      };
      return {
        url: 'http://127.0.0.1/v1/provider-events/resend',
        header: (n: string) => h[n],
        body,
        contentType: 'application/json',
      };
    };
    expect(handle(request(JSON.stringify(event('email.delivered'))))).toMatchObject({
      kind: 'accepted',
      reports: [{ kind: 'delivered', eventId: 'msg_x' }],
    });
    expect(handle(request(JSON.stringify({ type: 'email.sent', data: {} })))).toMatchObject({
      kind: 'malformed',
      errors: [{ path: 'data.email_id', code: 'required' }],
    });
    expect(handle(request('not json'))).toMatchObject({ kind: 'malformed' });
    expect(handle(request(JSON.stringify(event('email.delivered')), 'v1,AAAA'))).toMatchObject({
      kind: 'refused',
      status: 403,
    });
  });
});
