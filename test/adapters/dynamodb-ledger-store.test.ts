import {
  type ConsumedCapacity,
  CreateTableCommand,
  DescribeTableCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLedgerStore } from '../../lambdas/adapters/dynamodb/dynamodb-ledger-store.ts';
import {
  ensureLedgerTable,
  ledgerTableDefinition,
  openIndexOutdated,
} from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import { type Intent, watchedAtIntake } from '../../lambdas/domain/intent.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planFact, planTransition, planUnknownEscalation } from '../../lambdas/domain/transition.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';
import {
  assertSubmitterKept,
  ledgerOpArb,
  runLedgerSequence,
  runSuppressionSequence,
  suppressionRecordArb,
} from '../helpers/ledger-properties.ts';

const client = ddbClient();
const tableName = uniqueTableName('ledger');
const calls: { operation: string; capacity: ConsumedCapacity | undefined }[] = [];
const store = new DynamoDbLedgerStore({
  client,
  tableName,
  openShards: 3,
  onConsumedCapacity: (operation, capacity) => calls.push({ operation, capacity }),
});

function claimPlan(intent: Intent, workerId: string, now = T0 + 1) {
  const decision = decideClaim(intent, { now, workerId, timing: TEST_TIMING });
  if (decision.kind !== 'claim') throw new Error(`not claimable: ${decision.why}`);
  return decision.plan;
}

/** The provider's answer to a claimed row, planned as a sender plans it (three attempts, no jitter). */
function outcomePlan(
  sending: Intent,
  outcome: Parameters<typeof planOutcome>[1],
  now: number,
  provider: string,
) {
  return planOutcome(sending, outcome, {
    now,
    provider,
    policy: { baseMs: 1000, capMs: 10_000, maxAttempts: 3 },
    random: () => 0.5,
    timing: TEST_TIMING,
  });
}

beforeAll(async () => {
  await ensureLedgerTable(client, tableName);
});

describe('DynamoDbLedgerStore.reserve', () => {
  it('50 concurrent reserves of one key: exactly one created, the rest duplicates carrying the row', async () => {
    const intent = newIntent();
    const results = await Promise.all(Array.from({ length: 50 }, () => store.reserve(intent)));
    expect(results.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'duplicate')).toHaveLength(49);
    for (const result of results) {
      if (result.kind === 'duplicate') expect(result.existing).toEqual(intent);
    }
  });

  it('a different content revision for the same key is a conflict and leaves the row untouched', async () => {
    const original = newIntent({ eventId: `evt_conflict_${Date.now()}` });
    await store.reserve(original);
    const changedVersion = newIntent({ eventId: original.eventId, templateVersion: 'v4' });
    const changedVariables = newIntent({ eventId: original.eventId, variables: { firstName: 'Bob' } });
    const changedDestination = newIntent({ eventId: original.eventId, destination: 'other@example.com' });
    for (const attempt of [changedVersion, changedVariables, changedDestination]) {
      const result = await store.reserve(attempt);
      expect(result.kind).toBe('conflict');
    }
    expect(await store.get(original.noticeId, original.channel)).toEqual(original);
  });

  it('answers duplicate/conflict with one request and no read', async () => {
    const intent = newIntent();
    await store.reserve(intent);
    calls.length = 0;
    await store.reserve(intent);
    expect(calls.map((c) => c.operation)).toEqual(['reserve']);
  });
});

