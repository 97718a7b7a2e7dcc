import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { MemoryNoticeArchive } from '../../lambdas/adapters/memory/memory-notice-archive.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import type { LookupVerdict } from '../../lambdas/domain/reconcile.ts';
import type { Escalation } from '../../lambdas/ports/escalation.port.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import type { LookupQuery } from '../../lambdas/ports/provider-lookup.port.ts';
import type {
  BatchSending,
  EmailMessage,
  MessageBatch,
  SmsMessage,
  Transport,
} from '../../lambdas/ports/transport.port.ts';
import type { Dependencies } from '../../lambdas/use-cases/dependencies.ts';
import type { ReconcilerDependencies } from '../../lambdas/use-cases/reconcile.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { T0, TEST_KEY } from './factories.ts';

/** A transport that answers from a script (default: accepted) and records what it was asked. */
export class ScriptedTransport<M> implements Transport<M> {
  readonly sent: M[] = [];
  readonly script: ProviderOutcome[] = [];
  private counter = 0;
  constructor(readonly provider: string) {}
  async send(message: M): Promise<ProviderOutcome> {
    this.sent.push(message);
    this.counter += 1;
    return this.script.shift() ?? { kind: 'accepted', receiptId: `${this.provider}-${this.counter}` };
  }
}

/** A batch-capable email transport: answers each call from a script, records what it was given. */
export class ScriptedBatchTransport
  extends ScriptedTransport<EmailMessage>
  implements BatchSending<EmailMessage>
{
  readonly maxBatch = 100;
  readonly replayWindowMs = 86_400_000;
  readonly calls: MessageBatch<EmailMessage>[] = [];
  readonly batchScript: ((batch: MessageBatch<EmailMessage>) => ProviderOutcome[])[] = [];
  /** Checked at every call, before it answers (e.g. that the batch record exists). */
  onCall: ((batch: MessageBatch<EmailMessage>) => Promise<void>) | undefined;
  async sendBatch(batch: MessageBatch<EmailMessage>): Promise<ProviderOutcome[]> {
    this.calls.push(batch);
    await this.onCall?.(batch);
    const answer = this.batchScript.shift();
    if (answer) return answer(batch);
    return batch.messages.map((m, i) => ({
      kind: 'accepted',
      receiptId: `${this.calls.length}-${i}-${m.correlationId}`,
    }));
  }
}

export class ManualClock {
  constructor(public current = T0) {}
  now = () => this.current;
  advance(ms: number) {
    this.current += ms;
  }
}

export interface FakeWorld {
  readonly deps: Dependencies & ReconcilerDependencies;
  readonly store: MemoryLedgerStore;
  /** What the archiver leaves behind: key records and archived rows (`passHotWindow`). */
  readonly archive: MemoryNoticeArchive;
  readonly clock: ManualClock;
  readonly enqueued: { ref: IntentRef; delayMs?: number | undefined }[];
  readonly scheduled: { ref: IntentRef; attempt: number; at: number }[];
  readonly escalations: Escalation[];
  readonly email: ScriptedTransport<EmailMessage>;
  readonly sms: ScriptedTransport<SmsMessage>;
  readonly lookupAnswers: LookupVerdict[];
  readonly lookupQueries: LookupQuery[];
}

/** Use cases wired to in-memory fakes; the sealer and template catalog are the real ones. */
export function fakeWorld(overrides: Partial<Dependencies & ReconcilerDependencies> = {}): FakeWorld {
  const store = new MemoryLedgerStore();
  const archive = new MemoryNoticeArchive();
  const clock = new ManualClock();
  const enqueued: FakeWorld['enqueued'] = [];
  const scheduled: FakeWorld['scheduled'] = [];
  const escalations: Escalation[] = [];
  const email = new ScriptedTransport<EmailMessage>('ses');
  const sms = new ScriptedTransport<SmsMessage>('twilio');
  const lookupAnswers: LookupVerdict[] = [];
  const lookupQueries: LookupQuery[] = [];
  const lookup = (provider: string) => ({
    provider,
    lookup: async (query: LookupQuery): Promise<LookupVerdict> => {
      lookupQueries.push(query);
      return lookupAnswers.shift() ?? { kind: 'undecidable' };
    },
  });
  const deps: Dependencies & ReconcilerDependencies = {
    store,
    keyRecords: archive,
    archivedRows: archive,
    queue: {
      enqueue: async (refs, options) => {
        for (const ref of refs) enqueued.push({ ref, delayMs: options?.delayMs });
      },
    },
    scheduler: {
      scheduleAttempt: async (ref, attempt, at) => {
        scheduled.push({ ref: { noticeId: ref.noticeId, channel: ref.channel }, attempt, at });
      },
    },
    escalations: { publish: async (e) => void escalations.push(e) },
    sealer: new AesGcmEnvelopeSealer(new StaticDataKeySource(new Uint8Array(32).fill(7))),
    catalog: templateCatalog,
    clock,
    random: () => 0.5,
    fingerprintKey: TEST_KEY,
    timing: { leaseMs: 60_000 },
    retryPolicy: { baseMs: 1000, capMs: 60_000, maxAttempts: 4 },
    defaultDeadlineMs: 86_400_000,
    configuredChannels: ['email', 'sms'],
    transports: { email, sms },
    workerId: 'test-worker',
    lookups: { ses: lookup('ses'), twilio: lookup('twilio') },
    channelProviders: { email: 'ses', sms: 'twilio' },
    unknownGraceMs: 600_000,
    unknownPolicy: 'escalate',
    recheckMs: 60_000,
    statuses: {},
    followUp: { graceMs: 15 * 60_000, deadlineMs: 72 * 3_600_000 },
    ...overrides,
  } as Dependencies & ReconcilerDependencies;
  return {
    deps,
    store,
    archive,
    clock,
    enqueued,
    scheduled,
    escalations,
    email,
    sms,
    lookupAnswers,
    lookupQueries,
  };
}

export const EXAMPLE_REQUEST = {
  eventId: 'evt_8f31',
  eventType: 'lab-result-ready',
  recipient: { id: 'pat_1042', email: 'patient@example.com', phone: '+15551234567' },
  channels: ['email', 'sms'] as ('email' | 'sms')[],
  template: { id: 'lab-result-ready', version: 'v3' },
  variables: { firstName: 'Ada' },
};

/**
 * A notice past the hot window: each of its resolved rows archived as the archiver leaves it (the
 * row in a `rows/` object, its key record) and then gone from the table, as TTL removes it.
 * `channels`: only these (default: every row of the notice in the table). Returns the rows as
 * they were.
 */
export async function passHotWindow(
  world: Pick<FakeWorld, 'store' | 'archive'>,
  noticeId: string,
  channels?: readonly ('email' | 'sms')[],
): Promise<Intent[]> {
  const rows = (await world.store.getNotice(noticeId)).filter(
    (row) => !channels || channels.includes(row.channel),
  );
  for (const row of rows) {
    world.archive.archive(row);
    world.store.expire(row.noticeId, row.channel);
  }
  return rows;
}
