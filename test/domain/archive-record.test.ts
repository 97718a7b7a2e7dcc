import { describe, expect, it } from 'vitest';
import { ARCHIVE_FACT_COLUMNS, archiveObjectKey, streamLabelOf } from '../../lambdas/contract/archive.ts';
import {
  type ArchiveChange,
  archivedIntentOf,
  archivePartsOf,
  isSameKeyedContent,
  KEY_DIGEST_CHARS,
  keyRecordExpiry,
  keyRecordOf,
} from '../../lambdas/domain/archive-record.ts';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import { canSeeKeyRecord, principalDigest } from '../../lambdas/domain/caller.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planFact, planFollowUpEnd, planTransition } from '../../lambdas/domain/transition.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

const POLICY = { baseMs: 1000, capMs: 60_000, maxAttempts: 5 };
const claim = (row: Intent, now: number) => {
  const decision = decideClaim(row, { now, workerId: 'w1', timing: TEST_TIMING });
  if (decision.kind !== 'claim') throw new Error(decision.why);
  return decision.plan.next;
};
const outcome = (row: Intent, result: ProviderOutcome, now: number) =>
  planOutcome(row, result, { now, provider: 'ses', policy: POLICY, random: () => 0.5, timing: TEST_TIMING })
    .next;
const deliver = (row: Intent, at: number) =>
  planTransition(row, { to: 'delivered', reason: Reason.deliveryReported, at }, TEST_TIMING).next;

let sequence = 100;
function change(
  oldImage: Intent | undefined,
  newImage: Intent | undefined,
  createdAt = T0 + 60_000,
): ArchiveChange {
  sequence += 1;
  return { family: 'intent', sequence: String(sequence), createdAt, oldImage, newImage };
}

/** A row reserved, claimed, accepted (the three states before the report). */
function acceptedRow() {
  const reserved = newIntent();
  const sending = claim(reserved, T0 + 100);
  const accepted = outcome(sending, { kind: 'accepted', receiptId: 'ses-0001' }, T0 + 300);
  return { reserved, sending, accepted };
}

describe('fact lines of a change', () => {
  it('an insert: its intake record, with the row’s columns on the line', () => {
    const row = newIntent();
    const { facts, resolved } = archivePartsOf(change(undefined, row));
    expect(facts).toEqual([
      {
        kind: 'transition',
        notice_id: row.noticeId,
        channel: 'email',
        event_type: 'lab-result-ready',
        event_id: row.eventId,
        recipient_id: 'pat_1042',
        template_id: 'lab-result-ready',
        template_version: 'v3',
        dest_fingerprint: row.destination.fingerprint,
        dest_masked: row.destination.masked,
        created_at: '2026-11-30T10:00:00.000Z',
        deadline: '2026-12-01T10:00:00.000Z',
        stream_sequence: String(sequence),
        seq: 1,
        at: '2026-11-30T10:00:00.000Z',
        to_state: 'reserved',
        reason: 'intake',
      },
    ]);
    expect(resolved).toBeUndefined();
  });

  it('a modification: only the records above the old image’s version, however many one write appended', () => {
    const { reserved, accepted } = acceptedRow();
    // One change from reserved straight to accepted (two records appended since the old image).
    const { facts } = archivePartsOf(change(reserved, accepted));
    expect(facts.map((line) => [line.seq, line.from_state, line.to_state])).toEqual([
      [2, 'reserved', 'sending'],
      [3, 'sending', 'accepted'],
    ]);
    expect(facts[1]).toMatchObject({ provider: 'ses', provider_receipt_id: 'ses-0001', attempt: 1 });
  });

  it('a modification that appends no record (the escalation marker, the TTL) adds no fact', () => {
    const { accepted } = acceptedRow();
    expect(archivePartsOf(change(accepted, { ...accepted, escalationPending: true })).facts).toEqual([]);
  });

  it('a removal (TTL): one expired line with the state the row left in, at the removal', () => {
    const { accepted } = acceptedRow();
    const delivered = deliver(accepted, T0 + 5_000);
    const removedAt = Date.parse('2027-01-04T10:00:00Z');
    const { facts, resolved } = archivePartsOf(change(delivered, undefined, removedAt));
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({
      kind: 'expired',
      notice_id: delivered.noticeId,
      seq: delivered.version,
      to_state: 'delivered',
      at: '2027-01-04T10:00:00.000Z',
    });
    expect(facts[0]).not.toHaveProperty('from_state');
    // Its settled form was archived when it settled, not again now.
    expect(resolved).toBeUndefined();
  });

  it('a suppression history insert: one suppression line', () => {
    const line = archivePartsOf({
      family: 'suppression',
      sequence: '7',
      createdAt: T0,
      channel: 'sms',
      fingerprint: 'fp_abc',
      masked: '+1******4567',
      record: {
        action: 'suppress',
        reason: 'hard_bounce',
        source: 'provider',
        actor: 'twilio',
        at: T0,
        code: '30006',
      },
    }).facts;
    expect(line).toEqual([
      {
        kind: 'suppression',
        channel: 'sms',
        dest_fingerprint: 'fp_abc',
        dest_masked: '+1******4567',
        at: '2026-11-30T10:00:00.000Z',
        action: 'suppress',
        reason: 'hard_bounce',
        source: 'provider',
        actor: 'twilio',
        detail: '30006',
        stream_sequence: '7',
      },
    ]);
  });
});