describe('DynamoDbLedgerStore.reserveNotice (every channel of one notice)', () => {
  const bothChannels = (overrides: Parameters<typeof newIntent>[0] = {}) => {
    const eventId = overrides?.eventId ?? `evt_notice_${Date.now()}_${Math.random().toString(36).slice(2)}`;
    return [
      newIntent({ ...overrides, eventId, channel: 'email' }),
      newIntent({ ...overrides, eventId, channel: 'sms' }),
    ];
  };

  it('20 concurrent callers: exactly one creates both channels, the others see two duplicates', async () => {
    // Prepare
    const intents = bothChannels();

    // Act
    const answers = await Promise.all(Array.from({ length: 20 }, () => store.reserveNotice(intents)));

    // Assess
    const creators = answers.filter((results) => results.some((r) => r.kind === 'created'));
    expect(creators).toHaveLength(1);
    expect(creators[0]?.map((r) => r.kind)).toEqual(['created', 'created']);
    for (const results of answers) {
      if (results === creators[0]) continue;
      expect(results.map((r) => r.kind)).toEqual(['duplicate', 'duplicate']);
    }
    expect(await store.getNotice(intents[0]?.noticeId ?? '')).toEqual(intents);
  });

  it('keeps the submitter, compactly: a channel of another submitter stops the request, nothing written', async () => {
    await assertSubmitterKept(store);
    // Stored without the commercial partition's `arn:aws:iam::` (13 bytes a row), read back whole.
    const intent = { ...newIntent(), submitter: 'arn:aws:iam::111111111111:role/lab-system' };
    await store.reserve(intent);
    const raw = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `N#${intent.noticeId}` } },
      }),
    );
    expect(raw.Items?.[0]?.sub).toEqual({ S: '111111111111:role/lab-system' });
    expect((await store.get(intent.noticeId, intent.channel))?.submitter).toBe(intent.submitter);
  });

  it('creates only the channels that are missing and reports the rest per channel', async () => {
    // Prepare: email recorded earlier on its own
    const [email, sms] = bothChannels() as [Intent, Intent];
    await store.reserve(email);

    // Act
    const results = await store.reserveNotice([email, sms]);

    // Assess
    expect(results.map((r) => r.kind)).toEqual(['duplicate', 'created']);
    expect(await store.get(sms.noticeId, 'sms')).toEqual(sms);
  });

  it('a channel recorded with other content is a conflict; the missing channel is still created', async () => {
    // Prepare
    const [email, sms] = bothChannels() as [Intent, Intent];
    await store.reserve(email);
    const [changedEmail, changedSms] = bothChannels({
      eventId: email.eventId,
      variables: { firstName: 'Bob' },
    }) as [Intent, Intent];

    // Act
    const results = await store.reserveNotice([changedEmail, changedSms]);

    // Assess
    expect(results.map((r) => r.kind)).toEqual(['conflict', 'created']);
    expect(await store.get(email.noticeId, 'email')).toEqual(email);
    expect(await store.get(sms.noticeId, 'sms')).toEqual(changedSms);
  });

  /**
   * A store whose first `times` TransactWriteItems are cancelled with `code` on the first item,
   * the way DynamoDB reports it, before reaching DynamoDB Local; later calls go through.
   */
  function storeCancelling(code: string, times: number) {
    const client = ddbClient();
    const counter = { cancelled: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && counter.cancelled < times) {
          counter.cancelled += 1;
          throw new TransactionCanceledException({
            message: 'Transaction cancelled',
            $metadata: {},
            CancellationReasons: [{ Code: code }, { Code: 'None' }],
          });
        }
        return next(args);
      },
      { step: 'initialize' },
    );
    return { store: new DynamoDbLedgerStore({ client, tableName, openShards: 3 }), counter };
  }

  it('a cancellation that is neither a failed condition nor transient is surfaced at once', async () => {
    // Prepare
    const broken = storeCancelling('ValidationError', Number.POSITIVE_INFINITY);

    // Act
    const attempt = broken.store.reserveNotice(bothChannels());

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(TransactionCanceledException);
    expect(broken.counter.cancelled).toBe(1);
  });

  it('a cancellation for a concurrent transaction (no failed condition) is tried again', async () => {
    // Prepare: the first two transactions collide with another one on the same rows
    const conflicted = storeCancelling('TransactionConflict', 2);
    const intents = bothChannels();

    // Act
    const results = await conflicted.store.reserveNotice(intents);

    // Assess
    expect(conflicted.counter.cancelled).toBe(2);
    expect(results.map((r) => r.kind)).toEqual(['created', 'created']);
    expect(await store.getNotice(intents[0]?.noticeId ?? '')).toEqual(intents);
  });
});

describe('DynamoDbLedgerStore.apply (claim and transitions)', () => {
  it('50 concurrent claims: exactly one winner, and the row names that winner', async () => {
    const intent = newIntent();
    await store.reserve(intent);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.apply(claimPlan(intent, `worker-${i}`))),
    );
    const winners = results.filter((r) => r.kind === 'applied');
    expect(winners).toHaveLength(1);
    const row = await store.get(intent.noticeId, intent.channel);
    expect(row?.state).toBe('sending');
    expect(row?.transitions).toHaveLength(2);
    expect(winners[0]?.kind === 'applied' && winners[0].intent.leaseOwner).toBe(row?.leaseOwner);
  });

  it('refuses a stale version or an unexpected state and changes nothing', async () => {
    const intent = newIntent();
    await store.reserve(intent);
    const first = claimPlan(intent, 'w1');
    expect((await store.apply(first)).kind).toBe('applied');
    const before = await store.get(intent.noticeId, intent.channel);

    // Same plan again: version moved on.
    const replay = await store.apply(first);
    expect(replay).toEqual({ kind: 'stale', current: before });
    // A plan built for the right version but a state the row is not in.
    const wrongState = planTransition(
      { ...intent, state: 'unknown', version: 2 },
      { to: 'failed', reason: Reason.deadlineExceeded, at: T0 + 2 },
      TEST_TIMING,
    );
    expect((await store.apply(wrongState)).kind).toBe('stale');
    expect(await store.get(intent.noticeId, intent.channel)).toEqual(before);
  });

  it('appends records and keeps the first ones byte-for-byte', async () => {
    const intent = newIntent();
    await store.reserve(intent);
    const sending = claimPlan(intent, 'w1');
    await store.apply(sending);
    const accepted = outcomePlan(sending.next, { kind: 'accepted', receiptId: 'msg-1' }, T0 + 50, 'ses');
    await store.apply(accepted);
    const delivered = planTransition(
      accepted.next,
      { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 90 },
      TEST_TIMING,
    );
    await store.apply(delivered);
    const row = await store.get(intent.noticeId, intent.channel);
    expect(row?.transitions.map((t) => [t.seq, t.from, t.to, t.reason])).toEqual([
      [1, null, 'reserved', 'intake'],
      [2, 'reserved', 'sending', 'claimed'],
      [3, 'sending', 'accepted', 'provider_accepted'],
      [4, 'accepted', 'delivered', 'delivery_reported'],
    ]);
    expect(row?.transitions.slice(0, 3)).toEqual(accepted.next.transitions);
    expect(row).toMatchObject({
      providerReceiptId: 'msg-1',
      provider: 'ses',
      state: 'delivered',
      version: 4,
    });
    expect(row?.envelope).toBeUndefined();
    expect(row?.dueAt).toBeUndefined();
  });

  it('defer moves dueAt only when the version still matches', async () => {
    const intent = newIntent();
    await store.reserve(intent);
    expect(await store.defer(intent.noticeId, intent.channel, 1, T0 + 5000)).toBe(true);
    expect((await store.get(intent.noticeId, intent.channel))?.dueAt).toBe(T0 + 5000);
    expect(await store.defer(intent.noticeId, intent.channel, 7, T0 + 9000)).toBe(false);
  });
});

