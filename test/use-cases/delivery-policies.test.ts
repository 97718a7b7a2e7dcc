import { describe, expect, it } from 'vitest';
import { parseSendWindow } from '../../lambdas/domain/send-window.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { followFallback } from '../../lambdas/use-cases/fallback.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { type NoticeRequest, submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

/**
 * Delivery policies (docs/architecture.md §12) through the one dispatch path, with an injected
 * clock: a channel fallback fired once whatever the redeliveries, with evidence on both rows;
 * a send window that holds a standard notice until it opens (suppression checked then) and lets
 * a critical one through.
 */

type World = ReturnType<typeof fakeWorld>;
const MINUTE = 60_000;

const withFallback: NoticeRequest = {
  ...EXAMPLE_REQUEST,
  channels: ['email'],
  fallback: { from: 'email', to: 'sms', withinMs: 10 * MINUTE },
};

async function submitted(world: World, request: NoticeRequest) {
  const result = await submitNotice(request, world.deps);
  if (result.kind !== 'recorded') throw new Error(`expected recorded, got ${JSON.stringify(result)}`);
  return result;
}

const records = async (world: World, noticeId: string, channel: 'email' | 'sms') =>
  (await world.store.get(noticeId, channel))?.transitions ?? [];

async function sentEmail(world: World) {
  const { noticeId } = await submitted(world, withFallback);
  await deliverIntent({ noticeId, channel: 'email' }, world.deps);
  const row = await world.store.get(noticeId, 'email');
  return { noticeId, receiptId: row?.providerReceiptId as string };
}

describe('channel fallback', () => {
  it('a bounced e-mail reserves exactly one SMS with reason fallback, evidence on both timelines', async () => {
    const world = fakeWorld();
    const { noticeId, receiptId } = await sentEmail(world);
    expect(await world.store.get(noticeId, 'sms')).toBeUndefined();
    const bounce = {
      ref: { noticeId, channel: 'email' as const },
      provider: 'ses',
      receiptId,
      kind: 'failed' as const,
      failure: 'hard_bounce' as const,
      suppress: true,
      at: world.clock.now(),
    };
    await applyDeliveryReport(bounce, world.deps);
    // Redelivered report, reconciler runs: still one SMS row, one record of it on the e-mail.
    await applyDeliveryReport(bounce, world.deps);
    await reconcile(world.deps);
    world.clock.advance(20 * MINUTE);
    await reconcile(world.deps);

    const sms = await world.store.get(noticeId, 'sms');
    expect(sms?.transitions[0]).toMatchObject({
      from: null,
      to: 'reserved',
      reason: 'fallback',
      detail: 'email failed: hard_bounce',
    });
    const emailFallback = (await records(world, noticeId, 'email')).filter((t) => t.reason === 'fallback');
    expect(emailFallback).toEqual([
      expect.objectContaining({
        from: 'failed',
        to: 'failed',
        detail: 'sms reserved; email failed: hard_bounce',
      }),
    ]);
    // The reconciler enqueued it (a report handler cannot reach the SMS queue); sent once.
    const smsRefs = world.enqueued.filter((e) => e.ref.channel === 'sms');
    expect(smsRefs.length).toBeGreaterThanOrEqual(1);
    for (const { ref } of smsRefs) await deliverIntent(ref, world.deps);
    expect(world.sms.sent).toHaveLength(1);
    expect(JSON.stringify(sms)).not.toContain('5551234567');
    // The sealed SMS envelope left the e-mail row with the fallback.
    expect((await world.store.get(noticeId, 'email'))?.fallbackEnvelope).toBeUndefined();
  });

  it('a delivered e-mail reserves no SMS, even after within has passed', async () => {
    const world = fakeWorld();
    const { noticeId, receiptId } = await sentEmail(world);
    const report = {
      ref: { noticeId, channel: 'email' as const },
      provider: 'ses',
      receiptId,
      kind: 'delivered' as const,
      at: world.clock.now(),
    };
    await applyDeliveryReport(report, world.deps);
    world.clock.advance(15 * MINUTE);
    await reconcile(world.deps);
    expect(await world.store.get(noticeId, 'sms')).toBeUndefined();
    const email = await world.store.get(noticeId, 'email');
    expect(email).toMatchObject({ state: 'delivered' });
    expect(email?.fallbackDueAt).toBeUndefined();
    expect(email?.dueAt).toBeUndefined();
  });

  it('not delivered within: the reconciler reserves the SMS once; a late delivery is still recorded', async () => {
    const world = fakeWorld();
    const { noticeId, receiptId } = await sentEmail(world);
    world.clock.advance(9 * MINUTE);
    await reconcile(world.deps);
    expect(await world.store.get(noticeId, 'sms')).toBeUndefined();
    world.clock.advance(MINUTE);
    const report = await reconcile(world.deps);
    expect(report.actions.fallback_fired).toBe(1);
    await reconcile(world.deps);
    const sms = await world.store.get(noticeId, 'sms');
    expect(sms?.transitions[0]?.detail).toBe('email accepted: provider_accepted; not delivered within PT10M');
    expect(world.enqueued.filter((e) => e.ref.channel === 'sms')).toHaveLength(1);
    // A late delivery of the e-mail is recorded, and changes nothing for the SMS.
    const late = await applyDeliveryReport(
      {
        ref: { noticeId, channel: 'email' },
        provider: 'ses',
        receiptId,
        kind: 'delivered',
        at: world.clock.now(),
      },
      world.deps,
    );
    expect(late).toMatchObject({ kind: 'applied', state: 'delivered' });
    expect((await records(world, noticeId, 'email')).map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_accepted',
      'fallback',
      'delivery_reported',
    ]);
  });

  it('a refusal at send fires the fallback in the same step (applyAndFollowUp)', async () => {
    const world = fakeWorld();
    world.email.script.push({ kind: 'rejected', code: 'invalid_recipient', permanent: true });
    const { noticeId } = await submitted(world, withFallback);
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    const sms = await world.store.get(noticeId, 'sms');
    expect(sms?.transitions[0]).toMatchObject({
      reason: 'fallback',
      detail: 'email failed: provider_rejected',
    });
  });

  it('a crash between the reserve and the record: the next look writes the record, still one SMS', async () => {
    const world = fakeWorld();
    world.email.script.push({ kind: 'rejected', code: 'invalid_recipient', permanent: true });
    const { noticeId } = await submitted(world, withFallback);
    // Fail the email row without the follow-up (as if the process died right after the write).
    const crashing = {
      ...world.deps,
      store: Object.assign(Object.create(world.store), {
        apply: async (plan: Parameters<typeof world.store.apply>[0]) => {
          if (plan.record.reason === 'fallback') throw new Error('crash');
          return world.store.apply(plan);
        },
      }),
    };
    await deliverIntent({ noticeId, channel: 'email' }, crashing);
    expect(await world.store.get(noticeId, 'sms')).toBeDefined();
    expect((await records(world, noticeId, 'email')).some((t) => t.reason === 'fallback')).toBe(false);
    const report = await reconcile(world.deps);
    expect(report.actions.fallback_fired).toBe(1);
    const again = await followFallback((await world.store.get(noticeId, 'email'))!, world.deps);
    expect(again.kind).toBe('none');
    expect((await records(world, noticeId, 'email')).filter((t) => t.reason === 'fallback')).toHaveLength(1);
    expect((await records(world, noticeId, 'sms')).filter((t) => t.reason === 'fallback')).toHaveLength(1);
  });

  it('is part of what a replay must match: 409 naming fallback', async () => {
    const world = fakeWorld();
    await submitted(world, withFallback);
    expect((await submitNotice(withFallback, world.deps)).kind).toBe('recorded');
    const without = await submitNotice({ ...withFallback, fallback: undefined }, world.deps);
    expect(without).toMatchObject({
      kind: 'conflict',
      channels: [{ channel: 'email', differs: [{ path: 'fallback' }] }],
    });
    const longer = await submitNotice(
      { ...withFallback, fallback: { from: 'email', to: 'sms', withinMs: 30 * MINUTE } },
      world.deps,
    );
    expect(longer).toMatchObject({ kind: 'conflict', channels: [{ differs: [{ path: 'fallback' }] }] });
  });

  it("a template version's default applies where it fits, and only there", async () => {
    const world = fakeWorld();
    const reminder = {
      ...EXAMPLE_REQUEST,
      eventType: 'appointment-reminder',
      channels: ['email' as const],
      template: { id: 'appointment-reminder', version: 'v2' },
      variables: { firstName: 'Ada', appointmentDate: '2026-12-03' },
    };
    const { noticeId } = await submitted(world, reminder);
    expect((await world.store.get(noticeId, 'email'))?.fallback).toMatchObject({
      to: 'sms',
      withinMs: 30 * MINUTE,
    });
    const noPhone = await submitted(world, {
      ...reminder,
      eventId: 'evt_other',
      recipient: { id: 'pat_1042', email: 'patient@example.com' },
    });
    expect((await world.store.get(noPhone.noticeId, 'email'))?.fallback).toBeUndefined();
  });

  it('refuses a fallback that would end after the deadline (422 naming fallback.within)', async () => {
    const world = fakeWorld();
    const result = await submitNotice(
      { ...withFallback, deadline: world.clock.now() + 5 * MINUTE },
      world.deps,
    );
    expect(result).toMatchObject({
      kind: 'invalid',
      violations: [{ path: 'fallback.within', code: 'fallback_after_deadline' }],
    });
    expect(world.store.intents.size).toBe(0);
  });
});

