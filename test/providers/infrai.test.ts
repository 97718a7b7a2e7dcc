/**
 * The Infrai-style gateway against its simulator, e-mail channel. Nothing is pushed: the
 * provider's later word is what the status facet pulls; a forged push has nowhere to go.
 */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { LookupFacet, StatusFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { EmailMessage, EmailTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startInfraiSimulator } from '../../local/infrai-simulator/server.ts';
import { type Kit, must, runConformance, type SendInput } from './conformance.ts';
import { startRewritingProxy } from './null-fields.ts';

const HOLD_MS = 1_500;

async function infraiKit(): Promise<Kit> {
  const sim = await startInfraiSimulator();
  sim.faults.set({ deliveryDelayMs: 10 });
  const proxy = await startRewritingProxy(sim.baseUrl);
  const provider = PROVIDERS.find((p) => p.descriptor.id === 'infrai');
  if (!provider) throw new Error('infrai is not registered');
  const env = { INFRAI_BASE_URL: proxy.origin, INFRAI_API_KEY: sim.apiKey, PROVIDER_TIMEOUT_MS: '600' };
  const base = { config: readConfig(env), env, clock: { now: Date.now } };
  const transport = must(await loadFacet(provider, 'transport', base));
  const lookup = must(await loadFacet(provider, 'lookup', base));
  const statusFacet = must(await loadFacet(provider, 'status', base));
  const email = (transport.facet as TransportFacet).email?.(transport.context) as EmailTransport;
  const find = (lookup.facet as LookupFacet)(lookup.context);
  const status = (statusFacet.facet as StatusFacet)(statusFacet.context);
  const tag = randomBytes(4).toString('hex');
  let n = 0;
  const messageOf = (input: SendInput): EmailMessage => ({
    to: input.to,
    subject: input.content,
    text: input.content,
    correlationId: `${input.noticeId}-email`,
    idempotencyKey: `${input.noticeId}.email`,
  });
  const sent = new Map<string, SendInput>();
  const KIND: Record<string, string> = {
    accepted: 'accepted',
    delivered: 'delivered',
    bounced: 'failed',
    complained: 'failed',
  };
  const pull = (input: SendInput, receipt: string) =>
    status.pull({
      ref: { noticeId: input.noticeId, channel: 'email' },
      receiptId: receipt,
      acceptedAt: Date.now(),
    });
  return {
    descriptor: provider.descriptor,
    channel: 'email',
    advisesDelay: true,
    send: (input) => {
      sent.set(`${input.noticeId}-email`, input);
      return email.send(messageOf(input));
    },
    // What the reconciler adds: the message as the attempt sent it.
    lookup: (query) => {
      const input = sent.get(query.correlationId);
      return find.lookup({ ...query, ...(input ? { replay: messageOf(input) } : {}) });
    },
    status: pull,
    next(fault) {
      switch (fault.kind) {
        case 'throttle':
          sim.faults.set({
            failNext: [
              {
                kind: 'status',
                status: 429,
                code: 'RATE_LIMITED',
                retryable: true,
                retryAfterSeconds: fault.retryAfterSeconds ?? 1,
              },
            ],
          });
          return;
        case 'reject':
          sim.faults.set({
            failNext: [{ kind: 'status', status: 422, code: 'INVALID_RECIPIENT', retryable: false }],
          });
          return;
        case 'timeout_after_accept':
          sim.faults.set({ failNext: [{ kind: 'slow_accept', delayMs: HOLD_MS }] });
          return;
        case 'timeout_before_accept':
          sim.faults.set({ failNext: [{ kind: 'slow_reject', delayMs: HOLD_MS }] });
          return;
      }
    },
    sentTo: async (destination) =>
      sim
        .messages()
        .filter((m) => m.to === destination)
        .map((m) => m.id),
    destination: (kind) =>
      `${kind === 'delivered' ? 'patient' : kind === 'bounced' ? 'bounce' : 'complaint'}+${tag}-${n++}@example.com`,
    async report(input, receipt, kind) {
      for (let i = 0; i < 100; i++) {
        const answer = await pull(input, receipt);
        const report =
          answer.kind === 'reports' ? answer.reports.find((r) => r.kind === KIND[kind]) : undefined;
        if (report) return { kind: 'accepted', reports: [report], unmatched: 0, ignored: [] };
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no ${kind} event pulled for ${receipt}`);
    },
    // The gateway pushes nothing: there is no route a forged event could take.
    forged: async () => 'unrouted',
    suppressionCheck: (destination) => {
      const suppressions = must(email.suppressions);
      return must(suppressions.check).call(suppressions, destination);
    },
    // Its events are answers too (pulled); `reason` is what the real gateway answers null.
    optionalFields: {
      answers: [
        'error.message',
        'error.hint',
        'error.retryable',
        'data.state',
        'data.reason',
        'data.items[].bounce_type',
        'metadata.vendor',
      ],
      events: [],
    },
    rewrite: (rewrite) => proxy.set(rewrite),
    async close() {
      await proxy.close();
      await sim.close();
    },
  };
}

runConformance('infrai (gateway simulator)', infraiKit);
