/**
 * The API document says what providers really post (issue 21): for each provider with a webhook
 * (Twilio, Resend, SendGrid), the deliveries its simulator signs and posts — real shapes, real
 * signatures, caught on loopback — are validated against `POST /v1/provider-events/<id>` in
 * docs/openapi.json: media type, every required header, query parameters and the body. Then the
 * provider-events function answers each of them, the same without its signature headers, and
 * with a forged signature, and every answer it gives is one the operation documents.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { createProviderEventsHandler } from '../../lambdas/handlers/provider-events.ts';
import type { TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailTransport, SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { providerEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startResendSimulator } from '../../local/email-simulators/resend.ts';
import { startSendGridSimulator } from '../../local/email-simulators/sendgrid.ts';
import { startSmsSimulator } from '../../local/sms-simulator/server.ts';
import { apiEvent } from '../helpers/api-events.ts';
import { fakeWorld } from '../helpers/fakes.ts';
import { type Caught, startWebhookSink, type WebhookSink } from '../providers/webhook-sink.ts';

interface Parameter {
  readonly name: string;
  readonly in: 'header' | 'query';
  readonly required: boolean;
  readonly schema: object;
}

interface Operation {
  readonly parameters: readonly Parameter[];
  readonly requestBody: { readonly content: Readonly<Record<string, { readonly schema: object }>> };
  readonly responses: Readonly<Record<string, unknown>>;
}

const DOCUMENT = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
) as { paths: Record<string, { post?: Operation }> };
const ajv = new Ajv2020({ strict: false, allErrors: true });
const FROM = '+15005550006';

function operationOf(provider: string): Operation {
  const operation = DOCUMENT.paths[`/v1/provider-events/${provider}`]?.post;
  if (!operation) throw new Error(`docs/openapi.json has no POST /v1/provider-events/${provider}`);
  return operation;
}

/** What the document finds wrong with a caught delivery: [] when it describes it. */
function violations(operation: Operation, caught: Caught): string[] {
  const problems: string[] = [];
  const url = new URL(caught.url, 'http://sink.test');
  for (const p of operation.parameters) {
    const value =
      p.in === 'header'
        ? (caught.headers[p.name.toLowerCase()] as string | undefined)
        : (url.searchParams.get(p.name) ?? undefined);
    if (value === undefined) {
      if (p.required) problems.push(`${p.in} ${p.name} is required`);
      continue;
    }
    if (!ajv.validate(p.schema, value)) problems.push(`${p.in} ${p.name}: ${ajv.errorsText()}`);
  }
  const contentType =
    String(caught.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() ?? '';
  const media = operation.requestBody.content[contentType];
  if (!media) return [...problems, `content-type ${contentType} is not documented`];
  const body =
    contentType === 'application/x-www-form-urlencoded'
      ? Object.fromEntries(new URLSearchParams(caught.body))
      : (JSON.parse(caught.body) as unknown);
  if (!ajv.validate(media.schema, body)) problems.push(`body: ${ajv.errorsText()}`);
  return problems;
}

interface Provider {
  readonly id: 'twilio' | 'resend' | 'sendgrid';
  readonly env: Record<string, string>;
  /** Sends through the module's transport until the simulator has posted every kind it posts. */
  deliveries(): Promise<Caught[]>;
  /** The header carrying the signature. */
  readonly signatureHeader: string;
  /** A signature of the right form that verifies nothing. */
  readonly forgedSignature: string;
  close(): Promise<void>;
}

async function facetOf<F extends 'transport' | 'inbound'>(id: string, facet: F, env: Record<string, string>) {
  const provider = PROVIDERS.find((p) => p.descriptor.id === id);
  if (!provider) throw new Error(`${id} is not registered`);
  const loaded = await loadFacet(provider, facet, { config: readConfig(env), env, clock: { now: Date.now } });
  if (!loaded) throw new Error(`${id} has no ${facet}`);
  return loaded;
}

async function transportOf(id: string, env: Record<string, string>) {
  const loaded = await facetOf(id, 'transport', env);
  return { facet: loaded.facet as TransportFacet, context: loaded.context };
}

const NOTICE = deriveNoticeId('lab-result-ready', 'evt_webhook_openapi', 'pat_1042');

async function twilio(sink: WebhookSink): Promise<Provider> {
  const sms = await startSmsSimulator({ fromNumbers: [FROM], statusDelayMs: 10 });
  sms.faults.set({ deliveryFailures: [{ toSuffix: '9005', status: 'undelivered', errorCode: 30005 }] });
  const env = {
    TWILIO_BASE_URL: sms.baseUrl,
    TWILIO_ACCOUNT_SID: sms.accountSid,
    TWILIO_AUTH_TOKEN: sms.authToken,
    TWILIO_FROM: FROM,
    PUBLIC_BASE_URL: sink.origin,
  };
  const { facet, context } = await transportOf('twilio', env);
  const text = facet.sms?.(context) as SmsTransport;
  return {
    id: 'twilio',
    env,
    signatureHeader: 'x-twilio-signature',
    forgedSignature: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    async deliveries() {
      for (const to of ['+15557770001', '+15557779005']) {
        const outcome = await text.send({
          to,
          body: 'Your lab result is ready.',
          correlationId: `${NOTICE}-sms`,
          idempotencyKey: `${NOTICE}.sms`,
        });
        expect(outcome.kind).toBe('accepted');
      }
      for (const status of ['sent', 'delivered', 'undelivered']) {
        await sink.find((c) => new URLSearchParams(c.body).get('MessageStatus') === status, status);
      }
      return sink.caught.filter((c) => c.url.startsWith('/v1/provider-events/twilio'));
    },
    close: () => sms.close(),
  };
}

async function resend(sink: WebhookSink): Promise<Provider> {
  const sim = await startResendSimulator({ webhookUrl: `${sink.origin}/v1/provider-events/resend` });
  sim.set({ eventDelayMs: 10 });
  const env = {
    RESEND_BASE_URL: sim.baseUrl,
    RESEND_API_KEY: sim.apiKey,
    RESEND_WEBHOOK_SECRET: sim.webhookSecret,
    RESEND_FROM: 'Clinic <notices@example.com>',
    PUBLIC_BASE_URL: sink.origin,
  };
  const { facet, context } = await transportOf('resend', env);
  const email = facet.email?.(context) as EmailTransport;
  return {
    id: 'resend',
    env,
    signatureHeader: 'svix-signature',
    forgedSignature: 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    async deliveries() {
      for (const to of ['patient@example.com', 'bounce@example.com', 'complaint@example.com']) {
        await email.send({
          to,
          subject: 'Your lab result is ready',
          text: 'Your lab result is ready in the portal.\n',
          correlationId: `${NOTICE}-email`,
          idempotencyKey: `${NOTICE}.email.${to}`,
        });
      }
      for (const type of ['email.sent', 'email.delivered', 'email.bounced', 'email.complained']) {
        await sink.find((c) => (JSON.parse(c.body) as { type?: string }).type === type, type);
      }
      return sink.caught.filter((c) => c.url.startsWith('/v1/provider-events/resend'));
    },
    close: () => sim.close(),
  };
}

async function sendgrid(sink: WebhookSink): Promise<Provider> {
  const sim = await startSendGridSimulator({ webhookUrl: `${sink.origin}/v1/provider-events/sendgrid` });
  sim.set({ eventDelayMs: 10 });
  const env = {
    SENDGRID_BASE_URL: sim.baseUrl,
    SENDGRID_API_KEY: sim.apiKey,
    SENDGRID_WEBHOOK_PUBLIC_KEY: sim.publicKey,
    SENDGRID_FROM: 'notices@example.com',
    PUBLIC_BASE_URL: sink.origin,
  };
  const { facet, context } = await transportOf('sendgrid', env);
  const email = facet.email?.(context) as EmailTransport;
  const events = () =>
    sink.caught
      .filter((c) => c.url.startsWith('/v1/provider-events/sendgrid'))
      .flatMap((c) => JSON.parse(c.body) as { event?: string }[]);
  return {
    id: 'sendgrid',
    env,
    signatureHeader: 'x-twilio-email-event-webhook-signature',
    // SendGrid's published test vector's signature: genuine, of another body under another key.
    forgedSignature:
      'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=',
    async deliveries() {
      for (const to of ['patient@example.com', 'bounce@example.com', 'complaint@example.com']) {
        await email.send({
          to,
          subject: 'Your lab result is ready',
          text: 'Your lab result is ready in the portal.\n',
          correlationId: `${NOTICE}-email`,
          idempotencyKey: `${NOTICE}.email`,
        });
      }
      for (const event of ['processed', 'delivered', 'bounce', 'spamreport']) {
        await sink.find(() => events().some((e) => e.event === event), event);
      }
      return sink.caught.filter((c) => c.url.startsWith('/v1/provider-events/sendgrid'));
    },
    close: () => sim.close(),
  };
}

describe.each([
  ['twilio', twilio],
  ['resend', resend],
  ['sendgrid', sendgrid],
] as const)('POST /v1/provider-events/%s as the provider really posts it', (id, start) => {
  let sink: WebhookSink;
  let provider: Provider;
  let caught: Caught[];

  beforeAll(async () => {
    sink = await startWebhookSink();
    provider = await start(sink);
    caught = await provider.deliveries();
  });

  afterAll(async () => {
    await provider?.close();
    await sink?.close();
  });

  it('every signed delivery of the simulator — headers, query and body — is what docs/openapi.json describes', () => {
    const operation = operationOf(id);
    expect(caught.length).toBeGreaterThan(0);
    for (const delivery of caught) expect(violations(operation, delivery)).toEqual([]);
    // The check can fail: without its signature header a delivery is not what the document describes.
    const [first] = caught as [Caught];
    const unsigned = { ...first, headers: { ...first.headers, [provider.signatureHeader]: undefined } };
    expect(violations(operation, unsigned)).toEqual([
      expect.stringMatching(new RegExp(`^header ${provider.signatureHeader} is required$`, 'i')),
    ]);
  });

  it('the function answers each delivery, unsigned and forged, only with codes the operation documents', async () => {
    const operation = operationOf(id);
    const config = readConfig(provider.env);
    const runtime = providerEventsRuntime(
      config,
      { store: fakeWorld().store, clock: { now: Date.now }, timing: { leaseMs: 60_000 } },
      [await facetOf(id, 'inbound', provider.env)],
    );
    const handler = createProviderEventsHandler(async () => runtime);
    const post = async (delivery: Caught, headers: Record<string, string | undefined>) => {
      const url = new URL(delivery.url, 'http://sink.test');
      const answer = await handler(
        apiEvent({
          method: 'POST',
          path: url.pathname,
          query: url.search.slice(1),
          body: delivery.body,
          headers,
        }),
      );
      return String(answer.statusCode);
    };
    const headersOf = (delivery: Caught) =>
      Object.fromEntries(
        Object.entries(delivery.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value[0] : value,
        ]),
      );
    const operationCodes = Object.keys(operation.responses);
    const answers = new Set<string>();
    for (const delivery of caught) {
      const headers = headersOf(delivery);
      expect(await post(delivery, headers)).toBe('200');
      answers.add('200');
      const unsigned = await post(delivery, { ...headers, [provider.signatureHeader]: undefined });
      const forged = {
        ...delivery,
        headers: { ...delivery.headers, [provider.signatureHeader]: provider.forgedSignature },
      };
      // A forged delivery is one the document describes, and the function refuses it.
      expect(violations(operation, forged)).toEqual([]);
      const refused = await post(delivery, {
        ...headers,
        [provider.signatureHeader]: provider.forgedSignature,
      });
      expect([unsigned, refused].every((status) => status === '401' || status === '403')).toBe(true);
      answers.add(unsigned);
      answers.add(refused);
    }
    for (const status of answers) expect(operationCodes, status).toContain(status);
  });
});

describe('a provider this deployment does not take', () => {
  it('answers 404, as each webhook operation documents', async () => {
    const config = readConfig({ PUBLIC_BASE_URL: 'https://notices.example.test' });
    const runtime = providerEventsRuntime(
      config,
      { store: fakeWorld().store, clock: { now: Date.now }, timing: { leaseMs: 60_000 } },
      [],
    );
    const handler = createProviderEventsHandler(async () => runtime);
    for (const id of ['twilio', 'resend', 'sendgrid']) {
      const answer = await handler(
        apiEvent({ method: 'POST', path: `/v1/provider-events/${id}`, body: '{}', headers: {} }),
      );
      expect(answer.statusCode).toBe(404);
      expect(Object.keys(operationOf(id).responses)).toContain('404');
    }
  });
});
