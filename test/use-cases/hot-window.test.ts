import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../lambdas/domain/channel.ts';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { toTimeline } from '../../lambdas/edge/timeline.ts';
import { applyDeliveryReport } from '../../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { cancelNotice, resolveChannel } from '../../lambdas/use-cases/operator-actions.ts';
import { ArchiveMissingRowError, readNotice } from '../../lambdas/use-cases/read-notice.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { withCoalescedEnqueue } from '../../lambdas/use-cases/submit-batch.ts';
import { type NoticeRequest, submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, passHotWindow } from '../helpers/fakes.ts';

/*
 * Nothing lost or repeated across the hot window (issue 22, docs/archive.md): once a resolved
 * row left the table (TTL, HOT_RETENTION after it resolved), intake answers a replay from its key
 * record and never reserves it again, and the timeline reads it from the archive. The archive
 * and the key records are the in-memory fake of what the archiver leaves behind.
 */

const DAY = 86_400_000;
/** The default hot window: a replay this long after resolution finds no row in the table. */
const HOT_RETENTION_MS = 35 * DAY;

const SUBMITTER_A = { role: 'submitter', principal: 'arn:aws:iam::111111111111:role/lab-system' } as const;
const SUBMITTER_B = { role: 'submitter', principal: 'arn:aws:iam::222222222222:role/billing' } as const;
const OPERATOR = { role: 'operator', principal: 'arn:aws:iam::000000000000:role/ops' } as const;

/** The request with an explicit deadline a week after the world's clock (as business systems send it). */
function requestAt(world: FakeWorld, overrides: Partial<NoticeRequest> = {}): NoticeRequest {
  return { ...EXAMPLE_REQUEST, deadline: world.clock.now() + 7 * DAY, ...overrides };
}

/** Every queued channel sent (the scripted transports accept) and its delivery reported. */
async function deliverQueued(world: FakeWorld): Promise<void> {
  const refs = world.enqueued.splice(0).map((e) => e.ref);
  for (const ref of refs) await deliverIntent(ref, world.deps);
  for (const ref of refs) {
    const row = await world.store.get(ref.noticeId, ref.channel);
    if (row?.state !== 'accepted' || !row.providerReceiptId || !row.provider) continue;
    world.clock.advance(1000);
    await applyDeliveryReport(
      {
        ref,
        provider: row.provider,
        receiptId: row.providerReceiptId,
        kind: 'delivered',
        at: world.clock.now(),
      },
      world.deps,
    );
  }
}

const sent = (world: FakeWorld) => world.email.sent.length + world.sms.sent.length;

/** A notice (both channels, or `channels`) submitted, sent, delivered, and HOT_RETENTION later gone from the table. */
async function archivedNotice(
  world = fakeWorld(),
  caller?: typeof SUBMITTER_A,
  channels: readonly Channel[] = ['email', 'sms'],
) {
  const first = await submitNotice(requestAt(world, { channels: [...channels] }), world.deps, caller);
  if (first.kind !== 'recorded') throw new Error(first.kind);
  await deliverQueued(world);
  const before = await readNotice(first.noticeId, OPERATOR, world.deps);
  world.clock.advance(HOT_RETENTION_MS);
  await passHotWindow(world, first.noticeId);
  return { world, noticeId: first.noticeId, before };
}

