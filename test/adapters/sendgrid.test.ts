/**
 * The SendGrid module against its published contract (through the simulator): one answer per
 * send, no idempotency, the rate-limit reset, batched and duplicated events, the Activity lookup.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EmailMessage } from '../../lambdas/ports/transport.port.ts';
import { facet as inboundFacet, mapSendGridEvent } from '../../lambdas/providers/sendgrid/inbound.ts';
import { SendGridProviderLookup } from '../../lambdas/providers/sendgrid/lookup.ts';
import {
  outcomeForSendGridResponse,
  SendGridEmailTransport,
} from '../../lambdas/providers/sendgrid/transport.ts';
import { type SendGridSimulator, startSendGridSimulator } from '../../local/email-simulators/sendgrid.ts';

describe('outcomeForSendGridResponse', () => {
  const now = 1_700_000_000_000;
  it.each([
    [
      202,
      { 'x-message-id': 'W86EgYT6SQKk0lRflfLRsA' },
      { kind: 'accepted', receiptId: 'W86EgYT6SQKk0lRflfLRsA' },
    ],
    [202, {}, { kind: 'ambiguous' }],
    [
      429,
      { 'x-ratelimit-reset': String(now / 1000 + 5) },
      { kind: 'retryable', throttled: true, retryAfterMs: 5000 },
    ],
    [401, {}, { kind: 'operator_action_required' }],
    [403, {}, { kind: 'operator_action_required' }],
    [404, {}, { kind: 'operator_action_required' }],
    [400, {}, { kind: 'rejected', permanent: true }],
    [413, {}, { kind: 'rejected', permanent: true }],
    [500, {}, { kind: 'ambiguous' }],
    [503, {}, { kind: 'ambiguous' }],
  ])('%i %o', (status, headers, expected) => {
    expect(outcomeForSendGridResponse(status, new Headers(headers), now)).toMatchObject(expected);
  });
});

describe('against the SendGrid simulator', () => {
  let sendgrid: SendGridSimulator;
  let transport: SendGridEmailTransport;
  beforeAll(async () => {
    sendgrid = await startSendGridSimulator({ activity: true });
  });
  afterAll(async () => {
    await sendgrid.close();
  });
  beforeEach(() => {
    sendgrid.reset();
    sendgrid.set({ webhooksEnabled: false, activity: true });
    transport = new SendGridEmailTransport({
      baseUrl: sendgrid.baseUrl,
      apiKey: sendgrid.apiKey,
      from: 'notices@example.com',
      timeoutMs: 600,
    });
  });
  const message = (to = 'patient@example.com'): EmailMessage => ({
    to,
    subject: 'Your lab result is ready',
    text: 'Hello',
    correlationId: 'ntc_abcdefghijklmnopqrstuvwxyz-email',
    idempotencyKey: 'ntc_abcdefghijklmnopqrstuvwxyz.email',
  });

  it('202 with X-Message-Id; there is no idempotency key, so the same request twice is two messages', async () => {
    const first = await transport.send(message());
    const second = await transport.send(message());
    expect(first.kind).toBe('accepted');
    expect(second.kind).toBe('accepted');
    expect(second).not.toEqual(first);
    expect(sendgrid.messages()).toHaveLength(2);
    expect(sendgrid.messages()[0]?.customArgs).toEqual({
      notice_intent: 'ntc_abcdefghijklmnopqrstuvwxyz-email',
    });
  });

  it('rate limit: 429 until X-RateLimit-Reset; a wrong key is operational; a bad request rejected', async () => {
    sendgrid.set({ rateLimitPerSecond: 1 });
    expect((await transport.send(message())).kind).toBe('accepted');
    const limited = await transport.send(message());
    expect(limited).toMatchObject({ kind: 'retryable', code: 'sendgrid_429', throttled: true });
    expect((limited as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(2000);
    sendgrid.set({ rateLimitPerSecond: null });
    const wrong = new SendGridEmailTransport({
      baseUrl: sendgrid.baseUrl,
      apiKey: 'SG.wrong',
      from: 'n@example.com',
      timeoutMs: 600,
    });
    expect(await wrong.send(message())).toEqual({ kind: 'operator_action_required', code: 'sendgrid_401' });
    expect(await transport.send(message('not-an-address'))).toEqual({
      kind: 'rejected',
      code: 'sendgrid_400',
      permanent: true,
    });
  });

  it('Activity lookup: found by the custom arg; absent while the feed lags; undecidable without the add-on', async () => {
    const lookup = new SendGridProviderLookup(
      { baseUrl: sendgrid.baseUrl, apiKey: sendgrid.apiKey, timeoutMs: 600 },
      true,
    );
    const query = {
      correlationId: 'ntc_abcdefghijklmnopqrstuvwxyz-email',
      destination: 'patient@example.com',
      content: 'Your lab result is ready',
      attemptStartedAt: Date.now(),
      attemptEndedAt: Date.now(),
    };
    sendgrid.set({ activityDelayMs: 60_000 });
    const sent = await transport.send(message());
    expect(await lookup.lookup(query)).toMatchObject({ kind: 'absent' });
    sendgrid.set({ activityDelayMs: 0 });
    expect(await lookup.lookup(query)).toMatchObject({
      kind: 'found',
      receiptId: (sent as { receiptId: string }).receiptId,
    });
    await transport.send(message());
    expect(await lookup.lookup(query)).toMatchObject({ kind: 'undecidable' });
    sendgrid.set({ activity: false });
    expect(await lookup.lookup(query)).toMatchObject({
      kind: 'undecidable',
      detail: 'sendgrid activity answered 403',
    });
    const noAddOn = new SendGridProviderLookup(
      { baseUrl: sendgrid.baseUrl, apiKey: sendgrid.apiKey, timeoutMs: 600 },
      false,
    );
    const calls = sendgrid.counters.activityCalls;
    expect(await noAddOn.lookup(query)).toMatchObject({ kind: 'undecidable' });
    expect(sendgrid.counters.activityCalls).toBe(calls);
  });

  it('the Event Webhook facet: a batched delivery → a report per event, repeats in one delivery dropped; forged → 403', () => {
    const handle = inboundFacet.create({
      settings: { SENDGRID_WEBHOOK_PUBLIC_KEY: sendgrid.publicKey },
      timeoutMs: 1000,
      publicBaseUrl: 'http://127.0.0.1',
      clock: { now: Date.now },
      awsClient: (client) => client,
    }) as (
      r: import('../../lambdas/ports/provider.port.ts').InboundRequest,
    ) => import('../../lambdas/ports/provider.port.ts').InboundVerdict;
    const ev = (event: string, id: string, extra: Record<string, unknown> = {}) => ({
      email: 'patient@example.com',
      timestamp: 1_764_496_800,
      event,
      sg_event_id: id,
      sg_message_id: 'W86EgYT6SQKk0lRflfLRsA.filterdrecv-1-2-0.0',
      notice_intent: 'ntc_abcdefghijklmnopqrstuvwxyz-email',
      ...extra,
    });
    const { body, headers } = sendgrid.signedDelivery([
      ev('processed', 'e1'),
      ev('delivered', 'e2'),
      ev('delivered', 'e2'),
      ev('open', 'e3'),
      { ...ev('delivered', 'e4'), notice_intent: undefined },
    ]);
    const request = {
      url: 'http://127.0.0.1/x',
      header: (n: string) => headers[n],
      body,
      contentType: 'application/json',
    };
    const verdict = handle(request);
    expect(verdict).toMatchObject({
      kind: 'accepted',
      reports: [
        { kind: 'accepted', receiptId: 'W86EgYT6SQKk0lRflfLRsA', eventId: 'e1', at: 1_764_496_800_000 },
        { kind: 'delivered', eventId: 'e2' },
      ],
      unmatched: 1,
      ignored: ['duplicate_event', 'open'],
    });
    expect(handle({ ...request, body: `${body} ` })).toMatchObject({ kind: 'refused', status: 403 });
    const notArray = sendgrid.signedDelivery({ event: 'x' } as unknown as unknown[]);
    expect(
      handle({ ...request, body: notArray.body, header: (n: string) => notArray.headers[n] }),
    ).toMatchObject({ kind: 'malformed' });
  });
});

describe('SendGrid events', () => {
  const base = {
    sg_event_id: 'x',
    sg_message_id: 'W86EgYT6SQKk0lRflfLRsA.filter',
    notice_intent: 'ntc_abcdefghijklmnopqrstuvwxyz-email',
    timestamp: 1,
  };
  const map = (e: Record<string, unknown>) => {
    const m = mapSendGridEvent({ ...base, ...e });
    return m.kind === 'report'
      ? [m.report.kind, m.report.failure, m.report.suppress ?? false, m.report.code]
      : [m.kind];
  };
  it('maps each event as the issue says', () => {
    expect(map({ event: 'processed' })).toEqual(['accepted', undefined, false, undefined]);
    expect(map({ event: 'delivered' })).toEqual(['delivered', undefined, false, undefined]);
    expect(map({ event: 'bounce', type: 'bounce' })).toEqual([
      'failed',
      'hard_bounce',
      true,
      'sendgrid_bounce',
    ]);
    expect(map({ event: 'bounce', type: 'blocked' })).toEqual([
      'failed',
      'delivery_failed',
      false,
      'sendgrid_blocked',
    ]);
    expect(map({ event: 'dropped', reason: 'Bounced Address' })).toEqual([
      'failed',
      'hard_bounce',
      true,
      'sendgrid_dropped_hard_bounce',
    ]);
    expect(map({ event: 'dropped', reason: 'Spam Reporting Address' })).toEqual([
      'failed',
      'complaint',
      true,
      'sendgrid_dropped_complaint',
    ]);
    expect(map({ event: 'dropped', reason: 'Unsubscribed Address' })).toEqual([
      'failed',
      'complaint',
      true,
      'sendgrid_dropped_complaint',
    ]);
    expect(map({ event: 'dropped', reason: 'Invalid SMTPAPI header' })).toEqual([
      'failed',
      'delivery_failed',
      false,
      'sendgrid_dropped',
    ]);
    expect(map({ event: 'spamreport' })).toEqual(['failed', 'complaint', true, 'sendgrid_spamreport']);
    expect(map({ event: 'unsubscribe' })).toEqual(['delivered', 'complaint', true, 'sendgrid_unsubscribe']);
    expect(map({ event: 'group_unsubscribe' })).toEqual([
      'delivered',
      'complaint',
      true,
      'sendgrid_group_unsubscribe',
    ]);
    expect(map({ event: 'deferred' })).toEqual(['ignore']);
    expect(map({ event: 'delivered', sg_message_id: undefined })).toEqual(['unmatched']);
  });
});
