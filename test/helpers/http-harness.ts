import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { MemoryNoticeArchive } from '../../lambdas/adapters/memory/memory-notice-archive.ts';
import { findRoute } from '../../lambdas/contract/routes.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import type { TemplateCatalog } from '../../lambdas/domain/template.ts';
import { type CallerDirectory, callerDirectory } from '../../lambdas/edge/caller.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { HttpRuntime } from '../../lambdas/handlers/http/route.ts';
import { createHttpApi } from '../../lambdas/handlers/http/router.ts';
import { createProviderEventsHandler } from '../../lambdas/handlers/provider-events.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import type { SmsMessage, SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { computeTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import type { Dependencies } from '../../lambdas/use-cases/dependencies.ts';
import { loadInbound, providerEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { LOCAL_AUDITOR_ROLE, LOCAL_OPERATOR_ROLE } from '../../local/callers.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { type ApiEventInput, apiEvent, responseJson } from './api-events.ts';
import { T0, TEST_KEY } from './factories.ts';

/**
 * The HTTP API in-process: the http function and the provider-events function (webhooks) on one
 * in-memory ledger, with fake transports around the real catalog, sealer, use cases, routes and
 * the real Twilio inbound module (handler tests, the fuzz layer). Paths route as the API's two
 * integrations do (lambdas/contract/routes.ts).
 */
export const PUBLIC_BASE_URL = 'https://notices.example.test';
export const AUTH_TOKEN = 'test-twilio-auth-token';
export const SID = `SM${'0123456789abcdef'.repeat(2)}`;
/** What the provider-events function is configured with in these tests. */
export const EVENTS_ENV = {
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  PUBLIC_BASE_URL,
  SES_FROM_ADDRESS: 'n@example.com',
};

/**
 * The role map of these tests: the local stack's (the local operator and auditor roles, and a
 * request without IAM context taken for the operator: test/helpers/api-events.ts `caller`), and
 * the operators the handler tests sign as (test/helpers/ledger-properties.ts `TEST_ACTOR`'s role,
 * an IAM user).
 */
export const TEST_CALLERS: CallerDirectory = callerDirectory({
  OPERATOR_PRINCIPALS: [
    LOCAL_OPERATOR_ROLE,
    'arn:aws:iam::123456789012:role/NoticeLedgerOperator',
    'arn:aws:iam::123456789012:user/ops-lead',
  ],
  AUDITOR_PRINCIPALS: [LOCAL_AUDITOR_ROLE],
  UNSIGNED_CALLER_PRINCIPAL: LOCAL_OPERATOR_ROLE,
});

export interface Reply {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  readonly json: any;
  readonly raw: APIGatewayProxyStructuredResultV2;
}

export class FakeSmsTransport implements SmsTransport {
  readonly provider = 'twilio';
  next: ProviderOutcome = { kind: 'accepted', receiptId: SID };
  readonly sent: SmsMessage[] = [];
  async send(message: SmsMessage): Promise<ProviderOutcome> {
    this.sent.push(message);
    return this.next;
  }
}

/** A runtime of in-memory and fake adapters around the real catalog, sealer and use cases. */
export function harness(
  options: {
    store?: MemoryLedgerStore;
    archive?: MemoryNoticeArchive;
    catalog?: TemplateCatalog;
    callers?: CallerDirectory;
    /** The channels this deployment sends (default both); `<CHANNEL>_PROVIDER=none` leaves one out. */
    configuredChannels?: readonly ('email' | 'sms')[];
  } = {},
) {
  const store = options.store ?? new MemoryLedgerStore();
  const archive = options.archive ?? new MemoryNoticeArchive();
  const enqueued: IntentRef[] = [];
  const clock = { now: T0 };
  const sms = new FakeSmsTransport();
  const deps: Dependencies = {
    store,
    keyRecords: archive,
    archivedRows: archive,
    queue: {
      enqueue: async (refs) => {
        enqueued.push(...refs);
      },
    },
    scheduler: { scheduleAttempt: async () => undefined },
    escalations: { publish: async () => undefined },
    sealer: new AesGcmEnvelopeSealer(new StaticDataKeySource(new Uint8Array(32).fill(7))),
    catalog: options.catalog ?? templateCatalog,
    clock: { now: () => clock.now },
    random: () => 0.5,
    fingerprintKey: TEST_KEY,
    timing: { leaseMs: 60_000 },
    retryPolicy: { baseMs: 1_000, capMs: 900_000, maxAttempts: 8 },
    defaultDeadlineMs: 86_400_000,
    configuredChannels: options.configuredChannels ?? ['email', 'sms'],
    transports: { sms },
    workerId: 'test-worker',
  };
  const runtime: HttpRuntime = { deps };
  const api = createHttpApi(
    async () => runtime,
    () => options.callers ?? TEST_CALLERS,
  );
  const events = createProviderEventsHandler(async () => {
    const config = readConfig(EVENTS_ENV);
    return providerEventsRuntime(
      config,
      { store, clock: deps.clock, timing: deps.timing },
      await loadInbound(config, EVENTS_ENV),
    );
  });
  const bodies: string[] = [];
  async function call(input: ApiEventInput | APIGatewayProxyEventV2): Promise<Reply> {
    const event = 'requestContext' in input ? input : apiEvent(input);
    const raw =
      findRoute(event.rawPath || '/')?.route.function === 'providerEvents'
        ? await events(event)
        : await api(event);
    bodies.push(raw.body ?? '');
    return { status: raw.statusCode ?? 0, json: responseJson(raw), raw };
  }
  return { store, archive, enqueued, clock, sms, deps, runtime, call, events, bodies };
}

export type Harness = ReturnType<typeof harness>;

export const TWILIO_PATH = '/v1/provider-events/twilio';

/** A Twilio status callback to the harness (signed for PUBLIC_BASE_URL unless `signature` says otherwise). */
export function twilioCallback(
  params: Record<string, string>,
  options: { ref?: string | undefined; signature?: string | null } = {},
): ApiEventInput {
  const query = options.ref === undefined ? '' : `ref=${options.ref}`;
  const url = `${PUBLIC_BASE_URL}${TWILIO_PATH}${query ? `?${query}` : ''}`;
  const signature =
    options.signature === undefined ? computeTwilioSignature(AUTH_TOKEN, url, params) : options.signature;
  return {
    method: 'POST',
    path: TWILIO_PATH,
    query,
    body: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(signature !== null ? { 'x-twilio-signature': signature } : {}),
    },
  };
}

/** A provider's hard bounce for `phone` on the list, a minute before T0 (Twilio 30005). */
export async function twilioHardBounce(h: Harness, phone: { fingerprint: string; masked: string }) {
  await h.store.appendSuppression(
    { channel: 'sms', fingerprint: phone.fingerprint, masked: phone.masked },
    {
      action: 'suppress',
      reason: 'hard_bounce',
      source: 'provider',
      actor: 'twilio',
      at: T0 - 60_000,
      code: '30005',
    },
  );
}
