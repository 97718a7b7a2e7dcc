import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import type { TemplateCatalog } from '../../lambdas/domain/template.ts';
import { createHttpApi, type HttpRuntime } from '../../lambdas/handlers/http/router.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import type { SmsMessage, SmsTransport } from '../../lambdas/ports/transport.port.ts';
import type { Dependencies } from '../../lambdas/use-cases/dependencies.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { type ApiEventInput, apiEvent, responseJson } from './api-events.ts';
import { T0, TEST_KEY } from './factories.ts';

/**
 * The HTTP API function in-process: in-memory and fake adapters around the real catalog, sealer,
 * use cases and routes (handler tests, the fuzz layer).
 */
export const PUBLIC_BASE_URL = 'https://notices.example.test';
export const AUTH_TOKEN = 'test-twilio-auth-token';
export const SID = `SM${'0123456789abcdef'.repeat(2)}`;

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
  options: { twilio?: boolean; store?: MemoryLedgerStore; catalog?: TemplateCatalog } = {},
) {
  const store = options.store ?? new MemoryLedgerStore();
  const enqueued: IntentRef[] = [];
  const clock = { now: T0 };
  const sms = new FakeSmsTransport();
  const deps: Dependencies = {
    store,
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
    transports: { sms },
    workerId: 'test-worker',
  };
  const runtime: HttpRuntime = {
    deps,
    twilio:
      options.twilio === false
        ? undefined
        : { accountSid: 'AC_test', authToken: AUTH_TOKEN, from: '+15005550006' },
    publicBaseUrl: PUBLIC_BASE_URL,
  };
  const api = createHttpApi(async () => runtime);
  const bodies: string[] = [];
  async function call(input: ApiEventInput | APIGatewayProxyEventV2): Promise<Reply> {
    const event = 'requestContext' in input ? input : apiEvent(input);
    const raw = await api(event);
    bodies.push(raw.body ?? '');
    return { status: raw.statusCode ?? 0, json: responseJson(raw), raw };
  }
  return { store, enqueued, clock, sms, deps, runtime, call, bodies };
}

export type Harness = ReturnType<typeof harness>;

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
