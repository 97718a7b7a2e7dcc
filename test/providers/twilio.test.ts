/** Twilio against the SMS simulator; callbacks are the simulator's own, signed, caught on loopback. */

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../lambdas/edge/config.ts';
import type {
  InboundFacet,
  InboundRequest,
  LookupFacet,
  StatusFacet,
  TransportFacet,
} from '../../lambdas/ports/provider.port.ts';
import type { SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startSmsSimulator } from '../../local/sms-simulator/server.ts';
import { type Kit, must, runConformance } from './conformance.ts';
import { startRewritingProxy } from './null-fields.ts';

const FROM = '+15005550006';
const HOLD_MS = 1_500;

interface Caught {
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

async function twilioKit(): Promise<Kit> {
  const caught: Caught[] = [];
  const sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      caught.push({
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const publicBaseUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const sms = await startSmsSimulator({
    fromNumbers: [FROM],
    statusDelayMs: 10,
  });
  sms.faults.set({
    deliveryFailures: [
      { toSuffix: '9005', status: 'undelivered', errorCode: 30005 },
      { toSuffix: '9610', status: 'failed', errorCode: 21610 },
    ],
  });
  const proxy = await startRewritingProxy(sms.baseUrl);
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'twilio');
  if (!provider) throw new Error('twilio is not registered');
  const env = {
    TWILIO_BASE_URL: proxy.origin,
    TWILIO_ACCOUNT_SID: sms.accountSid,
    TWILIO_AUTH_TOKEN: sms.authToken,
    TWILIO_FROM: FROM,
    PUBLIC_BASE_URL: publicBaseUrl,
    PROVIDER_TIMEOUT_MS: '600',
  };
  const base = { config: readConfig(env), env, clock: { now: Date.now } };
  const transport = must(await loadFacet(provider, 'transport', base));
  const lookup = must(await loadFacet(provider, 'lookup', base));
  const inbound = must(await loadFacet(provider, 'inbound', base));
  const statusFacet = must(await loadFacet(provider, 'status', base));
  const status = (statusFacet.facet as StatusFacet)(statusFacet.context);
  const text = (transport.facet as TransportFacet).sms?.(transport.context) as SmsTransport;
  const find = (lookup.facet as LookupFacet)(lookup.context);
  const facet = inbound.facet as Extract<InboundFacet, { kind: 'webhook' }>;
  const handle = facet.create(inbound.context);
  let next = 1_000_000 + (randomBytes(3).readUIntBE(0, 3) % 7_000_000);
  const STATUS: Record<string, string[]> = {
    accepted: ['sent'],
    delivered: ['delivered'],
    bounced: ['undelivered'],
    complained: ['failed'],
  };
  const callbackFor = async (receipt: string, kind: string): Promise<InboundRequest> => {
    for (let i = 0; i < 200; i++) {
      const hit = caught.find((c) => {
        const params = new URLSearchParams(c.body);
        return (
          params.get('MessageSid') === receipt && STATUS[kind]?.includes(params.get('MessageStatus') ?? '')
        );
      });
      if (hit) {
        return {
          url: `${publicBaseUrl}${hit.url}`,
          header: (name) => {
            const v = hit.headers[name.toLowerCase()];
            return Array.isArray(v) ? v[0] : v;
          },
          body: hit.body,
          contentType: hit.headers['content-type'],
        };
      }
      await sleep(20);
    }
    throw new Error(`no ${kind} callback for ${receipt}`);
  };
  return {
    descriptor: provider.descriptor,
    channel: 'sms',
    advisesDelay: true,
    send: (input) =>
      text.send({
        to: input.to,
        body: input.content,
        correlationId: `${input.noticeId}-sms`,
        idempotencyKey: `${input.noticeId}.sms`,
      }),
    lookup: (query) => find.lookup(query),
    status: (sent, receipt) =>
      status.pull({
        ref: { noticeId: sent.noticeId, channel: 'sms' },
        receiptId: receipt,
        acceptedAt: Date.now(),
      }),
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          sms.faults.set({
            failNext: [{ kind: 'status', status: 429, retryAfterSeconds: fault.retryAfterSeconds ?? 1 }],
          });
          return;
        case 'reject':
          sms.faults.set({ failNext: [{ kind: 'status', status: 400, code: 21211 }] });
          return;
        case 'timeout_after_accept':
          sms.faults.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: HOLD_MS }] });
          return;
        case 'timeout_before_accept':
          sms.faults.set({ failNext: [{ kind: 'timeout_before_accept', delayMs: HOLD_MS }] });
          return;
      }
    },
    sentTo: async (destination) =>
      sms
        .messages()
        .filter((m) => m.to === destination)
        .map((m) => m.sid),
    destination: (kind) => {
      let digits = String(next++).slice(-7);
      const body = `+1555${digits.slice(0, 3)}`;
      if (kind === 'bounced') return `${body}9005`;
      if (kind === 'complained') return `${body}9610`;
      // Every digit of the counter, so that no two destinations of a kit are the same; never one
      // of the simulator's failing suffixes.
      while (/(9005|9610|0000)$/.test(digits)) digits = String(next++).slice(-7);
      return `+1555${digits}`;
    },
    report: async (_sent, receipt, kind) => handle(await callbackFor(receipt, kind)),
    async forged(_sent, receipt) {
      const genuine = await callbackFor(receipt, 'delivered');
      return handle({
        ...genuine,
        header: (name) =>
          name === 'x-twilio-signature' ? 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' : genuine.header(name),
      });
    },
    optionalFields: {
      // A message (sent, fetched, listed), a page of the listing, an error.
      answers: [
        'error_code',
        'error_message',
        'date_sent',
        'messaging_service_sid',
        'price',
        'price_unit',
        'messages[].error_code',
        'messages[].error_message',
        'messages[].date_sent',
        'messages[].price',
        'next_page_uri',
        'previous_page_uri',
        'more_info',
      ],
      // Status callbacks are form-encoded: a member is sent or not, never null.
      events: [],
    },
    rewrite: (rewrite) => proxy.set(rewrite),
    async close() {
      await proxy.close();
      await sms.close();
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    },
  };
}

runConformance('twilio (SMS simulator)', twilioKit);
