/**
 * Read units of one `GET /v1/notices` page (and of the reconciler's gauges) against the number of
 * open rows, through the real use case and DynamoDB adapter on DynamoDB Local, which reports
 * ConsumedCapacity. Terminal rows cost nothing (test/adapters/reconciler-cost.test.ts proves it);
 * the open index is what a page reads.
 * Usage: npx tsx bench/measure-list.ts [open rows, comma-separated: 10,1000,5000]
 */
import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoDbLedgerStore } from '../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { ensureLedgerTable } from '../lambdas/adapters/dynamodb/ledger-table.ts';
import { deriveNoticeId } from '../lambdas/domain/identity.ts';
import { listUnresolved } from '../lambdas/use-cases/list-unresolved.ts';
import { startDynamoDbLocal } from '../local/dynamodb/server.ts';

const sizes = (process.argv[2] ?? '10,1000,5000').split(',').map(Number);
const ddb = await startDynamoDbLocal({ inMemory: true });
const client = new DynamoDBClient({
  endpoint: ddb.endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
});
const results = [];
try {
  for (const open of sizes) {
    const tableName = `bench-list-${open}-${Date.now()}`;
    await ensureLedgerTable(client, tableName);
    let rcu = 0;
    let requests = 0;
    const store = new DynamoDbLedgerStore({
      client,
      tableName,
      onConsumedCapacity: (_op, capacity) => {
        requests += 1;
        rcu += capacity?.CapacityUnits ?? 0;
      },
    });
    // Open rows as the index sees them: the attributes a reserved row carries there.
    const t0 = Date.now() - 3_600_000;
    for (let start = 0; start < open; start += 25) {
      const items = Array.from({ length: Math.min(25, open - start) }, (_, i) => {
        const n = start + i;
        const noticeId = deriveNoticeId('lab-result-ready', `evt_bench_${n}`, 'pat_1042');
        return {
          PutRequest: {
            Item: marshall({
              pk: `N#${noticeId}`,
              sk: 'C#sms',
              openShard: `open#${n % 4}`,
              dueAt: t0 + n,
              createdAt: t0 + n,
              deadline: t0 + 86_400_000,
              state: n % 10 === 0 ? 'unknown' : 'reserved',
              attempts: n % 10 === 0 ? 1 : 0,
              version: 1,
              transitions: [],
            }),
          },
        };
      });
      await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: items } }));
    }
    rcu = 0;
    requests = 0;
    await listUnresolved({ limit: 50 }, { store });
    const page = { rcu, requests };
    rcu = 0;
    requests = 0;
    await listUnresolved({ state: 'unknown', limit: 50 }, { store });
    const filtered = { rcu, requests };
    rcu = 0;
    requests = 0;
    await store.countOpen();
    results.push({ open, page, unknownOnly: filtered, countOpen: { rcu, requests } });
  }
} finally {
  client.destroy();
  await ddb.stop();
}
console.log(JSON.stringify(results, null, 2));
