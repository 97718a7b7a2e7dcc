/**
 * Counts DynamoDB requests and capacity units per channel on the happy path, through the real
 * use cases and the DynamoDB adapter against DynamoDB Local (which reports ConsumedCapacity).
 * Usage: npx tsx bench/measure-happy-path.ts [notices] [email,sms | email | sms] [report]
 * `report`: each channel's final delivery report is applied too (the write that ends a row's
 * delivery follow-up), so the whole lifecycle of a delivered row is counted.
 */

import { type ConsumedCapacity, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { DynamoDbLedgerStore } from '../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import { dynamoDbKeyRecords } from '../lambdas/adapters/dynamodb/key-records.ts';
import { ensureKeyTable } from '../lambdas/adapters/dynamodb/key-table.ts';
import { intentFromItem } from '../lambdas/adapters/dynamodb/ledger/intent-items.ts';
import { LedgerTableClient } from '../lambdas/adapters/dynamodb/ledger/table-client.ts';
import { ensureLedgerTable } from '../lambdas/adapters/dynamodb/ledger-table.ts';
import { ARCHIVE_SETTINGS } from '../lambdas/contract/archive-settings.ts';
import { keyTableNameOf } from '../lambdas/contract/key-table.ts';
import type { Intent } from '../lambdas/domain/intent.ts';
import type { ProviderOutcome } from '../lambdas/domain/outcome.ts';
import { systemClock } from '../lambdas/ports/clock.port.ts';
import { applyDeliveryReport } from '../lambdas/use-cases/apply-delivery-report.ts';
import { deliverIntent } from '../lambdas/use-cases/deliver.ts';
import type { Dependencies } from '../lambdas/use-cases/dependencies.ts';
import { SharedSendGate } from '../lambdas/use-cases/shared-send-gate.ts';
import { submitNotice } from '../lambdas/use-cases/submit-notice.ts';
import { startDynamoDbLocal } from '../local/dynamodb/server.ts';
import { templateCatalog } from '../templates/catalog.ts';
import { type ArchiveBytes, archiveBytes } from './lib/archive-lines.ts';
import { itemSizeBytes } from './lib/item-size.ts';

export interface HappyPathCost {
  readonly channels: number;
  readonly requestsPerChannel: Record<string, number>;
  readonly writesPerChannel: number;
  readonly readsPerChannel: number;
  readonly writeCapacityUnitsPerChannel: number;
  readonly readCapacityUnitsPerChannel: number;
  /** Write units per channel, per operation (reserve, claim = apply:sending, outcome, report …). */
  readonly writeUnitsPerOperation: Record<string, number>;
  /** Bytes DynamoDB bills for the first notice's rows, as reserved and once accepted. */
  readonly rowBytes: Record<'email' | 'sms', { reserved: number; accepted: number }>;
  /** What the archive keeps of these rows (with `report`: the rows are resolved), in bytes. */
  readonly archive?: ArchiveBytes;
}

/** The submitter every row records: a service role of a typical name's length. */
const BENCH_SUBMITTER = {
  role: 'submitter',
  principal: 'arn:aws:iam::123456789012:role/lab-results-service',
} as const;

export async function measureHappyPath(
  endpoint: string,
  notices = 50,
  channels: readonly ('email' | 'sms')[] = ['email', 'sms'],
  withReport = false,
): Promise<HappyPathCost> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
  });
  const tableName = `bench-cost-${Date.now()}`;
  await ensureLedgerTable(client, tableName);
  const keyTableName = keyTableNameOf(tableName);
  await ensureKeyTable(client, keyTableName);
  const requests: Record<string, number> = {};
  let wcu = 0;
  let rcu = 0;
  const unitsByOperation: Record<string, number> = {};
  const WRITES = /^(reserve|apply|defer|closeGate|appendSuppression)/;
  const tableOptions = {
    client,
    tableName,
    onConsumedCapacity: (operation: string, capacity: ConsumedCapacity | undefined) => {
      const key = operation.replace(/:.*/, '');
      requests[key] = (requests[key] ?? 0) + 1;
      if (WRITES.test(operation)) {
        wcu += capacity?.CapacityUnits ?? 1;
        unitsByOperation[operation] = (unitsByOperation[operation] ?? 0) + (capacity?.CapacityUnits ?? 1);
      } else rcu += capacity?.CapacityUnits ?? 0.5;
    },
  };
  const store = new DynamoDbLedgerStore(tableOptions);
  // Intake's one Query of the notice's key records (a replay past the hot window), counted too.
  const { keyRecordsOf } = dynamoDbKeyRecords(
    new LedgerTableClient({ ...tableOptions, tableName: keyTableName }),
    { bucketChars: ARCHIVE_SETTINGS.KEY_BUCKET_CHARS.default },
  );
  let counter = 0;
  const accept = async (): Promise<ProviderOutcome> => ({
    kind: 'accepted',
    receiptId: `r-${++counter}-0123456789abcdef0123456789`,
  });
  const deps: Dependencies = {
    store,
    keyRecords: { keyRecordsOf },
    archivedRows: { archivedRow: async () => undefined },
    queue: { enqueue: async () => undefined },
    scheduler: { scheduleAttempt: async () => undefined },
    escalations: { publish: async () => undefined },
    sealer: new AesGcmEnvelopeSealer(new StaticDataKeySource(new Uint8Array(32).fill(1))),
    catalog: templateCatalog,
    clock: systemClock,
    random: Math.random,
    fingerprintKey: new Uint8Array(32).fill(2),
    timing: { leaseMs: 60_000 },
    retryPolicy: { baseMs: 1000, capMs: 900_000, maxAttempts: 8 },
    defaultDeadlineMs: 86_400_000,
    configuredChannels: ['email', 'sms'],
    transports: { email: { provider: 'ses', send: accept }, sms: { provider: 'twilio', send: accept } },
    workerId: 'bench',
    // As deployed (INDEX_WATCH_DELAY_MS, 5 min): rows on the happy path stay out of the open index
    // (docs/table-design.md "Watched rows"); the watch itself is counted by `npm run bench`.
    watch: { delayMs: 300_000, watch: async () => undefined },
    gate: new SharedSendGate({ store, clock: systemClock, gateCacheMs: 250 }),
  };
  const rowBytes = { email: { reserved: 0, accepted: 0 }, sms: { reserved: 0, accepted: 0 } };
  const sizeOf = async (noticeId: string, channel: 'email' | 'sms') => {
    const out = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `N#${noticeId}` }, sk: { S: `C#${channel}` } },
      }),
    );
    return out.Item ? itemSizeBytes(out.Item) : 0;
  };
  const resolved: Intent[] = [];
  for (let i = 0; i < notices; i++) {
    const result = await submitNotice(
      {
        eventId: `evt_cost_${i}`,
        eventType: 'lab-result-ready',
        recipient: {
          id: `pat_${i}`,
          email: `patient.number${i}@example.com`,
          phone: `+1555123${String(i).padStart(4, '0')}`,
        },
        channels: [...channels],
        template: { id: 'lab-result-ready', version: 'v3' },
        variables: { firstName: 'Alexandra', portalUrl: 'https://portal.example.com/results' },
      },
      deps,
      // A business system's role, as the http function records it (docs/api.md "Callers").
      BENCH_SUBMITTER,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    if (i === 0)
      for (const channel of channels) rowBytes[channel].reserved = await sizeOf(result.noticeId, channel);
    for (const channel of channels) await deliverIntent({ noticeId: result.noticeId, channel }, deps);
    if (withReport) {
      for (const channel of channels) {
        const row = await store.get(result.noticeId, channel);
        await applyDeliveryReport(
          {
            ref: { noticeId: result.noticeId, channel },
            provider: row?.provider ?? '',
            receiptId: row?.providerReceiptId ?? '',
            kind: 'delivered',
            at: Date.now(),
          },
          deps,
        );
      }
    }
    if (i === 0)
      for (const channel of channels) rowBytes[channel].accepted = await sizeOf(result.noticeId, channel);
    if (withReport) {
      // Read apart from the counted store: the archive's view of the resolved rows.
      for (const channel of channels) {
        const out = await client.send(
          new GetItemCommand({
            TableName: tableName,
            Key: { pk: { S: `N#${result.noticeId}` }, sk: { S: `C#${channel}` } },
          }),
        );
        if (out.Item) resolved.push(intentFromItem(unmarshall(out.Item)));
      }
    }
  }
  const intents = notices * channels.length;
  const per = (n: number) => Math.round((n / intents) * 100) / 100;
  const writes = Object.entries(requests)
    .filter(([k]) => WRITES.test(k))
    .reduce((a, [, n]) => a + n, 0);
  const reads = Object.values(requests).reduce((a, n) => a + n, 0) - writes;
  return {
    channels: intents,
    requestsPerChannel: Object.fromEntries(Object.entries(requests).map(([k, n]) => [k, per(n)])),
    writesPerChannel: per(writes),
    readsPerChannel: per(reads),
    writeCapacityUnitsPerChannel: per(wcu),
    readCapacityUnitsPerChannel: per(rcu),
    writeUnitsPerOperation: Object.fromEntries(
      Object.entries(unitsByOperation).map(([operation, units]) => [operation, per(units)]),
    ),
    rowBytes,
    ...(resolved.length > 0 ? { archive: archiveBytes(resolved) } : {}),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ddb = process.env.AWS_ENDPOINT_URL_DYNAMODB
    ? undefined
    : await startDynamoDbLocal({ inMemory: true });
  try {
    const cost = await measureHappyPath(
      process.env.AWS_ENDPOINT_URL_DYNAMODB ?? (ddb?.endpoint as string),
      Number(process.argv[2] ?? 50),
      (process.argv[3] ?? 'email,sms').split(',') as ('email' | 'sms')[],
      process.argv[4] === 'report',
    );
    console.log(JSON.stringify(cost, null, 2));
  } finally {
    await ddb?.stop();
  }
}