describe('random operation sequences against DynamoDB Local', () => {
  it('never write an illegal transition; records stay append-only and ordered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ledgerOpArb, { maxLength: 25 }), fc.boolean(), async (ops, watched) => {
        await runLedgerSequence(store, ops, watched);
      }),
      { numRuns: 25 },
    );
  });
});

describe('open-intent index', () => {
  it('holds only unresolved rows and lists due ones by dueAt, across shards and pages', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('open'), openShards: 3 });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    const open: Intent[] = [];
    const closed: Intent[] = [];
    for (let i = 0; i < 12; i++) {
      const intent = newIntent({ createdAt: T0 + i });
      await own.reserve(intent);
      if (i % 3 === 0) {
        // reserved → failed (a provider's verdict, nothing to escalate): terminal, must leave the index.
        await own.apply(
          planTransition(
            intent,
            { to: 'failed', reason: Reason.providerRejected, at: T0 + 100 },
            TEST_TIMING,
          ),
        );
        closed.push(intent);
      } else {
        open.push(intent);
      }
    }
    const all: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await own.listOpen({ limit: 3, ...(cursor ? { cursor } : {}) });
      all.push(...page.items.map((i) => i.noticeId));
      for (const item of page.items) expect(item.dueAt).toBeGreaterThan(0);
      cursor = page.cursor;
      pages += 1;
    } while (cursor && pages < 20);
    expect(new Set(all)).toEqual(new Set(open.map((i) => i.noticeId)));
    expect(all).toHaveLength(open.length);

    // Reserved rows are due SEND_LEASE_MS after intake; none is due before that.
    expect((await own.listDue(T0 + TEST_TIMING.leaseMs - 1_000)).items).toHaveLength(0);
    const due = await own.listDue(T0 + TEST_TIMING.leaseMs + 5);
    expect(due.items.map((i) => i.noticeId).sort()).toEqual(
      open
        .filter((i) => (i.dueAt as number) <= T0 + TEST_TIMING.leaseMs + 5)
        .map((i) => i.noticeId)
        .sort(),
    );

    // Nothing terminal carries the index keys.
    const scan = await client.send(
      new ScanCommand({ TableName: (own as unknown as { tableName: string }).tableName }),
    );
    for (const item of scan.Items ?? []) {
      if (item.state?.S === 'failed') expect(item.openShard).toBeUndefined();
      else expect(item.openShard?.S).toMatch(/^open#[0-2]$/);
    }
    expect(closed).toHaveLength(4);
  });

  it('keeps a failed row with a pending escalation in the index, due at once, until the escalation is settled', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('escalation') });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    const intent = newIntent({ createdAt: T0 });
    await own.reserve(intent);
    const plan = planTransition(
      intent,
      { to: 'failed', reason: Reason.deadlineExceeded, at: T0 + 100 },
      TEST_TIMING,
    );
    await own.apply(plan);

    const pending = await own.get(intent.noticeId, intent.channel);
    const dueBefore = await own.listDue(T0 + 100);
    const counts = await own.countOpen();
    const stale = await own.settleEscalation(intent.noticeId, intent.channel, intent.version);
    const settled = await own.settleEscalation(intent.noticeId, intent.channel, plan.next.version);
    const again = await own.settleEscalation(intent.noticeId, intent.channel, plan.next.version);

    expect(pending).toMatchObject({ state: 'failed', escalationPending: true, dueAt: T0 + 100 });
    expect(dueBefore.items.map((i) => i.noticeId)).toEqual([intent.noticeId]);
    // Counted apart from the unresolved rows: it is no open intent, and has no unresolved age.
    expect(counts).toEqual({ byState: { failed: 1 }, oldestCreatedAt: undefined, escalationsPending: 1 });
    expect([stale, settled, again]).toEqual([false, true, false]);
    expect(await own.get(intent.noticeId, intent.channel)).toMatchObject({
      state: 'failed',
      escalationPending: undefined,
      dueAt: undefined,
    });
    expect((await own.listOpen()).items).toHaveLength(0);
  });

  it('projects state, attempts and escalation: listing and counting read the index alone', async () => {
    const name = uniqueTableName('projection');
    const metered: string[] = [];
    const own = new DynamoDbLedgerStore({
      client,
      tableName: name,
      onConsumedCapacity: (operation) => metered.push(operation),
    });
    await ensureLedgerTable(client, name);
    const intent = newIntent({ createdAt: T0 });
    await own.reserve(intent);
    const claimed = claimPlan(intent, 'w1');
    await own.apply(claimed);
    const unknown = planOutcome(
      claimed.next,
      { kind: 'ambiguous', code: 'timeout' },
      {
        now: T0 + 2,
        provider: 'ses',
        policy: { baseMs: 1000, capMs: 60_000, maxAttempts: 5 },
        random: () => 0.5,
        timing: TEST_TIMING,
      },
    );
    await own.apply(unknown);
    const escalated = planUnknownEscalation(unknown.next, { at: T0 + 600_000, dueAt: T0 + 660_000 });
    await own.apply(escalated);
    metered.length = 0;

    const listed = await own.listOpen();
    const counts = await own.countOpen();
    expect(listed.items).toEqual([
      {
        noticeId: intent.noticeId,
        channel: intent.channel,
        dueAt: T0 + 660_000,
        createdAt: T0,
        deadline: intent.deadline,
        state: 'unknown',
        attempts: 1,
        escalatedAt: T0 + 600_000,
        escalationPending: true,
      },
    ]);
    expect(counts).toEqual({ byState: { unknown: 1 }, oldestCreatedAt: T0, escalationsPending: 1 });
    // Only index queries: no GetItem, no BatchGetItem of the rows.
    expect(new Set(metered)).toEqual(new Set(['listOpen', 'countOpen']));

    // Settling an escalated unknown's escalation keeps it open (and due); a stale version does nothing.
    expect(
      await own.settleEscalation(intent.noticeId, intent.channel, unknown.next.version, { keepOpen: true }),
    ).toBe(false);
    expect(
      await own.settleEscalation(intent.noticeId, intent.channel, escalated.next.version, { keepOpen: true }),
    ).toBe(true);
    expect(await own.get(intent.noticeId, intent.channel)).toEqual({
      ...escalated.next,
      escalationPending: undefined,
    });
    expect((await own.listOpen()).items).toMatchObject([{ state: 'unknown', escalatedAt: T0 + 600_000 }]);
    expect((await own.listOpen()).items[0]?.escalationPending).toBeUndefined();
  });

  it('a table whose open index projects less (made by an older version) gets the index rebuilt', async () => {
    const name = uniqueTableName('old-index');
    const definition = ledgerTableDefinition(name);
    const [index] = definition.GlobalSecondaryIndexes ?? [];
    await client.send(
      new CreateTableCommand({
        ...definition,
        GlobalSecondaryIndexes: [
          {
            ...index,
            Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['createdAt', 'deadline'] },
          },
        ] as never,
      }),
    );
    const own = new DynamoDbLedgerStore({ client, tableName: name });
    const intent = newIntent({ createdAt: T0 });
    await own.reserve(intent);
    expect((await own.listOpen()).items[0]?.state).toBeUndefined();

    await ensureLedgerTable(client, name);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(openIndexOutdated(Table as never)).toBe(false);
    // The rows already there are in the new index, with their state.
    expect((await own.listOpen()).items).toMatchObject([
      { noticeId: intent.noticeId, state: 'reserved', attempts: 0 },
    ]);
    await ensureLedgerTable(client, name); // nothing to do the second time
    // The rebuild waits on DynamoDB Local's index delete and backfill, which queue behind every
    // other test file's requests on the one shared instance: ~2 s alone, 33 s and more than 60 s
    // in full runs on two busy cores. Bounded, not timed: the assertion is the rebuilt index.
  }, 180_000);
});

