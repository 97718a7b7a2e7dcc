/** Resend against its simulator; webhooks are the simulator's own, Svix-signed, caught on loopback. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet, LookupFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailMessage, EmailTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { sign } from '../../lambdas/providers/resend/svix.ts';
import type { ResendEmailTransport } from '../../lambdas/providers/resend/transport.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startResendSimulator } from '../../local/email-simulators/resend.ts';
import { type Kit, must, runConformance, type SendInput } from './conformance.ts';
import { everyPath, nullsIn, type Rewrite, startRewritingProxy } from './null-fields.ts';
import { type Caught, startWebhookSink } from './webhook-sink.ts';

const HOLD_MS = 1_500;

async function resendKit(): Promise<Kit> {
  const sink = await startWebhookSink();
  const resend = await startResendSimulator({ webhookUrl: `${sink.origin}/v1/provider-events/resend` });
  resend.set({ eventDelayMs: 10 });
  const proxy = await startRewritingProxy(resend.baseUrl);
  let rewrite: Rewrite | undefined;
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'resend');
  if (!provider) throw new Error('resend is not registered');
  const env = {
    RESEND_BASE_URL: proxy.origin,
    RESEND_API_KEY: resend.apiKey,
    RESEND_WEBHOOK_SECRET: resend.webhookSecret,
    RESEND_FROM: 'Clinic <notices@example.com>',
    PUBLIC_BASE_URL: sink.origin,
    PROVIDER_TIMEOUT_MS: '600',
  };
  const base = { config: readConfig(env), env, clock: { now: Date.now } };
  const transport = must(await loadFacet(provider, 'transport', base));
  const lookup = must(await loadFacet(provider, 'lookup', base));
  const inbound = must(await loadFacet(provider, 'inbound', base));
  const email = (transport.facet as TransportFacet).email?.(transport.context) as EmailTransport;
  const find = (lookup.facet as LookupFacet)(lookup.context);
  const handle = (inbound.facet as Extract<InboundFacet, { kind: 'webhook' }>).create(inbound.context);
  const messages = new Map<string, EmailMessage>();
  const sent = new Map<string, SendInput>();
  const messageOf = (input: SendInput): EmailMessage => {
    const known = messages.get(input.noticeId);
    if (known) return known;
    const message = {
      to: input.to,
      subject: input.content,
      text: 'Your lab result is ready in the portal.\n',
      html: '<p>Your lab result is ready in the portal.</p>\n',
      correlationId: `${input.noticeId}-email`,
      idempotencyKey: `${input.noticeId}.email`,
    };
    messages.set(input.noticeId, message);
    return message;
  };
  const EVENT: Record<string, string> = {
    accepted: 'email.sent',
    delivered: 'email.delivered',
    bounced: 'email.bounced',
    complained: 'email.complained',
  };
  const eventFor = (receipt: string, kind: string) =>
    sink.find((c) => {
      const body = JSON.parse(c.body) as { type?: string; data?: { email_id?: string } };
      return body.data?.email_id === receipt && body.type === EVENT[kind];
    }, `${EVENT[kind]} for ${receipt}`);
  return {
    descriptor: provider.descriptor,
    channel: 'email',
    advisesDelay: true,
    send: (input) => {
      sent.set(`${input.noticeId}-email`, input);
      return email.send(messageOf(input));
    },
    // What the reconciler adds: the message as the attempt sent it, the deadline, when the key
    // was first used.
    lookup: (query) => {
      const input = sent.get(query.correlationId);
      return find.lookup({
        ...query,
        ...(input ? { replay: messageOf(input) } : {}),
        deadline: Date.now() + 86_400_000,
        keyFirstUsedAt: Date.now() - 1_000,
      });
    },
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          resend.set({
            failNext: [
              {
                kind: 'status',
                status: 429,
                name: 'rate_limit_exceeded',
                retryAfterSeconds: fault.retryAfterSeconds ?? 1,
              },
            ],
          });
          return;
        case 'reject':
          resend.set({ failNext: [{ kind: 'status', status: 422, name: 'invalid_parameter' }] });
          return;
        case 'timeout_after_accept':
          resend.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_MS }] });
          return;
        case 'timeout_before_accept':
          resend.set({ failNext: [{ kind: 'timeout_before_accept', delayMs: HOLD_MS }] });
          return;
      }
    },
    sentTo: async (destination) =>
      resend
        .emails()
        .filter((e) => e.to.includes(destination))
        .map((e) => e.id),
    destination: (kind) => {
      const tag = randomBytes(4).toString('hex');
      return kind === 'bounced'
        ? `bounce+${tag}@example.com`
        : kind === 'complained'
          ? `complaint+${tag}@example.com`
          : `patient+${tag}@example.com`;
    },
    report: async (_sent, receipt, kind) => {
      const caught = await eventFor(receipt, kind);
      return handle(sink.request(rewrite ? resigned(caught, rewrite) : caught));
    },
    async forged(_sent, receipt) {
      const genuine = await eventFor(receipt, 'delivered');
      return handle(
        sink.request(genuine, (name) =>
          name === 'svix-signature'
            ? 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='
            : (genuine.headers[name.toLowerCase()] as string | undefined),
        ),
      );
    },
    optionalFields: {
      // Errors are `{ statusCode, name, message }`; the send answers `{ id }` alone.
      answers: ['message'],
      // `data.tags` carries the correlation, `data.headers` the same as a fallback.
      events: [
        'data.created_at',
        'data.headers',
        'data.bounce.subType',
        'data.bounce.message',
        'data.bounce.diagnosticCode',
      ],
    },
    rewrite(next) {
      rewrite = next;
      proxy.set(next);
    },
    async close() {
      await proxy.close();
      await resend.close();
      await sink.close();
    },
  };

  /** The caught event rewritten, signed again as Resend would (same `svix-id`, now). */
  function resigned(caught: Caught, next: Rewrite): Caught {
    const body = JSON.stringify(next(JSON.parse(caught.body), 'event'));
    const id = String(caught.headers['svix-id']);
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      ...caught,
      body,
      headers: {
        ...caught.headers,
        'svix-timestamp': String(timestamp),
        'svix-signature': sign(resend.webhookSecret, id, timestamp, body),
      },
    };
  }
}

