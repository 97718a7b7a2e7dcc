/**
 * Issue 24 part 1's acceptance (provider failover per channel), through the real use cases and the
 * real provider modules against their simulators: Twilio (the SMS simulator) as the primary, End
 * User Messaging SMS (its simulator) as `SMS_FALLBACK_PROVIDER`, on the in-memory ledger with the
 * real clock. Twilio "unreachable" is a loopback port nothing listens on: a real refused connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { LookupFacet, TransportFacet } from '../../lambdas/ports/provider.port.ts';
import type { SmsTransport } from '../../lambdas/ports/transport.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { type EumSimulator, startEumSimulator } from '../../local/eum-simulator/server.ts';
import { type SmsSimulator, startSmsSimulator } from '../../local/sms-simulator/server.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld } from '../helpers/fakes.ts';
import { refusingOrigin } from '../helpers/raw-socket.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const realClock = { now: () => Date.now() };
const FROM = '+15005550006';
let seq = 0;

function registered(id: string) {
  const provider = PROVIDERS.find((p) => p.descriptor.id === id);
  if (!provider) throw new Error(`${id} is not registered`);
  return provider;
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

async function twilioFacets(baseUrl: string, sim: Pick<SmsSimulator, 'accountSid' | 'authToken'>) {
  const env = {
    TWILIO_BASE_URL: baseUrl,
    TWILIO_ACCOUNT_SID: sim.accountSid,
    TWILIO_AUTH_TOKEN: sim.authToken,
    TWILIO_FROM: FROM,
    PUBLIC_BASE_URL: 'http://127.0.0.1:9',
    PROVIDER_TIMEOUT_MS: '300',
  };
  const base = { config: readConfig(env), env, clock: realClock };
  const transport = must(await loadFacet(registered('twilio'), 'transport', base), 'twilio transport');
  const lookup = must(await loadFacet(registered('twilio'), 'lookup', base), 'twilio lookup');
  return {
    sms: (transport.facet as TransportFacet).sms?.(transport.context) as SmsTransport,
    lookup: (lookup.facet as LookupFacet)(lookup.context),
  };
}

async function eumTransport(): Promise<{ sim: EumSimulator; sms: SmsTransport }> {
  const sim = await startEumSimulator();
  cleanups.push(() => sim.close());
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: sim.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
  const env = { EUM_ORIGINATION_IDENTITY: 'phone-0123456789abcdef', PROVIDER_TIMEOUT_MS: '400' };
  const transport = must(
    await loadFacet(registered('eum'), 'transport', { config: readConfig(env), env, clock: realClock }),
    'eum transport',
  );
  return { sim, sms: (transport.facet as TransportFacet).sms?.(transport.context) as SmsTransport };
}

async function twilioWithFallback(twilioBaseUrl?: string) {
  const twilioSim = await startSmsSimulator({ fromNumbers: [FROM], statusDelayMs: 5 });
  cleanups.push(() => twilioSim.close());
  twilioSim.faults.set({ callbacksEnabled: false });
  const twilio = await twilioFacets(twilioBaseUrl ?? twilioSim.baseUrl, twilioSim);
  const eum = await eumTransport();
  const w = fakeWorld({
    clock: realClock,
    timing: { leaseMs: 5_000 },
    transports: { sms: twilio.sms },
    fallbackTransports: { sms: eum.sms },
    lookups: { twilio: twilio.lookup },
    channelProviders: { email: 'ses', sms: 'twilio' },
  } as Parameters<typeof fakeWorld>[0]);
  return { w, twilioSim, eumSim: eum.sim };
}

async function smsNotice(w: FakeWorld): Promise<string> {
  const result = await submitNotice(
    {
      ...EXAMPLE_REQUEST,
      eventId: `evt_failover_${process.pid}_${seq++}`,
      recipient: { ...EXAMPLE_REQUEST.recipient, phone: `+1555800${String(seq).padStart(4, '0')}` },
      channels: ['sms'],
    },
    w.deps,
  );
  if (result.kind !== 'recorded') throw new Error(result.kind);
  return result.noticeId;
}

describe('provider failover: Twilio with SMS_FALLBACK_PROVIDER=eum', () => {
  it('Twilio unreachable (connection refused): accepted by EUM after one refused attempt; the timeline names both', async () => {
    const { w, twilioSim, eumSim } = await twilioWithFallback(await refusingOrigin());
    const noticeId = await smsNotice(w);
    const ref = { noticeId, channel: 'sms' as const };

    // The first attempt: Twilio refuses the connection; the row fails over, due again at once.
    expect(await deliverIntent(ref, w.deps)).toMatchObject({
      kind: 'recorded',
      state: 'retry_scheduled',
      reason: 'failover',
    });
    const between = await w.store.get(noticeId, 'sms');
    expect(between).toMatchObject({ provider: 'eum', attempts: 0 });
    expect(between?.nextAttemptAt).toBeLessThanOrEqual(Date.now());
    // The wake-up is scheduled (a retry path like any other), attempt 1 again (it was not counted).
    expect(w.scheduled).toEqual([expect.objectContaining({ ref, attempt: 1 })]);

    // The next attempt goes to EUM and is accepted there.
    expect(await deliverIntent(ref, w.deps)).toMatchObject({
      state: 'accepted',
      reason: 'provider_accepted',
    });
    const row = await w.store.get(noticeId, 'sms');
    expect(row?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'failover',
      'claimed',
      'provider_accepted',
    ]);
    const failover = row?.transitions.find((t) => t.reason === 'failover');
    expect(failover?.detail).toMatch(/^twilio never_reached \(connection_refused\); next attempt via eum/);
    expect(row).toMatchObject({ state: 'accepted', provider: 'eum', attempts: 1 });
    expect(row?.providerReceiptId).toBe(eumSim.messages()[0]?.messageId);
    expect(eumSim.counters.sendCalls).toBe(1);
    expect(twilioSim.messages()).toHaveLength(0);
    // No hold, no escalation: the fallback carries the channel.
    expect(w.escalations).toHaveLength(0);
  });

  it('Twilio accepting but answering after the timeout: unknown, reconciled with Twilio as accepted, EUM never called', async () => {
    const { w, twilioSim, eumSim } = await twilioWithFallback();
    twilioSim.faults.set({ failNext: [{ kind: 'timeout_after_accept', delayMs: 1_000 }] });
    const noticeId = await smsNotice(w);
    const ref = { noticeId, channel: 'sms' as const };

    expect(await deliverIntent(ref, w.deps)).toMatchObject({ state: 'unknown', reason: 'provider_timeout' });
    expect(await w.store.get(noticeId, 'sms')).toMatchObject({ state: 'unknown', provider: 'twilio' });
    // A redelivered queue message leaves an unknown row alone: no attempt anywhere.
    expect(await deliverIntent(ref, w.deps)).toMatchObject({ kind: 'left' });

    // The reconciler asks the attempt's own provider (Twilio), which holds the message.
    const run = await reconcile(w.deps);
    expect(run.actions).toMatchObject({ lookup_found: 1, unknown_to_accepted: 1 });
    const row = await w.store.get(noticeId, 'sms');
    expect(row).toMatchObject({ state: 'accepted', provider: 'twilio' });
    expect(row?.providerReceiptId).toBe(twilioSim.messages()[0]?.sid);
    expect(row?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
    ]);
    expect(twilioSim.messages()).toHaveLength(1);
    expect(eumSim.counters.sendCalls).toBe(0);
    expect(eumSim.messages()).toHaveLength(0);
  });

  it('Twilio refusing the account (401, code 20003): EUM sends it, and the channel is not held', async () => {
    const { w, twilioSim, eumSim } = await twilioWithFallback();
    twilioSim.faults.set({ failNext: [{ kind: 'status', status: 401, code: 20003 }] });
    const noticeId = await smsNotice(w);
    const ref = { noticeId, channel: 'sms' as const };
    expect(await deliverIntent(ref, w.deps)).toMatchObject({ reason: 'failover' });
    expect(await deliverIntent(ref, w.deps)).toMatchObject({ state: 'accepted' });
    const row = await w.store.get(noticeId, 'sms');
    expect(row?.transitions.find((t) => t.reason === 'failover')?.detail).toContain(
      'twilio account_refused (twilio_20003)',
    );
    // A new notice starts on the primary again, which now accepts it.
    const next = await smsNotice(w);
    expect(await deliverIntent({ noticeId: next, channel: 'sms' }, w.deps)).toMatchObject({
      state: 'accepted',
    });
    expect(await w.store.get(next, 'sms')).toMatchObject({ provider: 'twilio' });
    expect(twilioSim.messages()).toHaveLength(1);
    expect(eumSim.counters.sendCalls).toBe(1);
  });
});
