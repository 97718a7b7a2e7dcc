import { describe, expect, it } from 'vitest';
import { contentDigest } from '../../lambdas/domain/identity.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { parseNoticeRequest } from '../../lambdas/edge/notice-request.ts';
import { toTimeline } from '../../lambdas/edge/timeline.ts';
import type { Admission, SendGate } from '../../lambdas/ports/send-gate.port.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';
import { fromLedger } from '../helpers/timelines.ts';

describe('priority at intake (docs/architecture.md §11)', () => {
  it('is stored on every channel, shown in the timeline, and the sender admits in its lane', async () => {
    const admitted: (Priority | undefined)[] = [];
    const gate: SendGate = {
      admit: async (_channel, priority): Promise<Admission> => {
        admitted.push(priority);
        return { kind: 'go' };
      },
      throttled: async () => undefined,
      hold: async () => undefined,
    };
    const world = fakeWorld({ gate });
    const result = await submitNotice({ ...EXAMPLE_REQUEST, priority: 'critical' }, world.deps);
    if (result.kind !== 'recorded') throw new Error(result.kind);
    const rows = await world.store.getNotice(result.noticeId);
    expect(rows.map((r) => r.priority)).toEqual(['critical', 'critical']);
    expect(toTimeline(fromLedger(rows as [Intent, ...Intent[]])).channels.map((c) => c.priority)).toEqual([
      'critical',
      'critical',
    ]);
    await deliverIntent({ noticeId: result.noticeId, channel: 'sms' }, world.deps);
    expect(admitted).toEqual(['critical']);
  });

  it('a replay with another priority is a 409 naming priority; the same priority is a duplicate', async () => {
    const world = fakeWorld();
    await submitNotice({ ...EXAMPLE_REQUEST, priority: 'bulk' }, world.deps);
    expect(await submitNotice({ ...EXAMPLE_REQUEST, priority: 'bulk' }, world.deps)).toMatchObject({
      kind: 'recorded',
      created: false,
    });
    const other = await submitNotice({ ...EXAMPLE_REQUEST, priority: 'critical' }, world.deps);
    expect(other.kind).toBe('conflict');
    if (other.kind !== 'conflict') return;
    for (const channel of other.channels)
      expect(channel.differs).toEqual([{ path: 'priority', certainty: 'differs' }]);
  });

  it('absent: standard, and the digest of a standard notice is the one rows had before priorities', async () => {
    const world = fakeWorld();
    const result = await submitNotice(EXAMPLE_REQUEST, world.deps);
    if (result.kind !== 'recorded') throw new Error(result.kind);
    const [row] = await world.store.getNotice(result.noticeId);
    expect(row?.priority).toBe('standard');
    const base = { templateId: 't', templateVersion: 'v1', variables: { a: 1 }, destinationFingerprint: 'f' };
    const key = new Uint8Array(32).fill(1);
    expect(contentDigest(key, { ...base, priority: 'standard' })).toBe(contentDigest(key, base));
    expect(contentDigest(key, { ...base, priority: 'bulk' })).not.toBe(contentDigest(key, base));
    // An explicit standard replays a notice recorded without one.
    expect(await submitNotice({ ...EXAMPLE_REQUEST, priority: 'standard' }, world.deps)).toMatchObject({
      created: false,
    });
  });

  it("the template's metadata decides when the request says nothing", async () => {
    const template = templateCatalog.lookup('lab-result-ready', 'v3');
    if (!template) throw new Error('template');
    const world = fakeWorld({
      catalog: { lookup: () => ({ ...template, priority: 'bulk' }), list: () => [template] },
    });
    const result = await submitNotice(EXAMPLE_REQUEST, world.deps);
    if (result.kind !== 'recorded') throw new Error(result.kind);
    expect((await world.store.getNotice(result.noticeId)).map((r) => r.priority)).toEqual(['bulk', 'bulk']);
  });

  it('the request schema takes the three priorities, null as absent, and refuses anything else', () => {
    const body = { ...EXAMPLE_REQUEST, template: { id: 'lab-result-ready', version: 'v3' } };
    const parsed = parseNoticeRequest({ ...body, priority: 'bulk' });
    expect(parsed.ok && parsed.request.priority).toBe('bulk');
    const absent = parseNoticeRequest({ ...body, priority: null });
    expect(absent.ok && absent.request.priority).toBeUndefined();
    const refused = parseNoticeRequest({ ...body, priority: 'urgent' });
    expect(refused).toMatchObject({ ok: false, status: 400, errors: [{ path: 'priority' }] });
    expect(JSON.stringify(refused)).not.toContain('urgent');
  });
});
