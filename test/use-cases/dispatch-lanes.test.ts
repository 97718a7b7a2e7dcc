import { describe, expect, it } from 'vitest';
import { MemoryRateClock } from '../../lambdas/adapters/memory/memory-rate-clock.ts';
import type { Channel } from '../../lambdas/domain/channel.ts';
import type { Priority } from '../../lambdas/domain/priority.ts';
import { budgetRules } from '../../lambdas/domain/rate-budget.ts';
import type { Admission, SendGate } from '../../lambdas/ports/send-gate.port.ts';
import { BudgetSendGate } from '../../lambdas/use-cases/budget-send-gate.ts';
import { deliver } from '../../lambdas/use-cases/deliver.ts';
import { RateBudget } from '../../lambdas/use-cases/rate-budget.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { EXAMPLE_REQUEST, type FakeWorld, fakeWorld, ScriptedBatchTransport } from '../helpers/fakes.ts';

/**
 * Priority through a batching provider (docs/architecture.md §4 "One dispatch path", §11): a
 * provider call is one admission to the channel's gate, booked in the highest lane among the
 * rows it carries; a deferral returns every row to its own lane. Written first against the
 * batch path that asked the gate with no priority (issue 20).
 */

/** A gate that records each admission and answers from a script (default: go). */
class RecordingGate implements SendGate {
  readonly admissions: { channel: Channel; priority: Priority | undefined }[] = [];
  answer: Admission = { kind: 'go' };
  async admit(channel: Channel, priority?: Priority): Promise<Admission> {
    this.admissions.push({ channel, priority });
    return this.answer;
  }
  async throttled(): Promise<void> {}
  async hold(): Promise<void> {}
}

function world(gate: SendGate): FakeWorld & { batch: ScriptedBatchTransport } {
  const batch = new ScriptedBatchTransport('batchy');
  const base = fakeWorld({ channelProviders: { email: 'batchy', sms: 'twilio' } });
  return {
    ...base,
    batch,
    deps: { ...base.deps, gate, transports: { ...base.deps.transports, email: batch } },
  };
}

async function emails(w: FakeWorld, priorities: readonly Priority[], tag: string) {
  const refs = [];
  for (const [i, priority] of priorities.entries()) {
    const result = await submitNotice(
      {
        ...EXAMPLE_REQUEST,
        eventId: `evt_${tag}_${i}`,
        recipient: { id: `pat_${tag}_${i}`, email: `patient.${tag}.${i}@example.com` },
        channels: ['email'],
        priority,
      },
      w.deps,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    refs.push(w.enqueued.at(-1)?.ref as NonNullable<FakeWorld['enqueued'][number]>['ref']);
  }
  w.enqueued.length = 0;
  return refs;
}

describe('one dispatch path: priority through a batching provider', () => {
  it('critical e-mails in a batch the gate defers come back on the critical lane, having asked as critical', async () => {
    const gate = new RecordingGate();
    const w = world(gate);
    const refs = await emails(w, ['critical', 'critical', 'critical'], 'c');
    expect(refs.every((r) => r.priority === 'critical')).toBe(true);

    gate.answer = { kind: 'wait', untilMs: w.clock.now() + 5_000 };
    const steps = await deliver(refs, w.deps, { maxBatch: 100 });

    expect(steps.map((s) => s.kind)).toEqual(['deferred', 'deferred', 'deferred']);
    // One admission for the one call, in the critical lane.
    expect(gate.admissions).toEqual([{ channel: 'email', priority: 'critical' }]);
    // Every row back in its own (critical) lane, when the gate opens.
    expect(w.enqueued.map((e) => e.ref)).toEqual(refs);
    expect(w.enqueued.every((e) => e.delayMs === 5_000)).toBe(true);
    expect(w.batch.calls).toHaveLength(0);
  });

  it('a call carrying several lanes books once, in the highest; a deferral returns each row to its own lane', async () => {
    const gate = new RecordingGate();
    const w = world(gate);
    const refs = await emails(w, ['bulk', 'critical', 'standard', 'bulk'], 'm');

    gate.answer = { kind: 'wait', untilMs: w.clock.now() + 2_000 };
    await deliver(refs, w.deps, { maxBatch: 100 });
    expect(gate.admissions).toEqual([{ channel: 'email', priority: 'critical' }]);
    expect(w.enqueued.map((e) => e.ref.priority)).toEqual(['bulk', 'critical', undefined, 'bulk']);

    gate.answer = { kind: 'go' };
    await deliver(refs, w.deps, { maxBatch: 100 });
    expect(gate.admissions).toHaveLength(2);
    expect(w.batch.calls).toHaveLength(1);
    expect(w.batch.calls[0]?.messages).toHaveLength(4);
  });

  it('every call of a chunked batch asks in its own rows’ highest lane', async () => {
    const gate = new RecordingGate();
    const w = world(gate);
    const refs = await emails(w, ['bulk', 'bulk', 'critical', 'bulk', 'bulk'], 'k');
    await deliver(refs, w.deps, { maxBatch: 2 });
    expect(gate.admissions.map((a) => a.priority)).toEqual(['bulk', 'critical', 'bulk']);
    expect(w.batch.calls.map((c) => c.messages.length)).toEqual([2, 2, 1]);
  });

  it('on the shared rate budget a critical batch books as critical: it goes ahead of booked bulk by the lead', async () => {
    const clock = fakeWorld().clock;
    const waits: number[] = [];
    const budget = new RateBudget(new MemoryRateClock(), { email: budgetRules(1, 500) });
    const w0 = fakeWorld();
    const gate = new BudgetSendGate({
      holds: new SharedSendGate({ store: w0.store, clock, sleep: async () => undefined }),
      budget,
      clock,
      maxInlineWaitMs: 60_000,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    // Four bulk calls booked: the clock is 4 s ahead at 1 call/s.
    for (let i = 0; i < 4; i++) await gate.admit('email', 'bulk');
    waits.length = 0;

    const w = world(gate);
    w.clock.current = clock.current;
    const refs = await emails(w, ['critical', 'critical'], 'b');
    await deliver(refs, w.deps, { maxBatch: 100 });
    // One token for the call, due 500 ms (critical's lead) before the bulk lane's next token
    // (4 s); booked as standard it would be 250 ms before it, as bulk at 4 s.
    expect(waits).toEqual([4_000 - 500]);
    expect(w.batch.calls).toHaveLength(1);
  });
});
