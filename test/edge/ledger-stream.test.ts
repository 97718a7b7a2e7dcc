/**
 * Which ledger stream records each consumer is handed (lambdas/contract/ledger-stream.ts): the
 * CDK turns the same filters into the event sources' patterns (test/infra/archive.test.ts,
 * outcome-events.test.ts), the local stack applies them with this function.
 */
import { describe, expect, it } from 'vitest';
import {
  type FilteredRecord,
  LEDGER_STREAM_FILTERS,
  passesLedgerStreamFilters,
} from '../../lambdas/contract/ledger-stream.ts';

const record = (eventName: string, pk: string, sk: string) => ({
  eventName,
  dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } },
});

describe('ledger stream filters', () => {
  it('hand the archiver every change of an intent row and each suppression history record once, as written', () => {
    const archive = (r: FilteredRecord) => passesLedgerStreamFilters(LEDGER_STREAM_FILTERS.archive, r);
    for (const event of ['INSERT', 'MODIFY', 'REMOVE'])
      expect(archive(record(event, 'N#ntc_1', 'C#sms')), event).toBe(true);
    expect(archive(record('INSERT', 'S#sms#fp', 'H#000000000000001#x'))).toBe(true);
    expect(archive(record('MODIFY', 'S#sms#fp', 'H#000000000000001#x'))).toBe(false);
    // The current suppression entry, gates, budgets, batch records, the failures list, key records.
    for (const [pk, sk] of [
      ['S#sms#fp', 'S'],
      ['G#sms', 'G'],
      ['P#sms', 'P'],
      ['B#b1', 'B'],
      ['F#2027-01-01#0', '1#ntc_1#sms'],
      ['K#ntc_1', 'C#sms'],
    ] as const) {
      expect(archive(record('INSERT', pk, sk)), pk).toBe(false);
    }
  });

  it('hand the outcome consumer intent rows only', () => {
    const outcomes = (r: FilteredRecord) => passesLedgerStreamFilters(LEDGER_STREAM_FILTERS.outcomes, r);
    expect(outcomes(record('MODIFY', 'N#ntc_1', 'C#email'))).toBe(true);
    expect(outcomes(record('INSERT', 'S#sms#fp', 'H#1'))).toBe(false);
    expect(outcomes(record('INSERT', 'K#ntc_1', 'C#email'))).toBe(false);
    expect(outcomes({ eventName: 'INSERT' })).toBe(false);
  });
});
