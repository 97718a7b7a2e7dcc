import { describe, expect, it } from 'vitest';
import { SES_PUBLISHED_EVENTS } from '../../lambdas/providers/ses/descriptor.ts';
import { mapSesEvent, SesEventSchema } from '../../lambdas/providers/ses/inbound.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { sesEventsFor } from '../../local/ses/event-feeder.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';

async function sentEmail(address: string, ambiguous = false) {
  const world = fakeWorld();
  const submitted = await submitNotice(
    { ...EXAMPLE_REQUEST, recipient: { ...EXAMPLE_REQUEST.recipient, email: address } },
    world.deps,
  );
  if (submitted.kind !== 'recorded') throw new Error('not recorded');
  const noticeId = submitted.noticeId;
  if (ambiguous) world.email.script.push({ kind: 'ambiguous', code: 'timeout' });
  await deliverIntent({ noticeId, channel: 'email' }, world.deps);
  const row = await world.store.get(noticeId, 'email');
  const email = {
    messageId: row?.providerReceiptId ?? 'ses-999',
    from: 'notices@example.com',
    replyTo: [],
    destination: { to: [address], cc: [], bcc: [] },
    subject: 's',
    body: { text: 't' },
    headers: [{ name: 'X-Notice-Intent', value: `${noticeId}-email` }],
    at: Math.floor(world.clock.now() / 1000),
  };
  const events = sesEventsFor(email, world.clock.now() + 1000).map((e) => SesEventSchema.parse(e));
  return { world, noticeId, events };
}

async function feed(world: ReturnType<typeof fakeWorld>, events: ReturnType<typeof SesEventSchema.parse>[]) {
  const results = [];
  for (const event of events) {
    const mapping = mapSesEvent(event);
    results.push(
      mapping.kind === 'report' ? (await applyDeliveryReport(mapping.report, world.deps)).kind : mapping.why,
    );
  }
  return results;
}

describe('SES events (mailbox simulator) → ledger', () => {
  it('publishes only what the configuration set publishes: no Send, one event per plain delivery', async () => {
    const published = SES_PUBLISHED_EVENTS.map((e) => e.eventType as string);
    const expected: Record<string, string[]> = {
      'success@simulator.amazonses.com': ['Delivery'],
      'bounce@simulator.amazonses.com': ['Bounce'],
      'complaint@simulator.amazonses.com': ['Delivery', 'Complaint'],
      'suppressionlist@simulator.amazonses.com': ['Bounce'],
      'patient@example.com': ['Delivery'],
    };
    for (const [address, types] of Object.entries(expected)) {
      const { events } = await sentEmail(address);
      const seen = events.map((e) => e.detail.eventType);
      expect(seen, address).toEqual(types);
      for (const type of seen) expect(published, address).toContain(type);
      // Each with the detail-type the rule routes (lib/providers/ses/ses-events.ts reads the same list).
      for (const e of events)
        expect(e['detail-type']).toBe(
          SES_PUBLISHED_EVENTS.find((p) => p.eventType === e.detail.eventType)?.detailType,
        );
    }
    expect(published).not.toContain('Send');
  });

  it('success: accepted → delivered, matched by the intent tag; duplicates change nothing', async () => {
    const { world, noticeId, events } = await sentEmail('success@simulator.amazonses.com');
    expect(await feed(world, events)).toEqual(['applied']);
    expect(await feed(world, events)).toEqual(['ignored']);
    expect((await world.store.get(noticeId, 'email'))?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_accepted',
      'delivery_reported',
    ]);
  });

  it('bounce: failed with hard_bounce and the destination on the suppression list', async () => {
    const { world, noticeId, events } = await sentEmail('bounce@simulator.amazonses.com');
    await feed(world, events);
    const row = await world.store.get(noticeId, 'email');
    expect(row?.transitions.at(-1)).toMatchObject({
      to: 'failed',
      reason: 'hard_bounce',
      detail: 'Permanent/General',
    });
    expect(await world.store.getSuppression('email', row?.destination.fingerprint as string)).toMatchObject({
      latest: { action: 'suppress', reason: 'hard_bounce', source: 'provider', actor: 'ses' },
    });
  });

  it('complaint after delivery: the row stays delivered, the destination is suppressed', async () => {
    const { world, noticeId, events } = await sentEmail('complaint@simulator.amazonses.com');
    await feed(world, events);
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('delivered');
    expect(await world.store.getSuppression('email', row?.destination.fingerprint as string)).toMatchObject({
      latest: { action: 'suppress', reason: 'complaint' },
    });
  });

  it('a timed-out SendEmail: its Delivery (no Send is published) settles the unknown row as accepted, then delivered', async () => {
    const { world, noticeId, events } = await sentEmail('success@simulator.amazonses.com', true);
    expect((await world.store.get(noticeId, 'email'))?.state).toBe('unknown');
    await feed(world, events);
    expect((await world.store.get(noticeId, 'email'))?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
      'delivery_reported',
    ]);
  });

  it('a timed-out SendEmail: a DeliveryDelay settles the unknown row as accepted (SES holds it); on an accepted row it changes nothing', async () => {
    const { world, noticeId, events } = await sentEmail('success@simulator.amazonses.com', true);
    const [delivery] = events;
    if (!delivery) throw new Error('no event');
    const delay = SesEventSchema.parse({
      'detail-type': 'Email Delivery Delayed',
      source: 'aws.ses',
      time: delivery.time,
      detail: {
        eventType: 'DeliveryDelay',
        mail: delivery.detail.mail,
        deliveryDelay: { timestamp: delivery.time, delayType: 'TransientCommunicationFailure' },
      },
    });
    expect(await feed(world, [delay])).toEqual(['applied']);
    const row = await world.store.get(noticeId, 'email');
    expect(row?.state).toBe('accepted');
    expect(row?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
    ]);
    expect(await feed(world, [delay])).toEqual(['ignored']);
    expect(await feed(world, events)).toEqual(['applied']);
    expect((await world.store.get(noticeId, 'email'))?.state).toBe('delivered');
  });

  it('events without an intent correlation are ignored', () => {
    const event = SesEventSchema.parse({
      'detail-type': 'Email Sent',
      source: 'aws.ses',
      detail: { eventType: 'Send', mail: { messageId: 'x', tags: { other: ['y'] } } },
    });
    expect(mapSesEvent(event)).toEqual({ kind: 'ignore', why: 'no_intent_correlation' });
  });
});