describe('key check values', () => {
  it('the first process records its keys; a later one with other keys learns which differ', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('keys') });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);

    const first = await own.checkKeys({
      fingerprint: 'fp-a',
      envelope: 'env-a',
      keysFrom: '/data/a/local-secrets.json',
    });
    const same = await own.checkKeys({ fingerprint: 'fp-a' });
    const other = await own.checkKeys({
      fingerprint: 'fp-b',
      envelope: 'env-a',
      keysFrom: '/data/b/local-secrets.json',
    });

    expect(first).toEqual({
      recorded: { fingerprint: 'fp-a', envelope: 'env-a', keysFrom: '/data/a/local-secrets.json' },
      mismatched: [],
    });
    expect(same.mismatched).toEqual([]);
    expect(other).toEqual({
      recorded: { fingerprint: 'fp-a', envelope: 'env-a', keysFrom: '/data/a/local-secrets.json' },
      mismatched: ['fingerprint'],
    });
  });

  it('of two first users racing with different keys, exactly one records its keys', async () => {
    const tableName = uniqueTableName('keys-race');
    await ensureLedgerTable(client, tableName);
    const stores = Array.from({ length: 6 }, () => new DynamoDbLedgerStore({ client, tableName }));
    const results = await Promise.all(
      stores.map((s, i) => s.checkKeys({ fingerprint: `fp-${i}`, envelope: `env-${i}` })),
    );
    expect(results.filter((r) => r.mismatched.length === 0)).toHaveLength(1);
    const winner = results.find((r) => r.mismatched.length === 0)?.recorded;
    for (const r of results) expect(r.recorded).toEqual(winner);
  });
});

