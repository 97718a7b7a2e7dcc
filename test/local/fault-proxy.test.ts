import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSesClient, SesEmailTransport } from '../../lambdas/providers/ses/transport.ts';
import { type FaultProxy, startFaultProxy } from '../../local/fault-proxy.ts';
import { clearSesStore, readSesStore, startSesLocal } from '../../local/ses/server.ts';

let ses: Awaited<ReturnType<typeof startSesLocal>>;
let proxy: FaultProxy;
let transport: SesEmailTransport;
const message = (n: number) => ({
  to: 'success@simulator.amazonses.com',
  subject: `s${n}`,
  text: 't',
  correlationId: `ntc_proxy${n}-email`,
  idempotencyKey: `k${n}`,
});

beforeAll(async () => {
  ses = await startSesLocal();
  proxy = await startFaultProxy({ upstream: ses.endpoint });
  transport = new SesEmailTransport({
    client: createSesClient({
      timeoutMs: 300,
      endpoint: proxy.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    fromAddress: 'notices@example.com',
    timeoutMs: 300,
  });
});

afterAll(async () => {
  await proxy?.close();
  await ses?.close();
});

describe('fault proxy in front of aws-ses-v2-local', () => {
  it('passes, refuses, and makes the ambiguous cases real: accepted-but-timed-out vs never forwarded', async () => {
    await clearSesStore(ses.endpoint);
    expect(await transport.send(message(1))).toMatchObject({ kind: 'accepted' });

    proxy.queue.push({
      kind: 'status',
      status: 503,
      body: JSON.stringify({ message: 'Service Unavailable' }),
    });
    expect(await transport.send(message(2))).toMatchObject({ kind: 'retryable' });

    proxy.queue.push({ kind: 'timeout_after_accept', delayMs: 800 });
    expect(await transport.send(message(3))).toEqual({ kind: 'ambiguous', code: 'timeout' });

    proxy.queue.push({ kind: 'timeout_before_accept', delayMs: 800 });
    expect(await transport.send(message(4))).toMatchObject({ kind: 'ambiguous' });

    // Every fault played out: 3's held answer was given up on, 4 was held and dropped.
    await vi.waitFor(() => expect(proxy.counters.settled).toBe(proxy.counters.requests), {
      timeout: 5_000,
      interval: 20,
    });
    const subjects = (await readSesStore(ses.endpoint)).map((e) => e.subject).sort();
    // 1 passed, 3 was accepted although the caller timed out; 2 and 4 never reached SES.
    expect(subjects).toEqual(['s1', 's3']);
  });
});
