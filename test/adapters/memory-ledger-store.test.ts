/**
 * The memory store's runs of the shared ledger checks in test/helpers/ledger-properties.ts; their
 * DynamoDB Local runs are in test/adapters/dynamodb-ledger-store.test.ts and priority-row.test.ts
 * (integration tier). Random operation sequences on the memory store: test/domain/state-machine.test.ts.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import {
  assertPriorityKept,
  assertSubmitterKept,
  runSuppressionSequence,
  suppressionRecordArb,
} from '../helpers/ledger-properties.ts';

describe('a row keeps its priority (memory)', () => {
  it('stored and read back; a row without one is standard', async () => {
    await assertPriorityKept(new MemoryLedgerStore());
  });
});

describe('a row keeps its submitter (memory)', () => {
  it('stored and read back; another’s channel stops a reservation, nothing written', async () => {
    await assertSubmitterKept(new MemoryLedgerStore());
  });
});

describe('suppression history (memory)', () => {
  const target = (channel: 'email' | 'sms' = 'email') => ({
    channel,
    fingerprint: `fp_${Date.now()}_${Math.random().toString(36).slice(2)}`,
    masked: channel === 'email' ? 'p*****t@example.com' : '+1******4567',
  });

  it('follows the shared model: repeated facts once, latest by time wins, history by time', async () => {
    const store = new MemoryLedgerStore();
    await fc.assert(
      fc.asyncProperty(fc.array(suppressionRecordArb, { minLength: 1, maxLength: 12 }), async (records) => {
        await runSuppressionSequence(store, target(), records);
      }),
      { numRuns: 25 },
    );
  });
});