describe('suppression history', () => {
  const target = (channel: 'email' | 'sms' = 'email') => ({
    channel,
    fingerprint: `fp_${Date.now()}_${Math.random().toString(36).slice(2)}`,
    masked: channel === 'email' ? 'p*****t@example.com' : '+1******4567',
  });

  it('follows the shared model: repeated facts once, latest by time wins, history by time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(suppressionRecordArb, { minLength: 1, maxLength: 12 }), async (records) => {
        await runSuppressionSequence(store, target(), records);
      }),
      { numRuns: 25 },
    );
  });

  it('is scoped by channel and keeps the current state in one item beside the history', async () => {
    const t = target();
    await store.appendSuppression(t, {
      action: 'suppress',
      reason: 'hard_bounce',
      source: 'provider',
      actor: 'ses',
      at: T0,
      code: 'Permanent:General',
    });
    calls.length = 0;
    expect(await store.getSuppression('email', t.fingerprint)).toMatchObject({
      latest: { reason: 'hard_bounce' },
    });
    expect(calls.map((c) => c.operation)).toEqual(['getSuppression']);
    expect(await store.getSuppression('sms', t.fingerprint)).toBeUndefined();
    const items = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `S#email#${t.fingerprint}` } },
      }),
    );
    expect(items.Items?.map((item) => item.sk?.S?.replace(/#[^#]+$/, ''))).toEqual([
      `H#${String(T0).padStart(15, '0')}`,
      'S',
    ]);
  });

  it('reads an entry written before the history as its only record, and keeps it when appending', async () => {
    const t = target('sms');
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: { S: `S#sms#${t.fingerprint}` },
          sk: { S: 'S' },
          masked: { S: t.masked },
          reason: { S: 'hard_bounce' },
          source: { S: 'twilio' },
          createdAt: { N: String(T0) },
          detail: { S: '30005' },
        },
      }),
    );
    const legacy = {
      action: 'suppress',
      reason: 'hard_bounce',
      source: 'provider',
      actor: 'twilio',
      at: T0,
      code: '30005',
    };
    expect(await store.getSuppression('sms', t.fingerprint)).toEqual({ ...t, latest: legacy });
    expect((await store.getSuppressionHistory('sms', t.fingerprint))?.records).toEqual([legacy]);

    const lift = {
      action: 'lift',
      reason: 'lifted_by_operator',
      source: 'operator',
      actor: 'ops-1',
      at: T0 + 5,
    } as const;
    await store.appendSuppression(t, lift);

    expect(await store.getSuppression('sms', t.fingerprint)).toEqual({ ...t, latest: lift });
    expect((await store.getSuppressionHistory('sms', t.fingerprint))?.records).toEqual([legacy, lift]);
  });

  it('concurrent appends to one destination all land, and the latest by time is effective', async () => {
    const t = target();
    const records = Array.from({ length: 6 }, (_, i) => ({
      action: i % 2 === 0 ? ('suppress' as const) : ('lift' as const),
      reason: 'patient_request',
      source: 'operator' as const,
      actor: `ops-${i}`,
      at: T0 + i,
    }));
    const results = await Promise.all(records.map((record) => store.appendSuppression(t, record)));
    expect(results.every((r) => r.appended)).toBe(true);
    const history = await store.getSuppressionHistory('email', t.fingerprint);
    expect(history?.records).toEqual(records);
    expect(history?.state.latest).toEqual(records[5]);
  });

  it('shows the newest records and says when older ones were left out', async () => {
    const t = target();
    for (let i = 0; i < 5; i++) {
      await store.appendSuppression(t, {
        action: 'suppress',
        reason: 'operator',
        source: 'operator',
        actor: 'ops',
        at: T0 + i,
      });
    }
    const history = await store.getSuppressionHistory('email', t.fingerprint, { limit: 3 });
    expect(history?.records.map((r) => r.at)).toEqual([T0 + 2, T0 + 3, T0 + 4]);
    expect(history?.truncated).toBe(true);
  });
});

