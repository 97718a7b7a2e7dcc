/** SES v2 against aws-ses-v2-local (faults from the fault proxy in front of it). */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startFaultProxy } from '../../local/fault-proxy.ts';
import { sesEventsFor } from '../../local/ses/event-feeder.ts';
import { readSesStore, startSesLocal } from '../../local/ses/server.ts';
import { type Kit, must, runConformance } from './conformance.ts';
import type { Rewrite } from './null-fields.ts';

const HOLD_MS = 1_500;

async function sesKit(): Promise<Kit> {
  const ses = await startSesLocal();
  const proxy = await startFaultProxy({ upstream: ses.endpoint });
  // The SDK reads its endpoint, region and credentials from the environment, as in the stack.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SESV2: proxy.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'ses');
  if (!provider) throw new Error('ses is not registered');
  const env = { SES_FROM_ADDRESS: 'notices@example.com', PROVIDER_TIMEOUT_MS: '600' };
  const base = { config: readConfig(env), env, clock: { now: Date.now } };
  const transport = must(await loadFacet(provider, 'transport', base));
  const inbound = must(await loadFacet(provider, 'inbound', base));
  const email = (transport.facet as TransportFacet).email?.(transport.context) as EmailTransport;
  const facet = inbound.facet as Extract<InboundFacet, { kind: 'eventbridge' }>;
  const read = facet.create(inbound.context);
  const tag = randomBytes(4).toString('hex');
  let n = 0;
  let rewrite: Rewrite | undefined;
  const emailOf = async (receipt: string) => {
    const stored = (await readSesStore(ses.endpoint)).find((e) => e.messageId === receipt);
    if (!stored) throw new Error('no such email in the store');
    return stored;
  };
  // SES's word that it holds a mail: the configuration set publishes no Send (descriptor.ts
  // SES_PUBLISHED_EVENTS), so after a timed-out SendEmail its Delivery is the first to say so.
  const EVENT: Record<string, string> = {
    accepted: 'Delivery',
    delivered: 'Delivery',
    bounced: 'Bounce',
    complained: 'Complaint',
  };
  return {
    descriptor: provider.descriptor,
    channel: 'email',
    advisesDelay: false,
    send: (input) =>
      email.send({
        to: input.to,
        subject: input.content,
        text: input.content,
        correlationId: `${input.noticeId}-email`,
        idempotencyKey: `${input.noticeId}.email`,
      }),
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          proxy.queue.push({
            kind: 'status',
            status: 429,
            headers: { 'x-amzn-errortype': 'TooManyRequestsException' },
            body: JSON.stringify({ message: 'Maximum sending rate exceeded.' }),
          });
          return;
        case 'reject':
          proxy.queue.push({
            kind: 'status',
            status: 400,
            headers: { 'x-amzn-errortype': 'MessageRejected' },
            body: JSON.stringify({ message: 'Email address is not verified.' }),
          });
          return;
        case 'timeout_after_accept':
          proxy.queue.push({ kind: 'timeout_after_accept', delayMs: HOLD_MS });
          return;
        case 'timeout_before_accept':
          proxy.queue.push({ kind: 'timeout_before_accept', delayMs: HOLD_MS });
          return;
      }
    },
    async sentTo(destination) {
      return (await readSesStore(ses.endpoint))
        .filter((e) => e.destination.to.includes(destination))
        .map((e) => e.messageId);
    },
    destination: (kind) =>
      `${kind === 'delivered' ? 'success' : kind === 'bounced' ? 'bounce' : 'complaint'}+${tag}-${n++}@simulator.amazonses.com`,
    async report(_sent, receipt, kind) {
      // What SES would publish for this mail (the mailbox simulator's behaviour), through EventBridge.
      const events = sesEventsFor(await emailOf(receipt));
      const event = events.find((e) => (e.detail as { eventType: string }).eventType === EVENT[kind]);
      if (!event) throw new Error(`SES publishes no ${EVENT[kind]} for this address`);
      return read({
        source: event.source,
        detailType: event['detail-type'],
        time: event.time,
        detail: rewrite ? rewrite(event.detail, 'event') : event.detail,
      });
    },
    async forged(_sent, receipt) {
      const [event] = sesEventsFor(await emailOf(receipt));
      if (!event) throw new Error('no event');
      // Only AWS puts `aws.ses` events on the bus (the rule matches that source); the same event
      // under any other source reaches no reader of this module (the handler drops it, counted).
      const source = 'aws.ses.forged';
      return facet.sources.includes(source)
        ? read({ source, detailType: event['detail-type'], time: event.time, detail: event.detail })
        : 'unrouted';
    },
    // Its answers are the SDK's to read (SendEmail answers one member, MessageId); its events
    // (configuration-set publishing, the `detail`) are the module's.
    optionalFields: {
      answers: [],
      events: [
        'mail.timestamp',
        'mail.headers',
        'mail.headersTruncated',
        'bounce.bounceSubType',
        'bounce.timestamp',
        'bounce.feedbackId',
        'complaint.complaintFeedbackType',
        'complaint.complaintSubType',
        'complaint.timestamp',
        'delivery.timestamp',
        'delivery.smtpResponse',
      ],
    },
    rewrite(next) {
      rewrite = next;
    },
    async close() {
      await proxy.close();
      await ses.close();
    },
  };
}

runConformance('ses (aws-ses-v2-local)', sesKit);
