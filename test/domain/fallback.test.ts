import { describe, expect, it } from 'vitest';
import { decideFallback, planFallback, withFallback } from '../../lambdas/domain/fallback.ts';
import { dueWithFallback, type FallbackSpec, type Intent } from '../../lambdas/domain/intent.ts';
import { parseSendWindow } from '../../lambdas/domain/send-window.ts';
import { planTransition } from '../../lambdas/domain/transition.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

/**
 * Channel fallback in the domain (docs/architecture.md §12): when it is owed, what it reserves,
 * what it records on the first row, and how a pending fallback shapes every due time.
 */

const MINUTE = 60_000;
const spec: FallbackSpec = {
  to: 'sms',
  withinMs: 10 * MINUTE,
  destination: { fingerprint: 'fp_sms', masked: '+1******4567' },
  contentDigest: 'digest_sms',
};
const pending = (): Intent => withFallback(newIntent({ deadline: T0 + 86_400_000 }), spec, 'sealed-sms');

const move = (row: Intent, to: Intent['state'], reason: string, at = T0 + 1000, set = {}) =>
  planTransition(row, { to, reason: reason as never, at, set }, TEST_TIMING).next;

const accepted = (row: Intent) => {
  const sending = move(row, 'sending', 'claimed', T0 + 1000, {
    attempts: 1,
    leaseOwner: 'w',
    leaseExpiresAt: T0 + 61_000,
  });
  return move(sending, 'accepted', 'provider_accepted', T0 + 2000, { providerReceiptId: 'r1' });
};

describe('a pending fallback', () => {
  it('is due by within at the latest, and at once when the first channel ends without delivery', () => {
    const row = pending();
    expect(row.fallbackDueAt).toBe(T0 + 10 * MINUTE);
    expect(row.dueAt).toBe(Math.min(T0 + TEST_TIMING.leaseMs, T0 + 10 * MINUTE));
    const ok = accepted(row);
    expect(ok.dueAt).toBeLessThanOrEqual(T0 + 10 * MINUTE);
    const failed = move(ok, 'failed', 'hard_bounce', T0 + 3000);
    expect(failed).toMatchObject({
      dueAt: T0 + 3000,
      fallbackDueAt: T0 + 10 * MINUTE,
      fallbackEnvelope: 'sealed-sms',
    });
    expect(dueWithFallback({ state: 'accepted', fallbackDueAt: 50 }, 100, 10)).toBe(50);
    expect(dueWithFallback({ state: 'accepted', fallbackDueAt: undefined }, 100, 10)).toBe(100);
  });

  it('ends with delivered or cancelled: due time and sealed envelope dropped in the same write', () => {
    const delivered = move(accepted(pending()), 'delivered', 'delivery_reported', T0 + 3000);
    expect(delivered).toMatchObject({
      fallbackDueAt: undefined,
      fallbackEnvelope: undefined,
      dueAt: undefined,
    });
    const cancelled = move(pending(), 'failed', 'cancelled');
    expect(cancelled).toMatchObject({ fallbackDueAt: undefined, dueAt: undefined });
    expect(decideFallback(cancelled, T0 + 20 * MINUTE)).toEqual({ kind: 'none' });
  });
});

describe('decideFallback', () => {
  it('fires on failed or suppressed with the evidence, and on within without delivery', () => {
    expect(decideFallback(move(pending(), 'suppressed', 'on_suppression_list'), T0)).toEqual({
      kind: 'fire',
      evidence: 'email suppressed: on_suppression_list',
    });
    const ok = accepted(pending());
    expect(decideFallback(ok, T0 + 10 * MINUTE - 1)).toEqual({ kind: 'not_yet' });
    expect(decideFallback(ok, T0 + 10 * MINUTE)).toEqual({
      kind: 'fire',
      evidence: 'email accepted: provider_accepted; not delivered within PT10M',
    });
  });

  it('waits while an attempt is in flight, and owes nothing without a fallback', () => {
    const sending = move(pending(), 'sending', 'claimed', T0 + 1000, {
      attempts: 1,
      leaseOwner: 'w',
      leaseExpiresAt: T0 + 61_000,
    });
    expect(decideFallback(sending, T0 + 20 * MINUTE)).toEqual({ kind: 'not_yet' });
    expect(decideFallback(newIntent(), T0 + 20 * MINUTE)).toEqual({ kind: 'none' });
  });
});

describe('planFallback', () => {
  it('reserves the other channel with reason fallback and records it on the first row, ending the fallback', () => {
    const failed = move(pending(), 'failed', 'hard_bounce', T0 + 3000);
    const plan = planFallback(failed, 'email failed: hard_bounce', T0 + 4000, TEST_TIMING);
    expect(plan?.reserve).toMatchObject({
      noticeId: failed.noticeId,
      channel: 'sms',
      state: 'reserved',
      destination: spec.destination,
      contentDigest: 'digest_sms',
      envelope: 'sealed-sms',
      deadline: failed.deadline,
      dueAt: T0 + 4000,
      transitions: [
        { seq: 1, from: null, to: 'reserved', reason: 'fallback', detail: 'email failed: hard_bounce' },
      ],
    });
    expect(plan?.record.record).toMatchObject({
      from: 'failed',
      to: 'failed',
      reason: 'fallback',
      detail: 'sms reserved; email failed: hard_bounce',
    });
    expect(plan?.record.next).toMatchObject({
      fallbackDueAt: undefined,
      fallbackEnvelope: undefined,
      dueAt: undefined,
    });
    expect(plan?.record.expected).toEqual({ state: 'failed', version: failed.version });
  });

  it("applies the to channel's send window in the recipient's zone", () => {
    const failed = move(
      withFallback(newIntent(), { ...spec, timeZone: 'Asia/Kolkata' }, 'sealed'),
      'failed',
      'hard_bounce',
    );
    // T0 = 10:00Z = 15:30 IST: open; 22:00Z = 03:30 IST: held until 08:00 IST = 02:30Z.
    const windows = { sms: parseSendWindow('08:00-21:00'), defaultZone: 'UTC' };
    const day = planFallback(failed, 'e', T0 + 4000, TEST_TIMING, { windows });
    expect(day?.reserve.notBefore).toBeUndefined();
    const night = planFallback(failed, 'e', Date.parse('2026-11-30T22:00:00Z'), TEST_TIMING, { windows });
    expect(night?.reserve.notBefore).toBe(Date.parse('2026-12-01T02:30:00Z'));
    expect(night?.reserve.transitions.map((t) => t.reason)).toEqual(['fallback', 'held_for_send_window']);
  });
});