describe('the settled row and its key record', () => {
  it('a row that settles: its archived form, nothing sealed, no lease, no due time; settled at its terminal record', () => {
    const { accepted } = acceptedRow();
    const delivered = deliver({ ...accepted, fallbackEnvelope: 'sealed-fallback' }, T0 + 5_000);
    const { resolved } = archivePartsOf(change(accepted, delivered));
    expect(resolved?.resolvedAt).toBe(T0 + 5_000);
    expect(resolved?.row).toEqual(JSON.parse(JSON.stringify(archivedIntentOf(delivered))));
    for (const field of ['envelope', 'fallbackEnvelope', 'leaseOwner', 'leaseExpiresAt', 'dueAt']) {
      expect(resolved?.row).not.toHaveProperty(field);
    }
    expect(resolved?.row.transitions.map((r) => r.to)).toEqual([
      'reserved',
      'sending',
      'accepted',
      'delivered',
    ]);
  });

  it('an open row writes no row; a late fact on a settled row writes it again, settled when it first settled', () => {
    const { reserved, sending, accepted } = acceptedRow();
    expect(archivePartsOf(change(reserved, sending)).resolved).toBeUndefined();
    expect(archivePartsOf(change(sending, accepted)).resolved).toBeUndefined();
    const delivered = deliver(accepted, T0 + 5_000);
    const complained = planFact(delivered, { reason: Reason.complaint, at: T0 + 90_000 }).next;
    const { facts, resolved } = archivePartsOf(change(delivered, complained));
    expect(facts.map((line) => [line.from_state, line.to_state, line.reason])).toEqual([
      ['delivered', 'delivered', 'complaint'],
    ]);
    expect(resolved?.row.transitions).toHaveLength(5);
    expect(resolved?.resolvedAt).toBe(T0 + 5_000);
  });

  it('a settled row changed in nothing the archive keeps writes no row again', () => {
    const { accepted } = acceptedRow();
    const delivered = deliver(accepted, T0 + 5_000);
    // The lease and envelope are not archived: a change of only those alters no archived form.
    expect(archivePartsOf(change(delivered, { ...delivered, envelope: 'other' })).resolved).toBeUndefined();
    expect(
      archivePartsOf(change(delivered, { ...delivered, escalationPending: true })).resolved,
    ).toBeDefined();
  });

  it('an accepted row whose follow-up ended is settled (it leaves the open index): row and key record then', () => {
    const { accepted } = acceptedRow();
    const ended = planFollowUpEnd(accepted, T0 + 3 * 86_400_000, 'no final report').next;
    const { resolved } = archivePartsOf(change(accepted, ended));
    expect(resolved?.row.state).toBe('accepted');
    expect(resolved?.resolvedAt).toBe(T0 + 3 * 86_400_000);
  });

  it('a row removed before it settled keeps its last form (TTL never removes one; whatever did)', () => {
    const { sending } = acceptedRow();
    const removedAt = T0 + 999_000;
    const { resolved } = archivePartsOf(change(sending, undefined, removedAt));
    expect(resolved?.row.state).toBe('sending');
    expect(resolved?.resolvedAt).toBe(removedAt);
    expect(resolved?.row).not.toHaveProperty('leaseOwner');
  });

  it('the key record: ids, the state, the content digest cut to 132 bits, the object; nothing else', () => {
    const { accepted } = acceptedRow();
    const row = archivedIntentOf(deliver(accepted, T0 + 5_000));
    const record = keyRecordOf(row, 'rows/day=2026-11-30/s/1.jsonl.gz');
    expect(record).toEqual({
      noticeId: row.noticeId,
      channel: 'email',
      state: 'delivered',
      contentDigest: row.contentDigest.slice(0, KEY_DIGEST_CHARS),
      rowsObject: 'rows/day=2026-11-30/s/1.jsonl.gz',
    });
    expect(KEY_DIGEST_CHARS * 6).toBeGreaterThanOrEqual(128);
    expect(row.contentDigest.length).toBeGreaterThan(KEY_DIGEST_CHARS);
  });

  it('the key record keeps the submitter as its digest, which a caller’s principal is compared as', () => {
    const { accepted } = acceptedRow();
    const principal = 'arn:aws:iam::123456789012:role/lab-results';
    const row = archivedIntentOf({ ...deliver(accepted, T0 + 5_000), submitter: principal });
    const record = keyRecordOf(row, 'rows/day=2026-11-30/s/1.jsonl.gz');
    expect(record.submitterDigest).toBe(principalDigest(principal));
    expect(JSON.stringify(record)).not.toContain('lab-results');
    expect(canSeeKeyRecord({ role: 'submitter', principal }, record)).toBe(true);
    expect(canSeeKeyRecord({ role: 'submitter', principal: `${principal}-other` }, record)).toBe(false);
    expect(
      canSeeKeyRecord({ role: 'operator', principal: 'arn:aws:iam::123456789012:role/ops' }, record),
    ).toBe(true);
    // A row recorded without a submitter: seen by operators only, as the row itself would be.
    const anonymous = keyRecordOf(archivedIntentOf(deliver(accepted, T0 + 5_000)), 'rows/x');
    expect(canSeeKeyRecord({ role: 'submitter', principal }, anonymous)).toBe(false);
  });

  it('compares a request’s content with the key record’s cut digest', () => {
    const { accepted } = acceptedRow();
    const row = archivedIntentOf(deliver(accepted, T0 + 5_000));
    const record = keyRecordOf(row, 'rows/x');
    expect(isSameKeyedContent(record, { contentDigest: row.contentDigest })).toBe(true);
    const other = `${row.contentDigest.slice(0, KEY_DIGEST_CHARS - 1)}${row.contentDigest[KEY_DIGEST_CHARS - 1] === 'A' ? 'B' : 'A'}${row.contentDigest.slice(KEY_DIGEST_CHARS)}`;
    expect(isSameKeyedContent(record, { contentDigest: other })).toBe(false);
  });

  it('a key record expires the retention’s calendar years after its row settled (UTC)', () => {
    expect(new Date(keyRecordExpiry(Date.parse('2027-03-01T12:00:00Z'), 6)).toISOString()).toBe(
      '2033-03-01T12:00:00.000Z',
    );
    expect(new Date(keyRecordExpiry(Date.parse('2028-02-29T00:00:00Z'), 6)).toISOString()).toBe(
      '2034-03-01T00:00:00.000Z',
    );
  });
});