describe('request counts and capacity (reported in docs/table-design.md)', () => {
  it('happy path: reserve + claim + accepted = 3 writes, each 1 WCU for a compact item', async () => {
    const intent = newIntent({ channel: 'sms', destination: '+15551234567' });
    calls.length = 0;
    await store.reserve(intent);
    const claim = claimPlan(intent, 'w1');
    await store.apply(claim);
    await store.apply(
      outcomePlan(
        claim.next,
        { kind: 'accepted', receiptId: 'SM0123456789abcdef0123456789abcdef' },
        T0 + 20,
        'twilio',
      ),
    );
    expect(calls.map((c) => c.operation)).toEqual(['reserve', 'apply:sending', 'apply:accepted']);
    for (const call of calls) expect(call.capacity?.CapacityUnits).toBeGreaterThan(0);
  });

  /** Reserve, claim, accepted, delivered of one row; the capacity units of each write. */
  async function happyPathUnits(intent: Intent): Promise<number[]> {
    calls.length = 0;
    await store.reserve(intent);
    const claim = claimPlan(intent, 'w1');
    await store.apply(claim);
    const accepted = outcomePlan(
      claim.next,
      { kind: 'accepted', receiptId: 'SM0123456789abcdef0123456789abcdef' },
      T0 + 20,
      'twilio',
    );
    await store.apply(accepted);
    await store.apply(
      planTransition(
        accepted.next,
        { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 30 },
        TEST_TIMING,
      ),
    );
    return calls.map((c) => c.capacity?.CapacityUnits ?? 0);
  }

  it('a watched row (docs/table-design.md "Watched rows"): 4 writes, 4 WCU, no index write; indexed, 8 WCU', async () => {
    const sms = () => newIntent({ channel: 'sms', destination: '+15551234567' });
    expect(await happyPathUnits(watchedAtIntake(sms(), 300_000))).toEqual([1, 1, 1, 1]);
    expect(await happyPathUnits(sms())).toEqual([2, 2, 2, 2]);
  });

  it('a watched row is in no index until `defer` (the watch) puts it there, due when it says', async () => {
    const intent = watchedAtIntake(newIntent({ channel: 'sms', destination: '+15551234567' }), 300_000);
    await store.reserve(intent);
    const listed = async () => {
      const items = [];
      let cursor: string | undefined;
      do {
        const page = await store.listOpen({ limit: 500, ...(cursor ? { cursor } : {}) });
        items.push(...page.items.filter((i) => i.noticeId === intent.noticeId));
        cursor = page.cursor;
      } while (cursor);
      return items;
    };
    expect(await store.get(intent.noticeId, 'sms')).toEqual(intent);
    expect(await listed()).toEqual([]);
    expect(await store.defer(intent.noticeId, 'sms', intent.version, intent.dueAt as number)).toBe(true);
    expect(await store.get(intent.noticeId, 'sms')).toEqual({ ...intent, watched: undefined });
    expect(await listed()).toMatchObject([{ state: 'reserved', dueAt: intent.dueAt }]);
  });
});

describe('throttle gate item', () => {
  it('only ever extends the closed-until time, per channel', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('gate') });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    expect(await own.readGate('sms')).toBeUndefined();
    expect(await own.closeGate('sms', T0 + 5000, 'provider_throttled')).toBe(true);
    // Not later: nothing written, and the caller learns this hold was no news.
    expect(await own.closeGate('sms', T0 + 2000, 'provider_throttled')).toBe(false);
    expect(await own.readGate('sms')).toBe(T0 + 5000);
    expect(await own.closeGate('sms', T0 + 9000, 'operator_action_required:key_refused')).toBe(true);
    expect(await own.readGate('sms')).toBe(T0 + 9000);
    expect(await own.readGate('email')).toBeUndefined();
    // The hold's reason travels with its time (the senders record it on the rows it holds).
    expect(await own.readHold('sms')).toEqual({
      untilMs: T0 + 9000,
      reason: 'operator_action_required:key_refused',
    });
    expect(await own.readHold('email')).toBeUndefined();
  });
});

