import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { StandardWebhookPoster } from '../../lambdas/adapters/webhooks/standard-webhook-poster.ts';
import { type OutcomeEvent, outcomeEventsOf } from '../../lambdas/domain/outcome-event.ts';
import type {
  LedgerChange,
  OutcomeSink,
  WebhookAnswer,
  WebhookMessage,
} from '../../lambdas/ports/outcome-sink.port.ts';
import { deliverWebhook } from '../../lambdas/use-cases/deliver-webhook.ts';
import { relayOutcomes } from '../../lambdas/use-cases/relay-outcomes.ts';
import { newIntent, T0 } from '../helpers/factories.ts';

const event = outcomeEventsOf(undefined, newIntent())[0] as OutcomeEvent;
const SCHEDULE = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A receiver answering `answers` in turn, and a queue that records what is put back. */
function harness(answers: WebhookAnswer[]) {
  const requeued: { message: WebhookMessage; at: number }[] = [];
  const deadLetters: WebhookMessage[] = [];
  let clock = T0;
  let posts = 0;
  const deps = {
    poster: { post: async () => answers[Math.min(posts++, answers.length - 1)] as WebhookAnswer },
    queue: {
      later: async (message: WebhookMessage, now: number) => void requeued.push({ message, at: now }),
      deadLetter: async (message: WebhookMessage) => void deadLetters.push(message),
    },
    schedule: SCHEDULE,
    now: () => clock,
  };
  return { deps, requeued, deadLetters, advance: (ms: number) => (clock += ms), posts: () => posts };
}

describe('deliverWebhook: the signing sender’s retries', () => {
  it('retries a non-2xx and a timeout on the schedule (over 24 hours), then dead-letters', async () => {
    const h = harness([
      { kind: 'refused', status: 500 },
      { kind: 'unreachable', code: 'timeout' },
    ]);
    let message: WebhookMessage = { event, tries: 0 };
    const delays: number[] = [];
    for (let i = 0; i < SCHEDULE.length; i++) {
      const verdict = await deliverWebhook(message, h.deps);
      expect(verdict.kind).toBe('retry');
      if (verdict.kind !== 'retry') return;
      const wait = (verdict.next.notBefore ?? 0) - h.deps.now();
      delays.push(wait);
      h.advance(wait);
      message = verdict.next;
    }
    expect(delays).toEqual(SCHEDULE);
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24 * 3_600_000);
    const last = await deliverWebhook(message, h.deps);
    expect(last.kind).toBe('dead_letter');
    expect(h.deadLetters).toEqual([{ event, tries: SCHEDULE.length + 1 }]);
    // Every try carried the same event: the same webhook-id.
    expect(new Set(h.requeued.map((r) => r.message.event.id))).toEqual(new Set([event.id]));
  });

  it('never sends a 2xx again', async () => {
    const h = harness([{ kind: 'delivered', status: 204 }]);
    expect((await deliverWebhook({ event, tries: 3 }, h.deps)).kind).toBe('delivered');
    expect(h.requeued).toEqual([]);
    expect(h.deadLetters).toEqual([]);
  });

  it('puts back a message not due yet without a request (a delay longer than one queue hop)', async () => {
    const h = harness([{ kind: 'delivered', status: 200 }]);
    const early = { event, tries: 2, notBefore: T0 + 3_600_000 };
    expect((await deliverWebhook(early, h.deps)).kind).toBe('not_due');
    expect(h.posts()).toBe(0);
    expect(h.requeued).toEqual([{ message: early, at: T0 }]);
  });
});

describe('relayOutcomes: one stream consumer, every sink', () => {
  const changes: LedgerChange[] = [
    { position: '100', newImage: newIntent() },
    { position: '200', newImage: newIntent() },
    { position: '300', newImage: newIntent() },
  ];

  it('hands each change’s events to every sink in stream order', async () => {
    const seen: string[] = [];
    const sink = (name: string): OutcomeSink => ({
      name,
      publish: async (events) => void seen.push(...events.map((e) => `${name}:${e.data.noticeId}`)),
    });
    const result = await relayOutcomes(changes, [sink('bus'), sink('webhooks')]);
    expect(result).toEqual({ relayed: 3 });
    expect(seen).toEqual(
      changes.flatMap((c) => [`bus:${c.newImage?.noticeId}`, `webhooks:${c.newImage?.noticeId}`]),
    );
  });

  it('reports the first change a sink refused, so it and every later one are handed again', async () => {
    let calls = 0;
    const flaky: OutcomeSink = {
      name: 'webhooks',
      publish: async () => {
        if (++calls === 2) throw new Error('queue unavailable');
      },
    };
    const result = await relayOutcomes(changes, [flaky]);
    expect(result.failedAt).toBe('200');
    expect(result.relayed).toBe(1);
  });
});

describe('StandardWebhookPoster', () => {
  const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_QmFzZTY0IGlzIG5vdCBlbmNyeXB0aW9uIQ=='];

  it('signs id.timestamp.body with every secret (Standard Webhooks), verifiable with the library', () => {
    const poster = new StandardWebhookPoster({ url: 'https://receiver.invalid/', secrets, timeoutMs: 1_000 });
    const { headers, body } = poster.request(event);
    expect(headers['webhook-id']).toBe(event.id);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of secrets) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() =>
      new Webhook('whsec_b3RoZXIgc2VjcmV0IG9mIHRoaXJ0eS10d28gYnl0ZXM=').verify(body, headers),
    ).toThrow();
  });

  it('answers a non-2xx as refused and a timeout as unreachable, never throwing', async () => {
    const refusing = new StandardWebhookPoster({
      url: 'https://receiver.invalid/',
      secrets,
      timeoutMs: 1_000,
      fetch: async () => new Response('no', { status: 503 }),
    });
    expect(await refusing.post(event)).toEqual({ kind: 'refused', status: 503 });
    const hanging = new StandardWebhookPoster({
      url: 'https://receiver.invalid/',
      secrets,
      timeoutMs: 20,
      fetch: (_url, init) =>
        new Promise((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)),
        ),
    });
    expect(await hanging.post(event)).toEqual({ kind: 'unreachable', code: 'timeout' });
  });
});
