import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRateClock } from '../../lambdas/adapters/dynamodb/dynamodb-rate-clock.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { MemoryRateClock } from '../../lambdas/adapters/memory/memory-rate-clock.ts';
import { budgetRules, tokenTimes } from '../../lambdas/domain/rate-budget.ts';
import type { RateClockStore } from '../../lambdas/ports/rate-budget.port.ts';
import { RateBudget } from '../../lambdas/use-cases/rate-budget.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';

const client = ddbClient();
const tableName = uniqueTableName('rate-clock');
const capacity: { operation: string; capacity: ConsumedCapacity | undefined }[] = [];

beforeAll(async () => {
  await ensureLedgerTable(client, tableName);
});

const stores: [string, () => RateClockStore][] = [
  ['memory', () => new MemoryRateClock()],
  [
    'DynamoDB Local',
    () =>
      new DynamoDbRateClock({
        client,
        tableName,
        onConsumedCapacity: (operation, c) => capacity.push({ operation, capacity: c }),
      }),
  ],
];

describe.each(stores)('rate budget clock on %s', (_name, make) => {
  it('advance adds from an absent clock; restart and replace write only under their conditions', async () => {
    const store = make();
    const channel = 'sms' as const;
    // Each store instance gets fresh state: DynamoDB's table is shared, so start by restarting.
    expect(await store.restart(channel, 1_000, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(await store.advance(channel, 40)).toBe(1_040);
    expect(await store.restart(channel, 5_000, 1_039)).toBe(false);
    expect(await store.restart(channel, 5_000, 1_040)).toBe(true);
    expect(await store.replace(channel, 9_000, 5_001)).toBe(false);
    expect(await store.replace(channel, 9_000, 5_000)).toBe(true);
    expect(await store.read(channel)).toBe(9_000);
    expect(await store.advance('email', 7)).toBeGreaterThanOrEqual(7);
  });

  it('40 concurrent bookers (no lead) get tokens one spacing apart, none in the past', async () => {
    const store = make();
    await store.restart('sms', 0, Number.MAX_SAFE_INTEGER);
    const rules = { sms: budgetRules(25, 0) };
    const now = Date.now();
    // Eight "instances", each with its own view of the clock, booking blocks of 1–5.
    const instances = Array.from({ length: 8 }, () => new RateBudget(store, rules));
    const grants = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (instances[i % 8] as RateBudget).book('sms', 'bulk', 1 + (i % 5), now + Math.floor(i / 8)),
      ),
    );
    const times = grants.flatMap(tokenTimes).sort((a, b) => a - b);
    expect(times).toHaveLength(grants.reduce((n, g) => n + g.count, 0));
    expect(times[0]).toBeGreaterThanOrEqual(now);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(40);
    // The last token is due (total − 1) spacings after the first: no hole, no overlap.
    expect((times.at(-1) as number) - (times[0] as number)).toBe((times.length - 1) * 40);
  });
});

describe('rate budget on DynamoDB Local: cost', () => {
  it('a busy channel costs one write per block: 1 WCU whatever the block', async () => {
    const store = new DynamoDbRateClock({
      client,
      tableName,
      onConsumedCapacity: (operation, c) => capacity.push({ operation, capacity: c }),
    });
    await store.restart('email', 0, Number.MAX_SAFE_INTEGER);
    const budget = new RateBudget(store, { email: budgetRules(10, 0) });
    const now = Date.now();
    await budget.book('email', 'standard', 10, now); // idle → restart
    capacity.length = 0;
    await budget.book('email', 'standard', 10, now + 1); // busy → advance
    await budget.book('email', 'critical', 3, now + 2);
    expect(capacity.map((c) => c.operation)).toEqual(['bookTokens', 'bookTokens']);
    expect(capacity.map((c) => c.capacity?.CapacityUnits)).toEqual([1, 1]);
  });
});
