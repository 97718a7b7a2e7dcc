import { describe, expect, it } from 'vitest';
import { intentMessageBody, laneTarget } from '../../lambdas/adapters/sqs/sqs-intent-queue.ts';
import { parseIntentMessage } from '../../lambdas/edge/intent-message.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

const ref = { noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa', channel: 'sms' } as const;

describe('lanes: where a reference waits (docs/architecture.md §11)', () => {
  it("a lane with its own queue gets its references; a lane without rides on the channel's queue", () => {
    const channels = { sms: 'q-sms', email: 'q-email' };
    const lanes = { sms: { critical: 'q-sms-critical', bulk: 'q-sms-bulk' } };
    expect(laneTarget({ ...ref, priority: 'critical' }, channels, lanes)).toBe('q-sms-critical');
    expect(laneTarget({ ...ref, priority: 'bulk' }, channels, lanes)).toBe('q-sms-bulk');
    expect(laneTarget({ ...ref, priority: 'standard' }, channels, lanes)).toBe('q-sms');
    expect(laneTarget(ref, channels, lanes)).toBe('q-sms');
    expect(laneTarget({ ...ref, channel: 'email', priority: 'critical' }, channels, lanes)).toBe('q-email');
  });

  it('the message carries the lane (a deferral or retry returns to it); a standard one is the body it always was', () => {
    expect(intentMessageBody(ref)).toBe(JSON.stringify(ref));
    expect(intentMessageBody({ ...ref, priority: 'standard' })).toBe(JSON.stringify(ref));
    const body = intentMessageBody({ ...ref, priority: 'bulk' }, 3);
    expect(parseIntentMessage(body, 'sms')).toEqual({ ...ref, priority: 'bulk' });
    expect(() => parseIntentMessage(JSON.stringify({ ...ref, priority: 'urgent' }), 'sms')).toThrow();
  });

  it('intake and the reconciler enqueue in the row’s lane', async () => {
    const world = fakeWorld();
    const result = await submitNotice(
      { ...EXAMPLE_REQUEST, channels: ['sms'], priority: 'critical' },
      world.deps,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    expect(world.enqueued.map((e) => e.ref)).toEqual([
      { noticeId: result.noticeId, channel: 'sms', priority: 'critical' },
    ]);
    // Its message was lost: past the lease the reconciler re-enqueues it, in its lane.
    world.clock.advance(61_000);
    await reconcile(world.deps);
    expect(world.enqueued.at(-1)?.ref).toEqual({
      noticeId: result.noticeId,
      channel: 'sms',
      priority: 'critical',
    });
  });
});
