import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { listUnresolved } from '../../lambdas/use-cases/list-unresolved.ts';
import { reconcile } from '../../lambdas/use-cases/reconcile.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { newIntent, T0 } from '../helpers/factories.ts';
import { fakeWorld } from '../helpers/fakes.ts';

const client = ddbClient();

/** Terminal rows written raw (BatchWriteItem): what a busy ledger accumulates over months. */
async function writeTerminalRows(tableName: string, count: number): Promise<void> {
  const batches: Promise<unknown>[] = [];
  for (let start = 0; start < count; start += 25) {
    const items = Array.from({ length: Math.min(25, count - start) }, (_, i) => ({
      PutRequest: {
        Item: {
          pk: { S: `N#ntc_terminal${String(start + i).padStart(22, '0')}` },
          sk: { S: 'C#email' },
          state: { S: 'delivered' },
          version: { N: '4' },
          createdAt: { N: String(T0 - 86_400_000) },
          deadline: { N: String(T0) },
          transitions: { L: [] },
        },
      },
    }));
    batches.push(client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: items } })));
    if (batches.length >= 8) await Promise.all(batches.splice(0));
  }
  await Promise.all(batches);
}

interface Metered {
  readUnits: number;
  requests: number;
  operations: Set<string>;
}

/** A ledger with `terminalRows` finished rows and 10 open ones, and a meter switched on by `measure`. */
async function ledgerWithOpenRows(terminalRows: number) {
  const tableName = uniqueTableName('list-cost');
  await ensureLedgerTable(client, tableName);
  const meter: Metered = { readUnits: 0, requests: 0, operations: new Set() };
  let metering = false;
  const store = new DynamoDbLedgerStore({
    client,
    tableName,
    onConsumedCapacity: (operation, capacity) => {
      if (!metering) return;
      meter.requests += 1;
      meter.readUnits += capacity?.CapacityUnits ?? 0;
      meter.operations.add(operation);
    },
  });
  await writeTerminalRows(tableName, terminalRows);
  const open = [];
  for (let i = 0; i < 10; i++) {
    const intent = newIntent({ createdAt: T0 + i * 1000 });
    open.push(intent);
    await store.reserve(intent);
  }
  return {
    store,
    open,
    async measure<T extends object>(run: () => Promise<T>): Promise<T & { meter: Metered }> {
      Object.assign(meter, { readUnits: 0, requests: 0, operations: new Set() });
      metering = true;
      try {
        const result = await run();
        return { ...result, meter: { ...meter, operations: new Set(meter.operations) } };
      } finally {
        metering = false;
      }
    },
  };
}

describe('GET /v1/notices reads the open index only', () => {
  it('listing 10 unresolved rows among 10 000 terminal ones reads only open-index items: the same units as without them', async () => {
    const runs = [];
    for (const terminal of [0, 10_000]) {
      const ledger = await ledgerWithOpenRows(terminal);
      const page = await ledger.measure(() => listUnresolved({ limit: 50 }, { store: ledger.store }));
      const unknownOnly = await ledger.measure(() =>
        listUnresolved({ state: 'unknown', limit: 50 }, { store: ledger.store }),
      );
      runs.push({ terminal, page, unknownOnly, open: ledger.open });
    }
    for (const { page, unknownOnly, open } of runs) {
      expect(page.items.map((i) => i.noticeId)).toEqual(open.map((i) => i.noticeId));
      expect(unknownOnly.items).toEqual([]);
      // Index queries only (one per shard): no GetItem, BatchGetItem, Scan or base-table Query.
      expect([...page.meter.operations]).toEqual(['listOpen']);
      expect(page.meter.requests).toBe(4);
    }
    const [small, large] = runs as [(typeof runs)[0], (typeof runs)[0]];
    // Each shard Query is rounded up to one 4 KB unit (0.5 RCU eventually consistent; DynamoDB
    // Local reports 0 for a shard with no item, and which shards the 10 random notice ids land in
    // varies by run), so 10 open rows cost the minimum, and 10 000 terminal rows beside them nothing.
    expect(Math.abs(large.page.meter.readUnits - small.page.meter.readUnits)).toBeLessThanOrEqual(1);
    expect(large.page.meter.readUnits).toBeLessThanOrEqual(2);
    expect(large.page.meter.readUnits).toBeGreaterThan(0);
    console.info(
      `list read units per page: ${small.page.meter.readUnits} (10 open) vs ${large.page.meter.readUnits} (10 open + 10 000 terminal), ${large.page.meter.requests} index queries`,
    );
  }, 180_000);
});

async function reconcilerReadUnits(
  terminalRows: number,
): Promise<{ readUnits: number; requests: number; due: number; open: number }> {
  const tableName = uniqueTableName('recon-cost');
  await ensureLedgerTable(client, tableName);
  let readUnits = 0;
  let requests = 0;
  let metering = false;
  const store = new DynamoDbLedgerStore({
    client,
    tableName,
    onConsumedCapacity: (_operation, capacity) => {
      if (!metering) return;
      requests += 1;
      readUnits += capacity?.CapacityUnits ?? 0;
    },
  });
  await writeTerminalRows(tableName, terminalRows);
  for (let i = 0; i < 10; i++) await store.reserve(newIntent({ createdAt: T0 }));
  const world = fakeWorld({ store });
  world.clock.current = T0 + 30_000; // open but not yet due: the run only reads gauges
  metering = true;
  const report = await reconcile(world.deps);
  metering = false;
  return { readUnits, requests, due: report.due, open: report.openByState.reserved ?? 0 };
}

describe('reconciler cost follows open rows, not table size', () => {
  it('10 open rows among 10 000 terminal ones cost the same reads as 10 open rows alone', async () => {
    const small = await reconcilerReadUnits(0);
    const large = await reconcilerReadUnits(10_000);
    expect(small.open).toBe(10);
    expect(large.open).toBe(10);
    expect(large.requests).toBe(small.requests);
    // Equal up to rounding: which index shards the 10 random notice ids land in varies by run.
    expect(Math.abs(large.readUnits - small.readUnits)).toBeLessThanOrEqual(1);
    console.info(
      `reconciler read units: ${small.readUnits} (10 open) vs ${large.readUnits} (10 open + 10 000 terminal)`,
    );
    // Reported in the closing note / docs: a handful of units for the whole run.
    expect(large.readUnits).toBeLessThan(20);
  }, 180_000);
});
