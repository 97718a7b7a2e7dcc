/** `npm run providers:check`: the gateway module's calls against the gateway's discovery schema. */
import { afterEach, describe, expect, it } from 'vitest';
import { checkDiscovery } from '../../lambdas/providers/infrai/discovery.ts';
import { DISCOVERY, startInfraiSimulator } from '../../local/infrai-simulator/server.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

describe('providers:check (gateway discovery)', () => {
  it('every call matches the schema the simulator publishes (public: no key is sent)', async () => {
    const sim = await startInfraiSimulator();
    closers.push(() => sim.close());
    const results = await checkDiscovery(sim.baseUrl);
    expect(results.length).toBeGreaterThanOrEqual(10);
    expect(results.filter((r) => r.problems.length > 0)).toEqual([]);
    expect(sim.counters.discoveryCalls).toBe(results.length);
  });

  it('reports a parameter we send that the schema no longer lists, a required one we omit, and a vanished capability', async () => {
    const drifted = structuredClone(DISCOVERY) as Record<string, (typeof DISCOVERY)[string]>;
    const send = drifted['email.send'] as (typeof DISCOVERY)[string];
    send.params = [
      ...send.params.filter((p) => p.name !== 'vendor'),
      { name: 'campaign', required: true, in: 'body' },
    ];
    delete drifted['sms.get'];
    const sim = await startInfraiSimulator({ discovery: drifted });
    closers.push(() => sim.close());
    const byId = Object.fromEntries(
      (await checkDiscovery(sim.baseUrl)).map((r) => [r.capability, r.problems]),
    );
    expect(byId['email.send']).toEqual([
      'we send "vendor", which the schema does not list',
      'required "campaign" is not sent',
    ]);
    expect(byId['sms.get']).toEqual(['not described (CAPABILITY_NOT_FOUND)']);
    expect(byId['sms.send']).toEqual([]);
  });
});