describe('nothing raw or sealed reaches the archive', () => {
  it('fields planted on a row (a raw address, a variable) appear in no line and no row; lines hold only the contract’s columns', () => {
    const { accepted } = acceptedRow();
    const delivered = deliver(accepted, T0 + 5_000);
    const planted = {
      ...delivered,
      envelope: 'SEALED-ENVELOPE',
      fallbackEnvelope: 'SEALED-FALLBACK',
      leaseOwner: 'worker-LEASE',
      rawDestination: 'patient@example.com',
      variables: { firstName: 'Ada-SECRET' },
      destination: { ...delivered.destination, address: 'patient@example.com' },
      transitions: delivered.transitions.map((record) => ({ ...record, raw: 'Ada-SECRET' })),
    } as Intent;
    const parts = [change(undefined, planted), change(accepted, planted), change(planted, undefined)].map(
      archivePartsOf,
    );
    const text = JSON.stringify(parts);
    for (const secret of ['patient@example.com', 'Ada-SECRET', 'SEALED', 'LEASE'])
      expect(text).not.toContain(secret);
    const columns = new Set<string>(ARCHIVE_FACT_COLUMNS.map((column) => column.name));
    for (const line of parts.flatMap((p) => p.facts)) {
      for (const key of Object.keys(line)) expect(columns.has(key), key).toBe(true);
    }
    expect(parts[1]?.resolved).toBeDefined();
  });
});

describe('object names (lambdas/contract/archive.ts)', () => {
  it('day partition, the stream’s label, the first record’s sequence number', () => {
    const label = streamLabelOf(
      'arn:aws:dynamodb:us-east-1:123456789012:table/notice-ledger/stream/2026-05-01T12:00:00.000',
    );
    expect(label).toBe('2026-05-01T120000.000');
    expect(streamLabelOf(undefined)).toBe('stream');
    expect(
      archiveObjectKey('facts/', {
        day: '2027-03-01',
        streamLabel: label,
        sequence: '4421584500000000017450439091',
      }),
    ).toBe('facts/day=2027-03-01/2026-05-01T120000.000/4421584500000000017450439091.jsonl.gz');
  });

  it('the column list names each column once, snake_case, with a Glue type', () => {
    const names = ARCHIVE_FACT_COLUMNS.map((column) => column.name);
    expect(new Set(names).size).toBe(names.length);
    for (const column of ARCHIVE_FACT_COLUMNS) {
      expect(column.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(['string', 'int', 'bigint']).toContain(column.type);
    }
  });
});
