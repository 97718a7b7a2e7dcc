/**
 * Stopping and crashing `npm start`, then starting it again on the same data dir. Each stack
 * here runs its own DynamoDB Local under the data dir: persistence across restarts and "a
 * group kill takes the JVM down too" are what these tests are about.
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { readSesStore, type SesLocal, startSesLocal } from '../../local/ses/server.ts';
import { type SmsSimulator, startSmsSimulator } from '../../local/sms-simulator/server.ts';
import {
  freePort,
  makeDataDir,
  startStackProcess,
  stopAllStacks,
  waitForGroupGone,
} from '../helpers/local-stack.ts';
import {
  getTimeline,
  IN_PROGRESS,
  noticeBody,
  postNotice,
  SENT,
  type Timeline,
  testRecipient,
  waitFor,
} from './support.ts';

const closers: (() => Promise<void>)[] = [];

afterAll(async () => {
  await stopAllStacks();
  for (const close of closers.reverse()) await close();
});

describe('local stack restarts', () => {
  it('exits 0 on SIGTERM, leaves no process behind, and resumes from the data dir', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const dataDir = await makeDataDir();
    const first = await startStackProcess({ dynamodb: 'own', dataDir });
    const { email, phone } = testRecipient();
    const created = await postNotice(
      first.apiUrl,
      noticeBody({ eventId: `evt_${randomBytes(6).toString('hex')}`, email, phone }),
    );
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;
    const before = await waitFor('both channels sent', async () => {
      const timeline = await getTimeline(first.apiUrl, noticeId);
      return timeline.channels.every((c) => SENT.has(c.state)) ? timeline : undefined;
    });
    const secretsBefore = await readFile(join(dataDir, 'local-secrets.json'), 'utf8');

    // Act
    const exit = await first.stop('SIGTERM', 15_000);

    // Assess
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(15_000);
    console.info(`SIGTERM → exit 0 in ${exit.ms} ms`);
    // DynamoDB Local (the stack's child, same group) is gone too.
    expect(await waitForGroupGone(first.pid, 5_000)).toBe(true);
    expect((await stat(join(dataDir, 'local-secrets.json'))).mode & 0o777).toBe(0o600);

    const second = await startStackProcess({ dynamodb: 'own', dataDir, port: first.port });
    const after = await getTimeline(second.apiUrl, noticeId);
    for (const channel of before.channels) {
      const resumed = after.channels.find((c) => c.channel === channel.channel);
      // Earlier records are never rewritten; a later callback may only have appended.
      expect(resumed?.transitions.slice(0, channel.transitions.length)).toEqual(channel.transitions);
    }
    expect(await readFile(join(dataDir, 'local-secrets.json'), 'utf8')).toBe(secretsBefore);
    // A replay after the restart is recognised (same keys, same ledger): 200, not 202 or 409.
    const replay = await postNotice(second.apiUrl, noticeBody({ eventId: after.eventId, email, phone }));
    expect(replay.status).toBe(200);
    expect((await second.stop()).code).toBe(0);
  });

  /**
   * Depends on the reconciler (lambdas/handlers/reconciler.ts): after the crash the queues
   * are empty (local-aws-sqs keeps them in memory), so only its re-enqueue of stale `reserved`
   * rows and its lease expiry of `sending` rows can finish these notices.
   */
  it('kill -9 of the whole group mid-flight: every intent settles, none is sent twice', {
    timeout: 150_000,
  }, async () => {
    // Prepare: the providers live in this process so that they survive the crash and can be
    // counted across both runs.
    const ses: SesLocal = await startSesLocal();
    closers.push(() => ses.close());
    const sms: SmsSimulator = await startSmsSimulator();
    closers.push(() => sms.close());
    sms.reset();
    // The first three SMS sends are accepted by the provider, which then withholds its answer:
    // the kill lands while those workers hold their lease. No status callbacks before the
    // crash: one would settle those rows (a report proves acceptance) before the kill.
    sms.faults.set({
      failNext: [1, 2, 3].map(() => ({ kind: 'timeout_after_accept' as const, delayMs: 30_000 })),
      callbacksEnabled: false,
    });
    const dataDir = await makeDataDir();
    const port = await freePort();
    const env = {
      AWS_ENDPOINT_URL_SESV2: ses.endpoint,
      TWILIO_BASE_URL: sms.baseUrl,
      TWILIO_ACCOUNT_SID: sms.accountSid,
      TWILIO_AUTH_TOKEN: sms.authToken,
      TWILIO_FROM: '+15005550006',
      // The lease outlives the provider timeout, as it must; both short so the test is.
      PROVIDER_TIMEOUT_MS: '2500',
      SEND_LEASE_MS: '3000',
      RECONCILE_INTERVAL_MS: '1000',
      RETRY_BASE_MS: '200',
    };
    const first = await startStackProcess({ dynamodb: 'own', dataDir, port, env });
    const recipients = Array.from({ length: 10 }, (_, i) => ({
      ...testRecipient(),
      eventId: `evt_k9_${i}_${randomBytes(4).toString('hex')}`,
    }));
    const post = (r: (typeof recipients)[number]) =>
      postNotice(first.apiUrl, noticeBody({ eventId: r.eventId, email: r.email, phone: r.phone }));

    // Act: five notices, wait until the first (withheld) send is in flight, five more, kill at
    // once: well within PROVIDER_TIMEOUT_MS, so that worker still holds its lease.
    const waveA = await Promise.all(recipients.slice(0, 5).map(post));
    await waitFor(
      'an SMS send in flight',
      async () => (sms.faults.counters.createCalls >= 1 ? true : undefined),
      {
        timeoutMs: 15_000,
      },
    );
    const waveB = await Promise.all(recipients.slice(5).map(post));
    // DynamoDB Local answers a TransactWriteItems (how a two-channel notice is reserved) a few
    // milliseconds before the write is on disk: SIGKILL of its JVM at once after the answer lost
    // 7 of 80 acknowledged transactions, 0 of 80 plain puts, and 0 of 100 transactions with 20 ms
    // between answer and kill (local/README.md "Stopping"). That is the emulator, not the ledger
    // (an acknowledged DynamoDB write is durable); the wait keeps this test about our recovery.
    // The SMS sends it depends on are still in flight: the simulator holds them for 30 s.
    await sleep(250);
    await first.kill9();

    expect([...waveA, ...waveB].map((a) => a.status)).toEqual(Array(10).fill(202));
    const noticeIds = [...waveA, ...waveB].map((a) => a.json.noticeId as string);

    // Withheld answers not yet drawn would only slow the second run down.
    sms.faults.set({ failNext: [], callbacksEnabled: true });
    const second = await startStackProcess({ dynamodb: 'own', dataDir, port, env });
    const restartedAt = Date.now();
    const settled = await waitFor(
      'every channel of every notice to leave reserved/sending/retry_scheduled',
      async () => {
        const timelines = await Promise.all(noticeIds.map((id) => getTimeline(second.apiUrl, id)));
        return timelines.every((t) => t.channels.every((c) => !IN_PROGRESS.has(c.state)))
          ? timelines
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    console.info(`after restart, all 20 intents settled in ${Date.now() - restartedAt} ms`);

    // Assess
    const emails = await readSesStore(ses.endpoint);
    const texts = sms.messages();
    const summary: string[] = [];
    settled.forEach((timeline: Timeline, index) => {
      const r = recipients[index];
      if (r === undefined) throw new Error('recipient missing');
      for (const channel of timeline.channels) {
        const delivered =
          channel.channel === 'email'
            ? emails.filter((e) => e.destination.to.includes(r.email)).length
            : texts.filter((m) => m.to === r.phone).length;
        const reasons = channel.transitions.map((t) => t.reason);
        summary.push(`${index} ${channel.channel} ${channel.state} sent=${delivered} ${reasons.join('>')}`);
        // Never twice, whatever happened.
        expect(delivered, `${channel.channel} of notice ${index}`).toBeLessThanOrEqual(1);
        if (SENT.has(channel.state)) {
          expect(delivered, `${channel.channel} of notice ${index}`).toBe(1);
        } else {
          // Only a send the kill interrupted may stay unresolved, and only as `unknown`.
          expect(channel.state, `${channel.channel} of notice ${index}`).toBe('unknown');
          expect(channel.transitions.some((t) => t.from === 'sending' && t.to === 'unknown')).toBe(true);
        }
      }
    });
    console.info(`kill -9 outcome:\n${summary.join('\n')}`);
    // The withheld send was cut by the kill: its lease expired and the reconciler took over.
    const cut = settled
      .flatMap((t) => t.channels)
      .filter((c) => c.transitions.some((t) => t.reason === 'lease_expired'));
    expect(cut.length).toBeGreaterThanOrEqual(1);
    expect((await second.stop()).code).toBe(0);
  });
});
