import { describe, expect, it } from 'vitest';
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
  it('success: accepted → delivered, matched by the intent tag; duplicates change nothing', async () => {
    const { world, noticeId, events } = await sentEmail('success@simulator.amazonses.com');
    expect(await feed(world, events)).toEqual(['ignored', 'applied']);
    expect(await feed(world, events)).toEqual(['ignored', 'ignored']);
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

  it('out of order: Delivery before Send still ends delivered, via accepted', async () => {
    const { world, noticeId, events } = await sentEmail('success@simulator.amazonses.com', true);
    expect((await world.store.get(noticeId, 'email'))?.state).toBe('unknown');
    await feed(world, [...events].reverse());
    expect((await world.store.get(noticeId, 'email'))?.transitions.map((t) => t.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'reconciled_accepted',
      'delivery_reported',
    ]);
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
