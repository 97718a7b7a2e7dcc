import { describe, expect, it } from 'vitest';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { outcomeEventsOf, webhookPayload, webhookRetry } from '../../lambdas/domain/outcome-event.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planFact, planTransition } from '../../lambdas/domain/transition.ts';
import { planWait } from '../../lambdas/domain/waits.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

/** reserved → sending → accepted → delivered, each step's image. */
function deliveredStory(): Intent[] {
  const reserved = newIntent();
  const sending = planTransition(
    reserved,
    {
      to: 'sending',
      reason: Reason.claimed,
      at: T0 + 100,
      attempt: 1,
      set: { attempts: 1, leaseOwner: 'w1', leaseExpiresAt: T0 + 60_100 },
    },
    TEST_TIMING,
  ).next;
  const accepted = planTransition(
    sending,
    {
      to: 'accepted',
      reason: Reason.providerAccepted,
      at: T0 + 200,
      attempt: 1,
      set: { provider: 'ses', providerReceiptId: 'r-1' },
    },
    TEST_TIMING,
  ).next;
  const delivered = planTransition(
    accepted,
    { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 300 },
    TEST_TIMING,
  ).next;
  return [reserved, sending, accepted, delivered];
}

describe('outcomeEventsOf', () => {
  it('makes one event per transition, numbered 1, 2, … per channel, with only ids and codes', () => {
    const [reserved, sending, accepted, delivered] = deliveredStory() as [Intent, Intent, Intent, Intent];
    const events = [
      ...outcomeEventsOf(undefined, reserved),
      ...outcomeEventsOf(reserved, sending),
      ...outcomeEventsOf(sending, accepted),
      ...outcomeEventsOf(accepted, delivered),
    ];
    expect(events.map((e) => [e.type, e.data.seq, e.data.reason])).toEqual([
      ['notice.channel.reserved', 1, 'intake'],
      ['notice.channel.sending', 2, 'claimed'],
      ['notice.channel.accepted', 3, 'provider_accepted'],
      ['notice.channel.delivered', 4, 'delivery_reported'],
    ]);
    expect(events[2]?.data).toEqual({
      noticeId: reserved.noticeId,
      eventId: reserved.eventId,
      eventType: reserved.eventType,
      channel: reserved.channel,
      state: 'accepted',
      reason: 'provider_accepted',
      seq: 3,
      at: new Date(T0 + 200).toISOString(),
      attempt: 1,
      provider: 'ses',
      priority: 'standard',
    });
    // Nothing of the destination, the variables or the envelope.
    const text = JSON.stringify(events);
    for (const secret of [
      reserved.destination.masked,
      reserved.destination.fingerprint,
      reserved.envelope ?? 'envelope',
    ])
      expect(text).not.toContain(secret);
  });

  it('gives a change handed again the same ids (the webhook-id of a redelivery)', () => {
    const [reserved, sending] = deliveredStory() as [Intent, Intent];
    expect(outcomeEventsOf(reserved, sending)).toEqual(outcomeEventsOf(reserved, sending));
    expect(outcomeEventsOf(reserved, sending)[0]?.id).toBe(`msg_${reserved.noticeId}_email_2`);
  });

  it('numbers transitions, not records: a wait on an open row is no event and leaves no gap', () => {
    const reserved = newIntent();
    const waited = planWait(
      reserved,
      { kind: 'channel_held', provider: 'ses', reason: 'provider_throttled', until: T0 + 5_000 },
      { at: T0 + 50, wakeAt: T0 + 5_000 },
      TEST_TIMING,
    )?.next as Intent;
    expect(waited.transitions).toHaveLength(2);
    expect(outcomeEventsOf(reserved, waited)).toEqual([]);
    const sending = planTransition(
      waited,
      {
        to: 'sending',
        reason: Reason.claimed,
        at: T0 + 100,
        attempt: 1,
        set: { attempts: 1, leaseOwner: 'w', leaseExpiresAt: T0 + 1_000 },
      },
      TEST_TIMING,
    ).next;
    expect(outcomeEventsOf(waited, sending).map((e) => e.data.seq)).toEqual([2]);
  });

  it('tells a fact recorded after the row ended as notice.channel.fact, under the last transition’s seq', () => {
    const delivered = deliveredStory()[3] as Intent;
    const complained = planFact(delivered, { reason: Reason.complaint, at: T0 + 400 }).next;
    const [fact] = outcomeEventsOf(delivered, complained);
    expect(fact?.type).toBe('notice.channel.fact');
    expect(fact?.data).toMatchObject({ state: 'delivered', reason: 'complaint', seq: 4 });
    expect(fact?.id).toBe(`msg_${delivered.noticeId}_email_f5`);
  });

  it('owes nothing for a removed row, and everything for a row first seen with several records', () => {
    const delivered = deliveredStory()[3] as Intent;
    expect(outcomeEventsOf(delivered, undefined)).toEqual([]);
    expect(outcomeEventsOf(undefined, delivered).map((e) => e.data.seq)).toEqual([1, 2, 3, 4]);
  });

  it('puts type, timestamp and data in the webhook body, the id in its header', () => {
    const [event] = outcomeEventsOf(undefined, newIntent());
    expect(Object.keys(webhookPayload(event as never)).sort()).toEqual(['data', 'timestamp', 'type']);
  });
});

describe('webhookRetry', () => {
  const schedule = [5_000, 300_000, 1_800_000];
  it('follows the schedule, then dead-letters', () => {
    expect([1, 2, 3, 4].map((tries) => webhookRetry(tries, schedule))).toEqual([
      { kind: 'retry', delayMs: 5_000 },
      { kind: 'retry', delayMs: 300_000 },
      { kind: 'retry', delayMs: 1_800_000 },
      { kind: 'dead_letter' },
    ]);
  });
});
