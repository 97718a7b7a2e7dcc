import type { ArchiveBatch, ArchiveChange } from '../../lambdas/domain/archive-record.ts';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planFact, planTransition } from '../../lambdas/domain/transition.ts';
import type {
  ArchiveObjectStore,
  KeyRecordWrite,
  KeyRecordWriter,
} from '../../lambdas/ports/archive-writer.port.ts';
import { newIntent, TEST_TIMING } from './factories.ts';

/** An in-memory archive bucket: write-once objects with their `last-sequence`, and scripted faults. */
export class MemoryArchiveObjects implements ArchiveObjectStore {
  readonly objects = new Map<string, { lines: readonly object[]; lastSequence: string }>();
  /** Called before each operation; throwing from it is a fault of that operation. */
  fault: (operation: 'head' | 'put', key: string) => void = () => {};
  /** Called after a head that found nothing, before the put: another writer may take the name here. */
  beforePut: (key: string) => void = () => {};
  heads = 0;
  puts = 0;

  async lastSequenceOf(key: string): Promise<string | undefined> {
    this.heads += 1;
    this.fault('head', key);
    return this.objects.get(key)?.lastSequence;
  }

  async putIfAbsent(
    key: string,
    lines: readonly object[],
    lastSequence: string,
  ): Promise<'written' | 'exists'> {
    this.beforePut(key);
    this.puts += 1;
    this.fault('put', key);
    if (this.objects.has(key)) return 'exists';
    this.objects.set(key, { lines: structuredClone(lines), lastSequence });
    return 'written';
  }

  /** Every line under a prefix, over all objects. */
  lines(prefix: string): Record<string, unknown>[] {
    return [...this.objects]
      .filter(([key]) => key.startsWith(prefix))
      .flatMap(([, object]) => object.lines as Record<string, unknown>[]);
  }
}

/** Key records in memory, the last write of each (notice, channel) standing, with a scripted fault. */
export class MemoryKeyRecords implements KeyRecordWriter {
  readonly records = new Map<string, KeyRecordWrite>();
  fault: (write: KeyRecordWrite) => void = () => {};
  writes = 0;

  async writeKeyRecords(writes: readonly KeyRecordWrite[]): Promise<void> {
    for (const write of writes) {
      this.fault(write);
      this.writes += 1;
      this.records.set(`${write.record.noticeId}#${write.record.channel}`, structuredClone(write));
    }
  }
}

const POLICY = { baseMs: 1000, capMs: 60_000, maxAttempts: 5 };

/** The images of one row's life: reserved, sending, accepted, delivered, a late complaint. */
export function rowLife(start: number, channel: 'email' | 'sms' = 'email'): Intent[] {
  const reserved = newIntent({ channel, createdAt: start });
  const decision = decideClaim(reserved, { now: start + 100, workerId: 'w1', timing: TEST_TIMING });
  if (decision.kind !== 'claim') throw new Error(decision.why);
  const sending = decision.plan.next;
  const accepted = planOutcome(
    sending,
    { kind: 'accepted', receiptId: `rcpt-${start}` },
    { now: start + 300, provider: 'ses', policy: POLICY, random: () => 0.5, timing: TEST_TIMING },
  ).next;
  const delivered = planTransition(
    accepted,
    { to: 'delivered', reason: Reason.deliveryReported, at: start + 5_000 },
    TEST_TIMING,
  ).next;
  const complained = planFact(delivered, { reason: Reason.complaint, at: start + 9_000 }).next;
  return [reserved, sending, accepted, delivered, complained];
}

/**
 * A stream of changes for `rows` rows, interleaved (row i's k-th change after row i−1's), each
 * row's life from insert to a late fact and then its removal; sequence numbers start at
 * `firstSequence` (pick one just below a power of ten to cross a digit-length boundary) and the
 * creation times cross a UTC midnight.
 */
export function changeStream(rows: number, firstSequence = 99_990n): ArchiveChange[] {
  const start = Date.parse('2026-11-30T23:59:00Z');
  const lives = Array.from({ length: rows }, (_, i) =>
    rowLife(start + i * 1_000, i % 2 === 0 ? 'email' : 'sms'),
  );
  const changes: ArchiveChange[] = [];
  let sequence = firstSequence;
  const push = (oldImage: Intent | undefined, newImage: Intent | undefined) => {
    changes.push({
      family: 'intent',
      sequence: String(sequence),
      createdAt: start + Number(sequence - firstSequence) * 7_000,
      oldImage,
      newImage,
    });
    sequence += 1n + (sequence % 3n);
  };
  const steps = (lives[0]?.length ?? 0) + 1;
  for (let step = 0; step < steps; step++) {
    for (const life of lives) push(life[step - 1], life[step]);
  }
  return changes;
}

/** The batch of stream records [from, to) of `changes` (every record is an archived change here). */
export function batchOf(
  changes: readonly ArchiveChange[],
  from: number,
  to: number,
  label = 'label',
): ArchiveBatch {
  const slice = changes.slice(from, to);
  const first = slice[0];
  const last = slice[slice.length - 1];
  if (!first || !last) throw new Error('empty batch');
  return {
    streamLabel: label,
    first: { sequence: first.sequence, createdAt: first.createdAt },
    last: { sequence: last.sequence, createdAt: last.createdAt },
    changes: slice,
  };
}
