/**
 * SendGrid against its simulator, with the Email Activity add-on (its lookup); Event Webhook
 * deliveries are the simulator's own, ECDSA-signed, caught on loopback.
 */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet, LookupFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startSendGridSimulator } from '../../local/email-simulators/sendgrid.ts';
import { type Kit, must, runConformance } from './conformance.ts';
import { type Rewrite, startRewritingProxy } from './null-fields.ts';
import { startWebhookSink } from './webhook-sink.ts';

const HOLD_MS = 1_500;

async function sendgridKit(): Promise<Kit> {
  const sink = await startWebhookSink();
  const sendgrid = await startSendGridSimulator({
    webhookUrl: `${sink.origin}/v1/provider-events/sendgrid`,
    activity: true,
  });
  sendgrid.set({ eventDelayMs: 10 });
  const proxy = await startRewritingProxy(sendgrid.baseUrl);
  let rewrite: Rewrite | undefined;
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'sendgrid');
  if (!provider) throw new Error('sendgrid is not registered');
  const env = {
    SENDGRID_BASE_URL: proxy.origin,
    SENDGRID_API_KEY: sendgrid.apiKey,
    SENDGRID_WEBHOOK_PUBLIC_KEY: sendgrid.publicKey,
    SENDGRID_FROM: 'notices@example.com',
    SENDGRID_EMAIL_ACTIVITY: 'true',
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
  const EVENT: Record<string, string> = {
    accepted: 'processed',
    delivered: 'delivered',
    bounced: 'bounce',
    complained: 'spamreport',
  };
  /** The simulator's own event for the receipt, from a caught delivery, delivered on its own. */
  const deliveryOf = async (receipt: string, kind: string) => {
    let event: unknown;
    await sink.find((c) => {
      const events = JSON.parse(c.body) as { event?: string; sg_message_id?: string }[];
      event = events.find((e) => e.event === EVENT[kind] && e.sg_message_id?.startsWith(`${receipt}.`));
      return event !== undefined;
    }, `${EVENT[kind]} for ${receipt}`);
    const { body, headers } = sendgrid.signedDelivery(
      (rewrite ? rewrite([event], 'event') : [event]) as unknown[],
    );
    return {
      url: `${sink.origin}/v1/provider-events/sendgrid`,
      header: (name: string) => headers[name.toLowerCase()],
      body,
      contentType: 'application/json',
    };
  };
  return {
    descriptor: provider.descriptor,
    channel: 'email',
    advisesDelay: true,
    send: (input) =>
      email.send({
        to: input.to,
        subject: input.content,
        text: 'Your lab result is ready in the portal.\n',
        correlationId: `${input.noticeId}-email`,
        idempotencyKey: `${input.noticeId}.email`,
      }),
    lookup: (query) => find.lookup(query),
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          sendgrid.set({
            failNext: [{ kind: 'status', status: 429, retryAfterSeconds: fault.retryAfterSeconds ?? 1 }],
          });
          return;
        case 'reject':
          sendgrid.set({ failNext: [{ kind: 'status', status: 400 }] });
          return;
        case 'timeout_after_accept':
          sendgrid.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_MS }] });
          return;
        case 'timeout_before_accept':
          sendgrid.set({ failNext: [{ kind: 'timeout_before_accept', delayMs: HOLD_MS }] });
          return;
      }
    },
    sentTo: async (destination) =>
      sendgrid
        .messages()
        .filter((m) => m.to === destination)
        .map((m) => m.xMessageId),
    destination: (kind) => {
      const tag = randomBytes(4).toString('hex');
      return kind === 'bounced'
        ? `bounce+${tag}@example.com`
        : kind === 'complained'
          ? `complaint+${tag}@example.com`
          : `patient+${tag}@example.com`;
    },
    report: async (_sent, receipt, kind) => handle(await deliveryOf(receipt, kind)),
    async forged(_sent, receipt) {
      const genuine = await deliveryOf(receipt, 'delivered');
      const forged = sendgrid.signedDelivery([{ event: 'delivered', forged: true }]);
      // A genuine signature of another body: the signature covers the body it was made for.
      return handle({
        ...genuine,
        header: (name) =>
          name.toLowerCase() === 'x-twilio-email-event-webhook-signature'
            ? forged.headers['x-twilio-email-event-webhook-signature']
            : genuine.header(name),
      });
    },
    optionalFields: {
      // Errors are `{ errors: [{ message, field, help }] }`; a 202 has no body.
      answers: ['errors[].field', 'errors[].help'],
      // Events are a batch (an array); these members depend on the event and the account.
      events: [
        '[].smtp-id',
        '[].category',
        '[].status',
        '[].reason',
        '[].type',
        '[].response',
        '[].attempt',
        '[].ip',
        '[].tls',
        '[].asm_group_id',
      ],
    },
    rewrite(next) {
      rewrite = next;
      proxy.set(next);
    },
    async close() {
      await proxy.close();
      await sendgrid.close();
      await sink.close();
    },
  };
}

runConformance('sendgrid (SendGrid simulator, Email Activity add-on)', sendgridKit);