describe('send windows', () => {
  // 03:00 in Adelaide (ACDT, +10:30) on 30 November 2026 = 16:30Z on the 29th; 08:00 = 21:30Z.
  const night = Date.parse('2026-11-29T16:30:00Z');
  const opening = Date.parse('2026-11-29T21:30:00Z');
  const windows = { sms: parseSendWindow('08:00-21:00'), defaultZone: 'UTC' };
  const smsAt3 = (priority?: 'critical' | 'standard' | 'bulk'): NoticeRequest => ({
    ...EXAMPLE_REQUEST,
    channels: ['sms'],
    recipient: { id: 'pat_1042', phone: '+15551234567', timeZone: 'Australia/Adelaide' },
    ...(priority ? { priority } : {}),
  });
  const worldAtNight = () => {
    const world = fakeWorld({ sendWindows: windows });
    world.clock.current = night;
    return world;
  };

  it('holds a standard SMS at 03:00 local until 08:00 local, with the estimate; sent when it opens', async () => {
    const world = worldAtNight();
    const result = await submitted(world, smsAt3());
    expect(result.channels).toEqual([
      expect.objectContaining({
        channel: 'sms',
        state: 'reserved',
        estimatedSendAt: opening,
        deadlineAtRisk: false,
      }),
    ]);
    expect(world.enqueued).toHaveLength(0);
    const row = await world.store.get(result.noticeId, 'sms');
    expect(row?.transitions.at(-1)).toMatchObject({
      from: 'reserved',
      to: 'reserved',
      reason: 'held_for_send_window',
      detail: 'until 2026-11-29T21:30:00.000Z (send window 08:00-21:00 Australia/Adelaide)',
    });
    expect(row?.dueAt).toBe(opening);
    // A stray message before the opening is left; the reconciler does nothing before it.
    expect(await deliverIntent({ noticeId: result.noticeId, channel: 'sms' }, world.deps)).toMatchObject({
      kind: 'left',
      why: 'not_due_yet',
    });
    world.clock.current = opening - MINUTE;
    await reconcile(world.deps);
    expect(world.enqueued).toHaveLength(0);
    world.clock.current = opening;
    const report = await reconcile(world.deps);
    expect(report.actions.reenqueue_reserved).toBe(1);
    await deliverIntent(world.enqueued[0]?.ref as never, world.deps);
    expect(world.sms.sent).toHaveLength(1);
    expect((await world.store.get(result.noticeId, 'sms'))?.state).toBe('accepted');
  });

  it('checks suppression again when the window opens', async () => {
    const world = worldAtNight();
    const result = await submitted(world, smsAt3('bulk'));
    const row = await world.store.get(result.noticeId, 'sms');
    await world.store.appendSuppression(
      { channel: 'sms', fingerprint: row?.destination.fingerprint as string, masked: 'x' },
      { action: 'suppress', reason: 'opt_out', source: 'provider', actor: 'twilio', at: night },
    );
    world.clock.current = opening;
    await reconcile(world.deps);
    await deliverIntent(world.enqueued[0]?.ref as never, world.deps);
    expect(world.sms.sent).toHaveLength(0);
    expect((await world.store.get(result.noticeId, 'sms'))?.state).toBe('suppressed');
  });

  it('sends a critical SMS at once, recording send_window_not_applied', async () => {
    const world = worldAtNight();
    const result = await submitted(world, smsAt3('critical'));
    expect(result.channels[0]?.estimatedSendAt).toBeUndefined();
    expect(world.enqueued).toHaveLength(1);
    await deliverIntent(world.enqueued[0]?.ref as never, world.deps);
    expect(world.sms.sent).toHaveLength(1);
    expect((await records(world, result.noticeId, 'sms')).map((t) => t.reason)).toEqual([
      'intake',
      'send_window_not_applied',
      'claimed',
      'provider_accepted',
    ]);
  });

  it('a window opening after the deadline answers deadlineAtRisk and escalates at once', async () => {
    const world = worldAtNight();
    const result = await submitted(world, { ...smsAt3(), deadline: night + 60 * MINUTE });
    expect(result.channels[0]).toMatchObject({ estimatedSendAt: opening, deadlineAtRisk: true });
    expect(world.escalations).toEqual([
      expect.objectContaining({ reason: 'deadline_at_risk', channel: 'sms' }),
    ]);
  });

  it('holds the SMS a fallback reserves at night, in the zone the request named', async () => {
    const world = worldAtNight();
    world.email.script.push({ kind: 'rejected', code: 'invalid_recipient', permanent: true });
    const { noticeId } = await submitted(world, {
      ...withFallback,
      recipient: { ...EXAMPLE_REQUEST.recipient, timeZone: 'Australia/Adelaide' },
    });
    await deliverIntent({ noticeId, channel: 'email' }, world.deps);
    const sms = await world.store.get(noticeId, 'sms');
    expect(sms?.transitions.map((t) => t.reason)).toEqual(['fallback', 'held_for_send_window']);
    expect(sms).toMatchObject({ notBefore: opening, dueAt: opening });
    await reconcile(world.deps);
    expect(world.enqueued.filter((e) => e.ref.channel === 'sms')).toHaveLength(0);
    world.clock.current = opening;
    await reconcile(world.deps);
    expect(world.enqueued.filter((e) => e.ref.channel === 'sms')).toHaveLength(1);
  });

  it('uses SEND_WINDOW_TIME_ZONE when the request names no zone', async () => {
    const world = fakeWorld({ sendWindows: { ...windows, defaultZone: 'Australia/Adelaide' } });
    world.clock.current = night;
    const result = await submitted(world, {
      ...smsAt3(),
      recipient: { id: 'pat_1042', phone: '+15551234567' },
    });
    expect(result.channels[0]?.estimatedSendAt).toBe(opening);
  });
});
