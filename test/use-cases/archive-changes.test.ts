import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Archive, archiveObjectKey } from '../../lambdas/contract/archive.ts';
import { type ArchiveChange, archivePartsOf } from '../../lambdas/domain/archive-record.ts';
import { type ArchiveResult, archiveChanges } from '../../lambdas/use-cases/archive-changes.ts';
import { batchOf, changeStream, MemoryArchiveObjects, MemoryKeyRecords } from '../helpers/archive.ts';

const NOW = Date.parse('2026-12-01T00:10:00Z');

function harness() {
  const store = new MemoryArchiveObjects();
  const keyRecords = new MemoryKeyRecords();
  const deps = { store, keyRecords, clock: { now: () => NOW }, retentionYears: 6 };
  return { store, keyRecords, deps };
}

/** Every fact of the changes, as the archive must hold it: each once. */
const expectedFacts = (changes: readonly ArchiveChange[]) =>
  changes.flatMap((change) => archivePartsOf(change).facts);

/** Facts as comparable strings (a multiset: a fact held twice shows twice). */
const sorted = (lines: readonly object[]) => lines.map((line) => JSON.stringify(line)).sort();

/** The name of the object whose first record is `change` (lambdas/contract/archive.ts). */
const keyOf = (prefix: 'facts/' | 'rows/', change: ArchiveChange | undefined) =>
  archiveObjectKey(prefix, {
    day: new Date(change?.createdAt ?? 0).toISOString().slice(0, 10),
    streamLabel: 'label',
    sequence: change?.sequence ?? '',
  });

function expectNoFailure(result: ArchiveResult) {
  expect(result.error).toBeUndefined();
  expect(result.failedAt).toBeUndefined();
}