describe('recent failures and the rows a list shows', () => {
  it('a row that fails is listed among the recent failures (newest first, within the window); rows are read by key', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('failed'), openShards: 3 });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    const rows = [0, 1, 2, 3].map((i) => newIntent({ createdAt: T0 + i }));
    for (const row of rows) await own.reserve(row);
    const [a, b, c] = rows as [Intent, Intent, Intent, Intent];
    await own.apply(
      planTransition(a, { to: 'failed', reason: Reason.providerRejected, at: T0 + 10 }, TEST_TIMING),
    );
    // An escalating failure: listed at once, while its escalation is still owed.
    await own.apply(
      planTransition(b, { to: 'failed', reason: Reason.deadlineExceeded, at: T0 + 20 }, TEST_TIMING),
    );
    // The next UTC day: another partition of the list.
    await own.apply(
      planTransition(c, { to: 'failed', reason: Reason.cancelled, at: T0 + 86_400_000 }, TEST_TIMING),
    );

    const listed = await own.listFailed(T0, T0 + 86_400_000, 10);
    expect(listed.map((f) => [f.noticeId, f.reason, f.failedAt])).toEqual([
      [c.noticeId, 'cancelled', T0 + 86_400_000],
      [b.noticeId, 'deadline_exceeded', T0 + 20],
      [a.noticeId, 'provider_rejected', T0 + 10],
    ]);
    expect(listed[2]).toEqual({
      noticeId: a.noticeId,
      channel: 'email',
      failedAt: T0 + 10,
      createdAt: T0,
      deadline: a.deadline,
      attempts: 0,
      reason: 'provider_rejected',
    });
    // The window and the maximum bound what is read.
    expect((await own.listFailed(T0 + 15, T0 + 25, 10)).map((f) => f.noticeId)).toEqual([b.noticeId]);
    expect(await own.listFailed(T0, T0 + 86_400_000, 1)).toHaveLength(1);
    // A fact on a failed row lists nothing again.
    const failedA = (await own.get(a.noticeId, 'email')) as Intent;
    await own.apply(planFact(failedA, { reason: Reason.deliveryReported, at: T0 + 30 }));
    expect(await own.listFailed(T0, T0 + 86_400_000, 10)).toHaveLength(3);
    // The list item holds ids, codes and times only, and expires two windows after the failure.
    const scan = await client.send(
      new ScanCommand({ TableName: (own as unknown as { tableName: string }).tableName }),
    );
    const items = (scan.Items ?? []).filter((i) => i.pk?.S?.startsWith('F#'));
    expect(items).toHaveLength(3);
    for (const item of items) {
      expect(item.pk?.S).toMatch(/^F#\d{4}-\d\d-\d\d#[0-2]$/);
      expect(Object.keys(item).sort()).toEqual([
        'attempts',
        'channel',
        'createdAt',
        'deadline',
        'expiresAt',
        'failedAt',
        'noticeId',
        'pk',
        'reason',
        'sk',
        'state',
      ]);
      expect(Number(item.expiresAt?.N)).toBe(Math.ceil((Number(item.failedAt?.N) + 2 * 86_400_000) / 1000));
    }

    const read = await own.getRows([
      { noticeId: a.noticeId, channel: 'email' },
      { noticeId: rows[3]?.noticeId as string, channel: 'email' },
      { noticeId: a.noticeId, channel: 'sms' },
    ]);
    expect(read.map((r) => [r.noticeId, r.state])).toEqual([
      [a.noticeId, 'failed'],
      [rows[3]?.noticeId, 'reserved'],
    ]);
  });

  it('keeps an accepted row in the index at its due time (no key moved), counted apart as awaiting a report', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('awaiting') });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    const intent = newIntent({ createdAt: T0 });
    await own.reserve(intent);
    const claim = claimPlan(intent, 'w1', T0 + 10);
    await own.apply(claim);
    const accepted = planOutcome(
      claim.next,
      { kind: 'accepted', receiptId: 'm-1' },
      {
        now: T0 + 20,
        provider: 'ses',
        policy: { baseMs: 1000, capMs: 60_000, maxAttempts: 4 },
        random: () => 0.5,
        timing: TEST_TIMING,
      },
    );
    await own.apply(accepted);

    const row = await own.get(intent.noticeId, intent.channel);
    expect(row).toMatchObject({ state: 'accepted', dueAt: intent.dueAt, envelope: undefined });
    expect((await own.listDue(intent.dueAt as number)).items.map((i) => i.noticeId)).toEqual([
      intent.noticeId,
    ]);
    // Read from the index alone: it projects the state and the acceptance time.
    expect((await own.listOpen()).items).toEqual([
      expect.objectContaining({ noticeId: intent.noticeId, state: 'accepted', acceptedAt: T0 + 20 }),
    ]);
    expect(await own.countOpen()).toEqual({
      byState: { accepted: 1 },
      oldestCreatedAt: undefined,
      oldestAwaitingSince: T0 + 20,
      escalationsPending: 0,
    });
    // A final report takes it out.
    await own.apply(
      planTransition(
        row as Intent,
        { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 30 },
        TEST_TIMING,
      ),
    );
    expect((await own.listOpen()).items).toHaveLength(0);
  });

  it('settling the escalation of a held (open) row keeps it in the index, due at its own next step', async () => {
    const own = new DynamoDbLedgerStore({ client, tableName: uniqueTableName('held') });
    await ensureLedgerTable(client, (own as unknown as { tableName: string }).tableName);
    const intent = newIntent({ createdAt: T0 });
    await own.reserve(intent);
    const claim = claimPlan(intent, 'w1', T0 + 10);
    await own.apply(claim);
    const held = planOutcome(
      claim.next,
      { kind: 'operator_action_required', code: 'spend_limit', retryAfterMs: 60_000 },
      {
        now: T0 + 20,
        provider: 'eum',
        policy: { baseMs: 1000, capMs: 60_000, maxAttempts: 4 },
        random: () => 0.5,
        timing: TEST_TIMING,
      },
    );
    await own.apply(held);
    expect(await own.get(intent.noticeId, intent.channel)).toMatchObject({
      state: 'retry_scheduled',
      attempts: 0,
      escalationPending: true,
      dueAt: T0 + 20,
    });
    const due = T0 + 20 + 60_000 + TEST_TIMING.leaseMs;
    expect(
      await own.settleEscalation(intent.noticeId, intent.channel, held.next.version, { dueAt: due }),
    ).toBe(true);
    expect(await own.get(intent.noticeId, intent.channel)).toMatchObject({
      escalationPending: undefined,
      dueAt: due,
    });
    expect((await own.listOpen()).items.map((i) => i.noticeId)).toEqual([intent.noticeId]);
  });
});