runConformance('resend (Resend simulator)', resendKit);

describe('Resend answers beyond the conformance flows, with null in their optional members', () => {
  it('a batch answer with `errors: null` and a listing with null `bcc`, `cc`, `reply_to`, `last_event` read as absent', async () => {
    // Prepare: the module's transport and lookup through the rewriting proxy.
    const resend = await startResendSimulator({});
    const proxy = await startRewritingProxy(resend.baseUrl);
    try {
      const provider = PROVIDERS.find((p) => p.descriptor.id === 'resend');
      if (!provider) throw new Error('resend is not registered');
      const env = {
        RESEND_BASE_URL: proxy.origin,
        RESEND_API_KEY: resend.apiKey,
        RESEND_FROM: 'Clinic <notices@example.com>',
        PROVIDER_TIMEOUT_MS: '2000',
      };
      const base = { config: readConfig(env), env, clock: { now: Date.now } };
      const transport = must(await loadFacet(provider, 'transport', base));
      const lookup = must(await loadFacet(provider, 'lookup', base));
      const email = (transport.facet as TransportFacet).email?.(transport.context) as ResendEmailTransport;
      const find = (lookup.facet as LookupFacet)(lookup.context);
      const fields = {
        answers: ['errors', 'data[].bcc', 'data[].cc', 'data[].reply_to', 'data[].last_event', 'has_more'],
        events: [],
      };
      const fed = new Set<string>();
      proxy.set(nullsIn(fields, fed));
      const tag = randomBytes(4).toString('hex');
      const message = (n: number): EmailMessage => ({
        to: `patient+${tag}-${n}@example.com`,
        subject: `Your lab result is ready (${tag}-${n})`,
        text: 'Your lab result is ready in the portal.\n',
        correlationId: `ntc_${tag}${n}-email`,
        idempotencyKey: `ntc_${tag}${n}.email`,
      });
      const startedAt = Date.now();

      // Act
      const outcomes = await email.sendBatch({
        idempotencyKey: `batch-${tag}`,
        messages: [message(1), message(2)],
      });
      // Past the key's replay window the lookup lists: the listing is what is read.
      const verdict = await find.lookup({
        correlationId: message(2).correlationId,
        destination: message(2).to,
        content: message(2).subject,
        attemptStartedAt: startedAt,
        attemptEndedAt: Date.now(),
        keyFirstUsedAt: startedAt - 2 * 86_400_000,
      });

      // Assess
      expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted']);
      const second = outcomes[1];
      expect(verdict).toMatchObject({
        kind: 'found',
        receiptId: second?.kind === 'accepted' ? second.receiptId : 'none',
      });
      expect([...fed].sort()).toEqual(everyPath(fields).sort());
    } finally {
      await proxy.close();
      await resend.close();
    }
  });
});