describe('archiveChanges: one batch', () => {
  const changes = changeStream(4);

  it('writes the facts object, then the rows object, then a key record per settled row pointing at it', async () => {
    const { store, keyRecords, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    const result = await archiveChanges(batch, deps);
    expectNoFailure(result);
    const facts = 'facts/day=2026-11-30/label/99990.jsonl.gz';
    // The first settled row (the first delivery) is past midnight: its object is in the next day.
    const rows = keyOf('rows/', changes[12]);
    expect(rows).toBe('rows/day=2026-12-01/label/100008.jsonl.gz');
    expect([...store.objects.keys()]).toEqual([facts, rows]);
    expect(store.objects.get(facts)?.lastSequence).toBe(batch.last.sequence);
    expect(store.objects.get(rows)?.lastSequence).toBe(batch.last.sequence);
    expect(sorted(store.lines(Archive.factsPrefix))).toEqual(sorted(expectedFacts(changes)));
    // 4 rows × (5 records + expired).
    expect(result).toMatchObject({
      factsArchived: 24,
      rowsArchived: 4,
      keyRecordsWritten: 4,
      objectsWritten: 2,
    });
    // One line per row per object: the row's latest form (the late complaint after delivery).
    const rowLines = store.lines(Archive.rowsPrefix) as { transitions: unknown[]; envelope?: unknown }[];
    expect(rowLines.map((row) => row.transitions.length)).toEqual([5, 5, 5, 5]);
    for (const row of rowLines) expect(row).not.toHaveProperty('envelope');
    expect([...keyRecords.records.values()].map((w) => w.record.rowsObject)).toEqual([
      rows,
      rows,
      rows,
      rows,
    ]);
    const write = [...keyRecords.records.values()][0];
    // Settled (delivered) 5 s after it was created at 23:59:00; kept six years from then.
    expect(new Date(write?.expiresAt ?? 0).toISOString()).toBe('2032-11-30T23:59:05.000Z');
    expect(result.lagMs).toBe(NOW - Date.parse('2026-11-30T23:59:00Z'));
  });

  it('a batch with nothing to archive writes nothing', async () => {
    const { store, keyRecords, deps } = harness();
    const only = changeStream(1).slice(1, 3); // sending, accepted: transitions, no settled row
    const result = await archiveChanges({ ...batchOf(only, 0, 2), changes: [] }, deps);
    expectNoFailure(result);
    expect(store.objects.size).toBe(0);
    expect(keyRecords.writes).toBe(0);
  });
});

describe('archiveChanges: redelivery never writes a fact twice', () => {
  const changes = changeStream(5);

  it('the same batch handed twice: the second writes nothing and says what it skipped', async () => {
    const { store, keyRecords, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    expectNoFailure(await archiveChanges(batch, deps));
    const before = structuredClone([...store.objects]);
    const again = await archiveChanges(batch, deps);
    expectNoFailure(again);
    expect(again).toMatchObject({ factsArchived: 0, rowsArchived: 0, objectsWritten: 0 });
    expect(again.duplicatesSkipped).toBe(expectedFacts(changes).length + 5);
    expect([...store.objects]).toEqual(before);
    // The key records are written again, whole: the same records.
    expect(keyRecords.records.size).toBe(5);
  });

  it('a batch extended past a written object: only the rest, under the rest’s first record', async () => {
    const { store, keyRecords, deps } = harness();
    expectNoFailure(await archiveChanges(batchOf(changes, 0, 11), deps));
    const extended = await archiveChanges(batchOf(changes, 0, changes.length), deps);
    expectNoFailure(extended);
    expect(extended.duplicatesSkipped).toBeGreaterThan(0);
    expect(store.objects.has(keyOf('facts/', changes[11]))).toBe(true);
    expect(sorted(store.lines(Archive.factsPrefix))).toEqual(sorted(expectedFacts(changes)));
    // Each key record names the object holding its row's latest line.
    for (const { record } of keyRecords.records.values()) {
      const object = store.objects.get(record.rowsObject);
      const line = (
        (object?.lines ?? []) as { noticeId: string; channel: string; transitions: unknown[] }[]
      ).find((row) => row.noticeId === record.noticeId && row.channel === record.channel);
      expect(line?.transitions).toHaveLength(5);
    }
  });

  it('a batch handed shorter than an object already written: nothing written, and said (the one case the rule cannot cover)', async () => {
    const { deps } = harness();
    expectNoFailure(await archiveChanges(batchOf(changes, 0, changes.length), deps));
    const shorter = await archiveChanges(batchOf(changes, 0, 11), deps);
    expectNoFailure(shorter);
    expect(shorter).toMatchObject({ factsArchived: 0, objectsWritten: 0 });
    expect(shorter.overreaching).toBe(keyOf('facts/', changes[0]));
    // The same batch again, or a longer one, is not shorter: nothing said.
    expect((await archiveChanges(batchOf(changes, 0, changes.length), deps)).overreaching).toBeUndefined();
  });

  it('a crash between the two objects: the batch is answered at its first record, and the next delivery writes the rows only', async () => {
    const { store, keyRecords, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    store.fault = (operation, key) => {
      if (operation === 'put' && key.startsWith(Archive.rowsPrefix)) throw new Error('connection reset');
    };
    const crashed = await archiveChanges(batch, deps);
    expect(crashed.failedAt).toBe(batch.first.sequence);
    expect(crashed.factsArchived).toBe(expectedFacts(changes).length);
    expect(keyRecords.writes).toBe(0);
    store.fault = () => {};
    const retried = await archiveChanges(batch, deps);
    expectNoFailure(retried);
    expect(retried).toMatchObject({ factsArchived: 0, rowsArchived: 5, keyRecordsWritten: 5 });
    expect(sorted(store.lines(Archive.factsPrefix))).toEqual(sorted(expectedFacts(changes)));
  });

  it('a crash before the key records: the objects are found, the key records written', async () => {
    const { store, keyRecords, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    keyRecords.fault = () => {
      throw new Error('throttled');
    };
    expect((await archiveChanges(batch, deps)).failedAt).toBe(batch.first.sequence);
    keyRecords.fault = () => {};
    const retried = await archiveChanges(batch, deps);
    expectNoFailure(retried);
    expect(retried).toMatchObject({ objectsWritten: 0, keyRecordsWritten: 5 });
    expect(store.objects.size).toBe(2);
  });

  it('a concurrent writer taking the name between the look and the write: looked up again, not written twice', async () => {
    const { store, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    const other = harness();
    await archiveChanges(batch, other.deps);
    let raced = false;
    store.beforePut = (key) => {
      const theirs = other.store.objects.get(key);
      if (!raced && theirs) {
        raced = true;
        store.objects.set(key, theirs);
      }
    };
    const result = await archiveChanges(batch, deps);
    expectNoFailure(result);
    expect(raced).toBe(true);
    expect(sorted(store.lines(Archive.factsPrefix))).toEqual(sorted(expectedFacts(changes)));
  });

  it('an object whose metadata ends before its own first record is never overwritten: the batch fails', async () => {
    const { store, deps } = harness();
    const batch = batchOf(changes, 0, changes.length);
    const key = `facts/day=2026-11-30/label/${batch.first.sequence}.jsonl.gz`;
    store.objects.set(key, { lines: [], lastSequence: '1' });
    const result = await archiveChanges(batch, deps);
    expect(result.failedAt).toBe(batch.first.sequence);
    expect(String(result.error)).toContain('ends (1) before its own first record');
    expect(store.objects.get(key)?.lines).toEqual([]);
  });

  it('any deliveries from the checkpoint (same or longer batches) with crashes anywhere: each fact once, every key record in place', async () => {
    const all = changeStream(6, 9_995n);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ grow: fc.nat(12), crashAt: fc.option(fc.nat(8), { nil: undefined }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (deliveries) => {
          const { store, keyRecords, deps } = harness();
          let checkpoint = 0;
          let length = 0;
          for (const { grow, crashAt } of deliveries) {
            if (checkpoint >= all.length) break;
            // A delivery from the checkpoint never shrinks (the event source hands the batch again, or more).
            length = Math.min(all.length - checkpoint, Math.max(length, 1) + grow);
            let operations = 0;
            store.fault = () => {
              if (crashAt !== undefined && operations++ === crashAt) throw new Error('crash');
            };
            const result = await archiveChanges(batchOf(all, checkpoint, checkpoint + length), deps);
            if (result.failedAt === undefined) {
              checkpoint += length;
              length = 0;
            } else {
              expect(result.failedAt).toBe(all[checkpoint]?.sequence);
            }
          }
          store.fault = () => {};
          if (checkpoint < all.length) {
            expectNoFailure(await archiveChanges(batchOf(all, checkpoint, all.length), deps));
          }
          expect(sorted(store.lines(Archive.factsPrefix))).toEqual(sorted(expectedFacts(all)));
          expect(keyRecords.records.size).toBe(6);
          for (const { record } of keyRecords.records.values()) {
            const lines = store.objects.get(record.rowsObject)?.lines as {
              noticeId: string;
              transitions: unknown[];
            }[];
            expect(lines.find((row) => row.noticeId === record.noticeId)?.transitions).toHaveLength(5);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