describe('intake after the hot window', () => {
  it('the same request again is a replay answered from the key records: nothing reserved, enqueued or sent', async () => {
    // Prepare: delivered on both channels, 35 days ago; the request's own deadline long passed
    const { world, noticeId } = await archivedNotice();
    expect(await world.store.getNotice(noticeId)).toEqual([]);
    const sends = sent(world);
    const queries = world.archive.requests.keyRecordQueries;
    const replay = { ...EXAMPLE_REQUEST, deadline: world.clock.now() - HOT_RETENTION_MS + 7 * DAY };

    // Act
    const result = await submitNotice(replay, world.deps);
    await reconcile(world.deps);
    await deliverQueued(world);

    // Assess
    expect(result).toEqual({
      kind: 'recorded',
      noticeId,
      created: false,
      channels: [
        { channel: 'email', state: 'delivered', outcome: 'duplicate' },
        { channel: 'sms', state: 'delivered', outcome: 'duplicate' },
      ],
    });
    expect(await world.store.getNotice(noticeId)).toEqual([]);
    expect(world.enqueued).toEqual([]);
    expect(sent(world)).toBe(sends);
    expect(world.archive.requests.keyRecordQueries - queries).toBe(1); // one Query per request
  });

  it('other content after the window is a conflict naming what differs, answered from the key record', async () => {
    // Prepare
    const { world, noticeId } = await archivedNotice();
    const sends = sent(world);

    const reads = world.archive.requests.objectReads;

    // Act
    const variables = await submitNotice(requestAt(world, { variables: { firstName: 'Grace' } }), world.deps);
    // What differs is read from the archived rows: one object read per conflicting channel.
    expect(world.archive.requests.objectReads - reads).toBe(2);
    const phone = await submitNotice(
      requestAt(world, { recipient: { ...EXAMPLE_REQUEST.recipient, phone: '+15557654321' } }),
      world.deps,
    );

    // Assess
    expect(variables).toEqual({
      kind: 'conflict',
      noticeId,
      channels: ['email', 'sms'].map((channel) => ({
        channel,
        state: 'delivered',
        outcome: 'conflict',
        differs: [{ path: 'variables.firstName', certainty: 'differs' }],
      })),
    });
    expect(phone).toMatchObject({
      kind: 'conflict',
      channels: [
        { channel: 'email', outcome: 'duplicate' },
        { channel: 'sms', outcome: 'conflict', differs: [{ path: 'recipient.phone', certainty: 'differs' }] },
      ],
    });
    expect(await world.store.getNotice(noticeId)).toEqual([]);
    expect(sent(world)).toBe(sends);
  });

  it('the same content reads no archive object: the key record’s digest answers it', async () => {
    const { world } = await archivedNotice();
    const reads = world.archive.requests.objectReads;
    const replay = await submitNotice(requestAt(world), world.deps);
    expect(replay).toMatchObject({ kind: 'recorded', created: false });
    expect(world.archive.requests.objectReads).toBe(reads);
  });

  it('other content when the archived row cannot be read: still a conflict (never a send, never a failure), every part may differ', async () => {
    // Prepare: the archive answering with an error for one notice, without the object for another
    const failing = await archivedNotice();
    failing.world.archive.archivedRow = async () => {
      throw new Error('S3: 503 Slow Down');
    };
    const missing = await archivedNotice();
    missing.world.archive.objects.clear();
    const undetermined = (channel: Channel) =>
      [
        'template.id',
        'template.version',
        'priority',
        'fallback',
        channel === 'email' ? 'recipient.email' : 'recipient.phone',
        'variables',
      ].map((path) => ({ path, certainty: 'may_differ' }));

    for (const { world, noticeId } of [failing, missing]) {
      const sends = sent(world);

      // Act
      const changed = await submitNotice(requestAt(world, { variables: { firstName: 'Grace' } }), world.deps);
      const same = await submitNotice(requestAt(world), world.deps);

      // Assess
      expect(changed).toEqual({
        kind: 'conflict',
        noticeId,
        channels: (['email', 'sms'] as const).map((channel) => ({
          channel,
          state: 'delivered',
          outcome: 'conflict',
          differs: undetermined(channel),
        })),
      });
      // The same content needs no archive read: a replay as ever.
      expect(same).toMatchObject({ kind: 'recorded', created: false });
      expect(await world.store.getNotice(noticeId)).toEqual([]);
      expect(sent(world)).toBe(sends);
      expect(world.enqueued).toEqual([]);
    }
  });

  it('visibility as for rows: another submitter is refused (taken), its own submitter and operators replay', async () => {
    // Prepare
    const { world, noticeId } = await archivedNotice(fakeWorld(), SUBMITTER_A);

    // Act
    const other = await submitNotice(requestAt(world), world.deps, SUBMITTER_B);
    const own = await submitNotice(requestAt(world), world.deps, SUBMITTER_A);
    const operator = await submitNotice(requestAt(world), world.deps, OPERATOR);
    // Another submitter asking for a channel the notice never had is refused too: the email
    // channel it also names is not its own.
    const adding = await submitNotice(
      requestAt(world, { channels: ['email', 'sms'] }),
      world.deps,
      SUBMITTER_B,
    );

    // Assess
    expect(other).toEqual({ kind: 'taken', noticeId });
    expect(adding).toEqual({ kind: 'taken', noticeId });
    expect(own).toMatchObject({ kind: 'recorded', created: false });
    expect(operator).toMatchObject({ kind: 'recorded', created: false });
    expect(await world.store.getNotice(noticeId)).toEqual([]);
  });

  it('a request that adds a channel after the window records and sends only the new channel', async () => {
    // Prepare: an e-mail-only notice, delivered, past the window
    const { world, noticeId } = await archivedNotice(fakeWorld(), undefined, ['email']);
    expect(world.email.sent).toHaveLength(1);

    // Act: the business system now asks for e-mail and SMS
    const result = await submitNotice(requestAt(world), world.deps);
    await deliverQueued(world);

    // Assess: the archived e-mail is a duplicate (never reserved again); SMS is a new intent
    // of the same notice, recorded and sent once, as when a replay adds a channel in the table
    expect(result).toEqual({
      kind: 'recorded',
      noticeId,
      created: true,
      channels: [
        { channel: 'email', state: 'delivered', outcome: 'duplicate' },
        { channel: 'sms', state: 'reserved', outcome: 'created' },
      ],
    });
    expect(world.email.sent).toHaveLength(1);
    expect(world.sms.sent).toHaveLength(1);
    const rows = await world.store.getNotice(noticeId);
    expect(rows.map((row) => [row.channel, row.state])).toEqual([['sms', 'delivered']]);

    // And the timeline tells both: e-mail from the archive, SMS from the table
    const read = await readNotice(noticeId, OPERATOR, world.deps);
    if (!read) throw new Error('not found');
    const timeline = toTimeline(read as [(typeof read)[number], ...typeof read]);
    expect(timeline.source).toBe('mixed');
    expect(timeline.channels.map((c) => [c.channel, c.source, c.state])).toEqual([
      ['email', 'archive', 'delivered'],
      ['sms', 'ledger', 'delivered'],
    ]);
  });

  it('one channel archived, the other still in the table: neither is reserved again', async () => {
    // Prepare: e-mail delivered at once; SMS resolved a day later (its row leaves a day later)
    const world = fakeWorld();
    const first = await submitNotice(requestAt(world), world.deps);
    if (first.kind !== 'recorded') throw new Error(first.kind);
    await deliverQueued(world);
    world.clock.advance(HOT_RETENTION_MS);
    await passHotWindow(world, first.noticeId, ['email']);
    const sends = sent(world);

    // Act
    const replay = await submitNotice(requestAt(world), world.deps);
    await deliverQueued(world);

    // Assess
    expect(replay).toMatchObject({
      kind: 'recorded',
      created: false,
      channels: [
        { channel: 'email', outcome: 'duplicate' },
        { channel: 'sms', outcome: 'duplicate' },
      ],
    });
    expect(sent(world)).toBe(sends);
  });

  it("a replay's passed deadline is not checked when every channel is answered from key records; a new channel's is", async () => {
    // Prepare
    const { world } = await archivedNotice();
    const passed = world.clock.now() - DAY;

    // Act
    const replay = await submitNotice(
      { ...EXAMPLE_REQUEST, channels: ['sms'], deadline: passed },
      world.deps,
    );
    const { world: world2, noticeId: emailOnly } = await archivedNotice(fakeWorld(), undefined, ['email']);
    const adding = await submitNotice(
      { ...EXAMPLE_REQUEST, deadline: world2.clock.now() - DAY },
      world2.deps,
    );

    // Assess
    expect(replay).toMatchObject({ kind: 'recorded', created: false });
    expect(adding).toEqual({
      kind: 'invalid',
      violations: [
        { path: 'deadline', code: 'deadline_not_in_future', message: 'deadline must lie in the future' },
      ],
    });
    expect(await world2.store.getNotice(emailOnly)).toEqual([]);
  });

  it('the batch path is the same path: an archived item is a 200 replay, the new ones are enqueued', async () => {
    // Prepare
    const { world, noticeId } = await archivedNotice();
    const items = [requestAt(world), requestAt(world, { eventId: 'evt_new_1' })];

    // Act
    const { result, enqueued } = await withCoalescedEnqueue(world.deps, (deps) =>
      Promise.all(items.map((item) => submitNotice(item, deps))),
    );

    // Assess
    expect(result[0]).toMatchObject({ kind: 'recorded', noticeId, created: false });
    expect(result[1]).toMatchObject({ kind: 'recorded', created: true });
    expect(enqueued).toBe(2);
    expect(world.enqueued.map((e) => e.ref.noticeId)).not.toContain(noticeId);
  });

  it('property: whatever is archived when, each (notice, channel) is sent at most once', async () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('submit' as const),
        event: fc.integer({ min: 0, max: 2 }),
        channels: fc.subarray(['email', 'sms'] as Channel[], { minLength: 1 }),
      }),
      fc.record({ kind: fc.constant('deliver' as const) }),
      fc.record({ kind: fc.constant('window' as const), event: fc.integer({ min: 0, max: 2 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 14 }), async (steps) => {
        const world = fakeWorld();
        const idOf = (event: number) =>
          deriveNoticeId(EXAMPLE_REQUEST.eventType, `evt_p${event}`, EXAMPLE_REQUEST.recipient.id);
        for (const s of steps) {
          world.clock.advance(DAY);
          if (s.kind === 'submit') {
            await submitNotice(
              requestAt(world, { eventId: `evt_p${s.event}`, channels: s.channels }),
              world.deps,
            );
          } else if (s.kind === 'deliver') {
            await deliverQueued(world);
          } else {
            // TTL: only resolved rows leave the table
            const rows = await world.store.getNotice(idOf(s.event));
            const resolved = rows.filter((r) => r.state === 'delivered').map((r) => r.channel);
            if (resolved.length > 0) await passHotWindow(world, idOf(s.event), resolved);
          }
        }
        await deliverQueued(world);
        const messages = [
          ...world.email.sent.map((m) => `${m.correlationId}`),
          ...world.sms.sent.map((m) => `${m.correlationId}`),
        ];
        expect(new Set(messages).size).toBe(messages.length);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the timeline after the hot window', () => {
  it('reads the same story from the archive: the same transitions, source archive, nothing next', async () => {
    // Prepare
    const { world, noticeId, before } = await archivedNotice();
    if (!before) throw new Error('not found before the window');

    // Act
    const after = await readNotice(noticeId, OPERATOR, world.deps);

    // Assess
    if (!after) throw new Error('not found after the window');
    const [b, a] = [before, after].map((read) =>
      toTimeline(read as [(typeof read)[number], ...typeof read], { now: world.clock.now() }),
    );
    expect(b?.source).toBe('ledger');
    expect(a?.source).toBe('archive');
    expect(a?.channels.map((c) => c.source)).toEqual(['archive', 'archive']);
    const story = (t: typeof a) => t?.channels.map(({ source: _s, next: _n, ...rest }) => rest);
    expect(story(a)).toEqual(story(b));
    expect(a?.channels.map((c) => c.next)).toEqual([
      { kind: 'none', at: null, summary: 'nothing: delivered (archived: past the hot window, final)' },
      { kind: 'none', at: null, summary: 'nothing: delivered (archived: past the hot window, final)' },
    ]);
    expect({ ...a, source: 'ledger', channels: [] }).toEqual({ ...b, channels: [] });
    // One Query of the key records, one object read per archived channel
    expect(world.archive.requests.objectReads).toBe(2);
  });

  it("visibility as for rows: another submitter's archived notice is not found", async () => {
    const { world, noticeId } = await archivedNotice(fakeWorld(), SUBMITTER_A);
    expect(await readNotice(noticeId, SUBMITTER_B, world.deps)).toBeUndefined();
    expect((await readNotice(noticeId, SUBMITTER_A, world.deps))?.map((c) => c.source)).toEqual([
      'archive',
      'archive',
    ]);
    expect(world.archive.requests.objectReads).toBe(2); // none for the refused caller
  });

  it('a key record whose archive object lacks the row is a broken archive, not a shorter story', async () => {
    const { world, noticeId } = await archivedNotice();
    for (const key of world.archive.objects.keys()) world.archive.objects.set(key, []);
    await expect(readNotice(noticeId, OPERATOR, world.deps)).rejects.toBeInstanceOf(ArchiveMissingRowError);
  });
});

describe('operator acts on an archived notice', () => {
  it('a resolution is refused as archived (final), a cancel of an all-archived notice too', async () => {
    // Prepare
    const { world, noticeId } = await archivedNotice();

    // Act
    const resolution = await resolveChannel(
      noticeId,
      'sms',
      { outcome: 'accepted', reason: 'seen in the console', actor: OPERATOR.principal },
      world.deps,
    );
    const cancel = await cancelNotice(
      noticeId,
      { reason: 'called off', actor: OPERATOR.principal },
      OPERATOR,
      world.deps,
    );

    // Assess
    expect(resolution).toEqual({ kind: 'archived', state: 'delivered' });
    expect(cancel).toEqual({
      kind: 'archived',
      channels: [
        { channel: 'email', state: 'delivered', cancelled: false, decision: 'archived' },
        { channel: 'sms', state: 'delivered', cancelled: false, decision: 'archived' },
      ],
    });
    expect(await world.store.getNotice(noticeId)).toEqual([]);
  });

  it('a cancel of a notice with a channel still open cancels that one and reports the archived one', async () => {
    // Prepare: e-mail delivered and archived; SMS added by a later request, not yet sent
    const { world, noticeId } = await archivedNotice(fakeWorld(), undefined, ['email']);
    await submitNotice(requestAt(world), world.deps);

    // Act
    const cancel = await cancelNotice(
      noticeId,
      { reason: 'called off', actor: OPERATOR.principal },
      OPERATOR,
      world.deps,
    );

    // Assess
    expect(cancel).toEqual({
      kind: 'cancelled',
      channels: [
        { channel: 'email', state: 'delivered', cancelled: false, decision: 'archived' },
        { channel: 'sms', state: 'failed', cancelled: true, decision: 'cancel' },
      ],
    });
  });
});
