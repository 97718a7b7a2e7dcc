/**
 * End User Messaging SMS against its simulator (the real SDK client, one attempt per call). No
 * lookup and no status API: what the provider says later arrives as the text events the
 * simulator produces, read through the module's EventBridge facet.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startEumSimulator } from '../../local/eum-simulator/server.ts';
import { type Kit, must, runConformance } from './conformance.ts';
import type { Rewrite } from './null-fields.ts';

const HOLD_MS = 1_500;

async function eumKit(): Promise<Kit> {
  const sim = await startEumSimulator();
  sim.faults.set({ eventDelayMs: 10 });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: sim.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'eum');
  if (!provider) throw new Error('eum is not registered');
  const env = { EUM_ORIGINATION_IDENTITY: 'phone-0123456789abcdef', PROVIDER_TIMEOUT_MS: '600' };
  const base = { config: readConfig(env), env, clock: { now: Date.now } };
  const transport = must(await loadFacet(provider, 'transport', base));
  const inbound = must(await loadFacet(provider, 'inbound', base));
  const text = (transport.facet as TransportFacet).sms?.(transport.context) as SmsTransport;
  const facet = inbound.facet as Extract<InboundFacet, { kind: 'eventbridge' }>;
  const read = facet.create(inbound.context);
  let next = randomBytes(3).readUIntBE(0, 3) % 1_000_000;
  let rewrite: Rewrite | undefined;
  const EVENT: Record<string, (type: string) => boolean> = {
    accepted: (t) => t === 'TEXT_PENDING',
    delivered: (t) => t === 'TEXT_DELIVERED',
    bounced: (t) => t === 'TEXT_INVALID',
    complained: (t) => t === 'TEXT_BLOCKED',
  };
  const eventFor = async (receipt: string, kind: string) => {
    for (let i = 0; i < 200; i++) {
      const hit = sim
        .events()
        .find(
          (e) => e.event.detail.messageId === receipt && EVENT[kind]?.(e.event.detail.eventType as string),
        );
      if (hit) return hit.event;
      await sleep(10);
    }
    throw new Error(`no ${kind} event for ${receipt}`);
  };
  return {
    descriptor: provider.descriptor,
    channel: 'sms',
    advisesDelay: false,
    send: (input) =>
      text.send({
        to: input.to,
        body: input.content,
        correlationId: `${input.noticeId}-sms`,
        idempotencyKey: `${input.noticeId}.sms`,
        deadline: Date.now() + 3_600_000,
      }),
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          sim.faults.set({ failNext: [{ kind: 'error', name: 'ThrottlingException' }] });
          return;
        case 'reject':
          sim.faults.set({
            failNext: [{ kind: 'error', name: 'ValidationException', reason: 'DESTINATION_COUNTRY_BLOCKED' }],
          });
          return;
        case 'timeout_after_accept':
          sim.faults.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_MS }] });
          return;
        case 'timeout_before_accept':
          sim.faults.set({ failNext: [{ kind: 'timeout_before_accept', delayMs: HOLD_MS }] });
          return;
      }
    },
    sentTo: async (destination) =>
      sim
        .messages()
        .filter((m) => m.to === destination)
        .map((m) => m.messageId),
    destination: (kind) => {
      const digits = String(next++).padStart(6, '0').slice(-6);
      return `+1555${digits.slice(0, 2)}${kind === 'bounced' ? '9005' : kind === 'complained' ? '9610' : `${digits.slice(2)}`}`;
    },
    async report(_sent, receipt, kind) {
      const event = await eventFor(receipt, kind);
      return read({
        source: event.source,
        detailType: event['detail-type'],
        time: event.time,
        detail: rewrite ? rewrite(event.detail, 'event') : event.detail,
      });
    },
    async forged(_sent, receipt) {
      const event = await eventFor(receipt, 'delivered');
      // Only AWS puts `aws.sms-voice` events on the bus; the same detail under another source
      // reaches no reader of this module.
      const source = 'aws.sms-voice.forged';
      return facet.sources.includes(source)
        ? read({ source, detailType: event['detail-type'], time: event.time, detail: event.detail })
        : 'unrouted';
    },
    // Its answers are the SDK's to read (SendTextMessage answers one member, MessageId); its
    // text events (the `detail`) are the module's.
    optionalFields: {
      answers: [],
      events: [
        'isFinal',
        'eventTimestamp',
        'isInternationalSend',
        'messageStatusDescription',
        'totalMessagePrice',
        'totalCarrierFee',
      ],
    },
    rewrite(next) {
      rewrite = next;
    },
    close: () => sim.close(),
  };
}

runConformance('eum (End User Messaging SMS simulator)', eumKit);
