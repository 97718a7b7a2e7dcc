import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { itemFromIntent } from '../../lambdas/adapters/dynamodb/ledger/intent-items.ts';
import { Archive } from '../../lambdas/contract/archive.ts';
import { Metric } from '../../lambdas/contract/metrics.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { createArchiverHandler } from '../../lambdas/handlers/archiver.ts';
import { logger, metrics } from '../../lambdas/wiring/observability.ts';
import { MemoryArchiveObjects, MemoryKeyRecords, rowLife } from '../helpers/archive.ts';

const STREAM_ARN =
  'arn:aws:dynamodb:us-east-1:123456789012:table/notice-ledger/stream/2026-05-01T12:00:00.000';
const LABEL = '2026-05-01T120000.000';
const START = Date.parse('2027-03-01T09:00:00Z');

let sequence = 4_421_584_500_000_000_017_450_439_000n;

type Image = Record<string, unknown> | undefined;

/** A stream record as Lambda's DynamoDB event source hands it (creation time in epoch seconds). */
function record(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  oldItem: Image,
  newItem: Image,
  at: number,
): DynamoDBRecord {
  sequence += 100n;
  const image = (item: Image) =>
    item ? (marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>) : undefined;
  const keys = newItem ?? oldItem ?? {};
  return {
    eventID: `e${sequence}`,
    eventName,
    eventSource: 'aws:dynamodb',
    eventSourceARN: STREAM_ARN,
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(at / 1000),
      Keys: image({ pk: keys.pk, sk: keys.sk }) as never,
      ...(oldItem ? { OldImage: image(oldItem) as never } : {}),
      ...(newItem ? { NewImage: image(newItem) as never } : {}),
      SequenceNumber: String(sequence),
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const itemOf = (intent: Intent | undefined) =>
  intent ? { ...itemFromIntent(intent, () => 'open#1'), expiresAt: 1 } : undefined;

function lifeRecords(start: number): DynamoDBRecord[] {
  const life = rowLife(start, 'sms');
  return [...life, undefined].map((image, i) =>
    record(
      i === 0 ? 'INSERT' : image ? 'MODIFY' : 'REMOVE',
      itemOf(life[i - 1]),
      itemOf(image),
      start + i * 1000,
    ),
  );
}

let published: EmfOutput[];

beforeEach(() => {
  published = [];
  metrics.clearMetrics();
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => {
    published.push(metrics.serializeMetrics());
    metrics.clearMetrics();
    return metrics;
  });
  vi.spyOn(logger, 'error').mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
  metrics.clearMetrics();
});

function archiver() {
  const store = new MemoryArchiveObjects();
  const keyRecords = new MemoryKeyRecords();
  const handler = createArchiverHandler(async () => ({
    store,
    keyRecords,
    clock: { now: () => START + 90_000 },
    retentionYears: 6,
  }));
  return { store, keyRecords, handler };
}

const metric = (name: string) =>
  published.reduce((sum, emf) => sum + Number((emf as unknown as Record<string, unknown>)[name] ?? 0), 0);

describe('the archiver handler on Lambda’s DynamoDB stream events', () => {
  it('intent rows and suppression history are archived; the ledger’s other items are not', async () => {
    const { store, keyRecords, handler } = archiver();
    const records: DynamoDBRecord[] = [
      // A throttle gate and a budget item: the ledger's bookkeeping, not facts.
      record('MODIFY', { pk: 'G#sms', sk: 'G', until: 1 }, { pk: 'G#sms', sk: 'G', until: 2 }, START),
      ...lifeRecords(START),
      // A suppression: the effective item (not a fact of its own) and its history record.
      record(
        'INSERT',
        undefined,
        { pk: 'S#sms#fp_x', sk: 'S', masked: '+1******4567', action: 'suppress' },
        START,
      ),
      record(
        'INSERT',
        undefined,
        {
          pk: 'S#sms#fp_x',
          sk: 'H#000001772355600000#abc',
          masked: '+1******4567',
          action: 'suppress',
          reason: 'hard_bounce',
          source: 'provider',
          actor: 'twilio',
          at: START,
          code: '30006',
        },
        START,
      ),
      // A key record's own change: the archiver's write, not a fact.
      record('INSERT', undefined, { pk: 'K#ntc_1', sk: 'C#sms', state: 'delivered' }, START),
    ];
    const answer = await handler({ Records: records } as DynamoDBStreamEvent);
    expect(answer).toEqual({ batchItemFailures: [] });
    // Named by the first record it holds (the gate's change holds nothing), reaching to the batch's last.
    const factsKey = `facts/day=2027-03-01/${LABEL}/${records[1]?.dynamodb?.SequenceNumber}.jsonl.gz`;
    expect(store.objects.get(factsKey)?.lastSequence).toBe(records.at(-1)?.dynamodb?.SequenceNumber);
    const lines = store.lines(Archive.factsPrefix);
    expect(lines.map((line) => line.kind)).toEqual([
      'transition',
      'transition',
      'transition',
      'transition',
      'transition',
      'expired',
      'suppression',
    ]);
    expect(lines[6]).toMatchObject({
      dest_fingerprint: 'fp_x',
      dest_masked: '+1******4567',
      detail: '30006',
    });
    expect(store.lines(Archive.rowsPrefix)).toHaveLength(1);
    expect(keyRecords.records.size).toBe(1);
    expect(metric(Metric.archivedFacts)).toBe(7);
    expect(metric(Metric.archiveObjectsWritten)).toBe(2);
    expect(metric(Metric.archiveDuplicatesSkipped)).toBe(0);
    expect(metric(Metric.archiveLagSeconds)).toBe(90);
  });

  it('handed again: nothing written twice, the duplicates counted', async () => {
    const { store, handler } = archiver();
    const event = { Records: lifeRecords(START) } as DynamoDBStreamEvent;
    await handler(event);
    await handler(event);
    expect(store.lines(Archive.factsPrefix)).toHaveLength(6);
    expect(metric(Metric.archiveDuplicatesSkipped)).toBe(7);
  });

  it('a failed write answers the batch’s first record, so Lambda hands the whole batch again', async () => {
    const { store, handler } = archiver();
    store.fault = (operation) => {
      if (operation === 'put') throw new Error('SlowDown');
    };
    const records = lifeRecords(START);
    const answer = await handler({ Records: records } as DynamoDBStreamEvent);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: records[0]?.dynamodb?.SequenceNumber }]);
    expect(logger.error).toHaveBeenCalledOnce();
  });

  it('an empty event writes nothing and publishes nothing', async () => {
    const { store, handler } = archiver();
    expect(await handler({ Records: [] })).toEqual({ batchItemFailures: [] });
    expect(store.objects.size).toBe(0);
    expect(published).toEqual([]);
  });
});
