/**
 * The archive across kill -9 (issue 22, build item 5): the archiver writes a batch in steps (a
 * `facts/` object, a `rows/` object, the key records), and the stack dies between them, first at
 * the two archive crash points (local/crash-points.ts: after the facts object; before the key
 * records), then by SIGKILL from outside, timed as an archive object appears, while notices are
 * still posted and sent. After each restart on the same data dir the archiver reads on from its
 * checkpoint; at the end every transition of every row is in the archive exactly once in content
 * (facts counted per notice, channel and seq), every terminal row is in `rows/` in its final state,
 * and its key record names an object holding it. Bounded: 150 notices, two crash points, two kills.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { dynamoDbKeyRecords } from '../../lambdas/adapters/dynamodb/key-records.ts';
import { LedgerTableClient } from '../../lambdas/adapters/dynamodb/ledger/table-client.ts';
import { ARCHIVE_SETTINGS } from '../../lambdas/contract/archive-settings.ts';
import { type IntentState, isTerminal } from '../../lambdas/domain/state-machine.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { freePort, makeDataDir, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { archiveProblems, readArchive, transitionCount } from './archive-support.ts';
import {
  allResolved,
  eventId,
  expectCrash,
  mapLimited,
  noticeRequest,
  phoneBook,
  postThroughKills,
  SHORT_TIMINGS,
  startProviders,
  waitForTimelines,
} from './runbook-support.ts';
import { postNotice, waitFor } from './support.ts';

const NOTICES = 150;
const FIRST = 20;
const KILLS = 2;
const TEST_TIMEOUT_MS = 240_000;

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

it(`${NOTICES} notices, the archiver killed between its writes and by SIGKILL ${KILLS}×: every fact archived once`, {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  // Prepare: providers in this process (they outlive the kills); short timings, so that what a
  // kill leaves `unknown` settles within seconds (failed, escalated: UNKNOWN_POLICY=fail).
  const startedAt = Date.now();
  const providers = await startProviders();
  closers.push(() => providers.close());
  const base = {
    dynamodb: 'shared' as const,
    dataDir: await makeDataDir('notice-ledger-archive-kill-'),
    port: await freePort(),
    tableName: uniqueTableName('archive-kill'),
    // The S3 store on one port across restarts, so the archive is read at one address.
    env: {
      ...providers.env,
      ...SHORT_TIMINGS,
      UNKNOWN_POLICY: 'fail',
      UNKNOWN_GRACE_MS: '8000',
      LOCAL_S3_PORT: String(await freePort()),
    },
  };
  const s3 = `http://127.0.0.1:${base.env.LOCAL_S3_PORT}`;
  const withCrash = (point: string) => ({ ...base, env: { ...base.env, CRASH_POINT: point } });
  const phone = phoneBook();
  const notices = Array.from({ length: NOTICES }, (_, i) =>
    noticeRequest({
      eventId: eventId(`ark${i}`),
      email: `success+${randomBytes(4).toString('hex')}@simulator.amazonses.com`,
      phone: phone(),
    }),
  );
  const post = async (apiUrl: string, from: number, to: number) =>
    mapLimited(notices.slice(from, to), 10, (n) => postNotice(apiUrl, n.body).catch(() => undefined));

  // Act 1: the first batch the archiver writes dies after its facts object.
  let stack = await startStackProcess(withCrash('archive_after_facts'));
  await post(stack.apiUrl, 0, FIRST);
  const afterFacts = await expectCrash(stack);
  // Act 2: the same batch again (from the checkpoint): the rest of the facts, the rows, then death
  // before the key records.
  stack = await startStackProcess(withCrash('archive_before_key_records'));
  await post(stack.apiUrl, 0, FIRST);
  const beforeKeys = await expectCrash(stack, 60_000);
  // Act 3: the rest, posted while the stack is SIGKILLed from outside as the archiver writes.
  stack = await startStackProcess(base);
  const bucket = stack.state.archiveBucket;
  const archived = async () => (await readArchive(s3, bucket)).objects.length;
  const run = await postThroughKills({
    apiUrl: stack.apiUrl,
    bodies: notices.map((n) => n.body),
    windowMs: 15_000,
    producers: 4,
    patienceMs: 40_000,
    kills: KILLS,
    stack,
    restart: () => startStackProcess(base),
    // Each kill lands just after an archive object appeared: the archiver is inside a batch.
    beforeKill: async () => {
      const seen = await archived().catch(() => 0);
      await waitFor('a new archive object', async () => ((await archived()) > seen ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 20,
      }).catch(() => undefined);
    },
  });
  stack = run.stack;
  const timelines = await waitForTimelines(
    stack.apiUrl,
    notices.map((n) => n.noticeId),
    allResolved,
    { timeoutMs: 90_000, intervalMs: 1_000, what: 'every channel of every notice to resolve' },
  );
  // Settled: two looks a few seconds apart see the same timelines (an `accepted` may still turn
  // `delivered`), and the archive holds as many transitions as they do.
  let previous = '';
  const settled = await waitFor(
    'the timelines and the archive to settle',
    async () => {
      const now = await waitForTimelines(
        stack.apiUrl,
        notices.map((n) => n.noticeId),
        () => true,
      );
      const archive = await readArchive(s3, bucket);
      const same = JSON.stringify(now) === previous;
      previous = JSON.stringify(now);
      const facts = archive.facts.filter((f) => f.kind === 'transition').length;
      return same && facts === transitionCount(now) ? { timelines: now, archive } : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 2_000 },
  );

  // Assess
  const { archive } = settled;
  console.info(
    `archive-kill: ${NOTICES} notices, ${transitionCount(settled.timelines)} transitions, ${archive.objects.length} objects; ` +
      `kills ${JSON.stringify(run.kills)}; ${Date.now() - startedAt} ms`,
  );
  const factProblems = archiveProblems(settled.timelines, archive.facts);
  if (factProblems.length > 0) console.info(`archive-kill fact problems:\n${factProblems.join('\n')}`);
  expect(afterFacts.line).toMatch(/crash point archive_after_facts reached for facts\//);
  expect(beforeKeys.line).toMatch(/crash point archive_before_key_records reached for ntc_/);
  expect(run.kills).toHaveLength(KILLS);
  expect(timelines.every(allResolved)).toBe(true);
  expect(factProblems).toEqual([]);
  // Every resolved row is in `rows/`, in its final state; each key record names an object holding it.
  const rowsIn = new Set(archive.rows.map((r) => `${r.object} ${r.noticeId} ${r.channel}`));
  const finalRows = new Set(archive.rows.map((r) => `${r.noticeId} ${r.channel} ${r.state}`));
  const ddb = ddbClient();
  const reader = dynamoDbKeyRecords(
    new LedgerTableClient({ client: ddb, tableName: stack.state.keyTableName }),
    // The stack's KEY_BUCKET_CHARS: the local default (the stack is started without one).
    { bucketChars: ARCHIVE_SETTINGS.KEY_BUCKET_CHARS.default },
  );
  const problems: string[] = [];
  for (const t of settled.timelines) {
    const keys = await reader.keyRecordsOf(t.noticeId);
    // A row is in `rows/`, with a key record, once it is terminal (`accepted` still awaits its report).
    for (const c of t.channels.filter((channel) => isTerminal(channel.state as IntentState))) {
      if (!finalRows.has(`${t.noticeId} ${c.channel} ${c.state}`))
        problems.push(`${t.noticeId} ${c.channel} ${c.state}: not in rows/`);
      const key = keys.find((record) => record.channel === c.channel);
      if (!key) problems.push(`${t.noticeId} ${c.channel}: no key record`);
      else if (!rowsIn.has(`${key.rowsObject} ${t.noticeId} ${c.channel}`))
        problems.push(
          `${t.noticeId} ${c.channel}: its key record names ${key.rowsObject}, which does not hold it`,
        );
    }
  }
  ddb.destroy();
  if (problems.length > 0)
    console.info(`archive-kill row problems:\n${problems.join('\n')}\n${stack.output().slice(-3000)}`);
  expect(problems).toEqual([]);
  expect((await stack.stop()).code).toBe(0);
});
