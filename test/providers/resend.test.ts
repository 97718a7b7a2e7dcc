/** Resend against its simulator; webhooks are the simulator's own, Svix-signed, caught on loopback. */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet, LookupFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailMessage, EmailTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startResendSimulator } from '../../local/email-simulators/resend.ts';
import { type Kit, must, runConformance, type SendInput } from './conformance.ts';
import { startWebhookSink } from './webhook-sink.ts';

const HOLD_MS = 1_500;

async function resendKit(): Promise<Kit> {
  const sink = await startWebhookSink();
  const resend = await startResendSimulator({ webhookUrl: `${sink.origin}/v1/provider-events/resend` });
  resend.set({ eventDelayMs: 10 });
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'resend');
  if (!provider) throw new Error('resend is not registered');
  const env = {
    RESEND_BASE_URL: resend.baseUrl,
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
    report: async (_sent, receipt, kind) => handle(sink.request(await eventFor(receipt, kind))),
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
    async close() {
      await resend.close();
      await sink.close();
    },
  };
}

runConformance('resend (Resend simulator)', resendKit);