describe('provider batch calls', () => {
  it('the batch id rides on the claim, stays through unknown, and goes with the outcome; the record round-trips once', async () => {
    const a = newIntent();
    const b = newIntent();
    await store.reserve(a);
    await store.reserve(b);
    const batchId = `bat_${'a'.repeat(22)}${String(Date.now()).slice(-4)}`;
    const claims = [a, b].map((intent) => {
      const decision = decideClaim(intent, {
        now: T0 + 1,
        workerId: 'w',
        timing: TEST_TIMING,
        provider: 'resend',
        batch: batchId,
      });
      if (decision.kind !== 'claim') throw new Error('not claimable');
      return decision.plan;
    });
    // The same claim without a batch, for its cost (the row and its open-index projection).
    const plain = newIntent();
    await store.reserve(plain);
    const plainClaim = decideClaim(plain, {
      now: T0 + 1,
      workerId: 'w',
      timing: TEST_TIMING,
      provider: 'resend',
    });
    if (plainClaim.kind !== 'claim') throw new Error('not claimable');
    calls.length = 0;
    expect((await store.apply(plainClaim.plan)).kind).toBe('applied');
    const plainUnits = calls.map((c) => c.capacity?.CapacityUnits);
    expect(plainUnits).toHaveLength(1);
    calls.length = 0;
    for (const plan of claims) expect((await store.apply(plan)).kind).toBe('applied');
    // Membership on the claim costs no extra write, nor an extra unit (the row stays under 1 KB).
    expect(calls.map((c) => c.capacity?.CapacityUnits)).toEqual([plainUnits[0], plainUnits[0]]);
    expect((await store.get(a.noticeId, 'email'))?.batch).toBe(batchId);

    const record = {
      id: batchId,
      channel: 'email' as const,
      provider: 'resend',
      idempotencyKey: `batch.${batchId}`,
      createdAt: T0 + 2,
      expiresAt: T0 + 90_000_000,
      members: [a, b].map((i) => ({
        noticeId: i.noticeId,
        channel: 'email' as const,
        templateId: i.templateId,
        templateVersion: i.templateVersion,
        envelope: i.envelope as string,
      })),
    };
    calls.length = 0;
    await store.recordBatch(record);
    expect(calls[0]?.operation).toBe('recordBatch');
    expect(calls[0]?.capacity?.CapacityUnits).toBeGreaterThan(0);
    expect(await store.getBatch(batchId)).toEqual({
      ...record,
      expiresAt: Math.ceil(record.expiresAt / 1000) * 1000,
    });
    await expect(store.recordBatch(record)).rejects.toThrow();
    expect(await store.getBatch('bat_never')).toBeUndefined();

    const sending = (await store.get(a.noticeId, 'email')) as Intent;
    const unknown = outcomePlan(sending, { kind: 'ambiguous', code: 'timeout' }, T0 + 3, 'resend');
    await store.apply(unknown);
    expect((await store.get(a.noticeId, 'email'))?.batch).toBe(batchId);
    const accepted = planTransition(
      (await store.get(a.noticeId, 'email')) as Intent,
      { to: 'accepted', reason: Reason.reconciledAccepted, at: T0 + 4, set: { providerReceiptId: 'e-1' } },
      TEST_TIMING,
    );
    await store.apply(accepted);
    expect((await store.get(a.noticeId, 'email'))?.batch).toBeUndefined();
  });
});
