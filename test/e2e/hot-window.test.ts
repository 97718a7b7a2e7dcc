/**
 * Acceptance of issue 22 on the local stack (`npm start` with a short hot window): a delivered
 * two-channel notice leaves the table HOT_RETENTION after it resolved (the local TTL sweeper, the
 * REMOVE on DynamoDB Local's stream, the archiver) and reads back from the archive with the same
 * transitions, `"source": "archive"`; the same POST again is a 200 with no second message at the
 * simulators (the SES store's `/store`, the SMS simulator's `__messages`); a changed POST is a 409
 * naming the field. Bounded: a 10 s window, every wait capped.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSesStore } from '../../local/ses/server.ts';
import { runCliCaptured } from '../helpers/cli.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, noticeBody, postNotice, simulatorMessages, testRecipient, waitFor } from './support.ts';

/** The hot window of this stack: short, so that the test sees a row leave the table. */
const HOT_RETENTION_S = 10;

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { HOT_RETENTION: `PT${HOT_RETENTION_S}S` } });
});

afterAll(async () => {
  await stopAllStacks();
});

const emailsTo = async (address: string) =>
  (await readSesStore(stack.state.endpoints.sesv2)).filter((email) => email.destination.to.includes(address));
const smsTo = async (phone: string) =>
  (await simulatorMessages(stack.state.endpoints.twilio)).filter((message) => message.to === phone);

/** The timeline as GET answers it, raw. */
async function timeline(noticeId: string): Promise<Record<string, unknown> & { source: string }> {
  return (await getTimeline(stack.apiUrl, noticeId)) as unknown as Record<string, unknown> & {
    source: string;
  };
}

/** A channel without what depends on where it was read (`source`, and `next`: none once archived). */
function story(read: Record<string, unknown>) {
  const { source: _source, channels, ...notice } = read;
  return {
    ...notice,
    channels: (channels as Record<string, unknown>[]).map(({ source: _s, next: _n, ...channel }) => channel),
  };
}

describe('across the hot window (HOT_RETENTION=PT10S)', () => {
  it('a delivered two-channel notice reads back from the archive; its replay is a 200 that sends nothing; a change is a 409', async () => {
    // Prepare: a notice sent and delivered on both channels
    const { email, phone } = testRecipient();
    const body = noticeBody({ eventId: `evt_hot_${randomBytes(6).toString('hex')}`, email, phone });
    const created = await postNotice(stack.apiUrl, body);
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;
    const before = await waitFor(
      `${noticeId} delivered on both channels`,
      async () => {
        const read = await timeline(noticeId);
        const states = (read.channels as { state: string }[]).map((c) => c.state);
        return states.every((s) => s === 'delivered') ? read : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(before.source).toBe('ledger');
    const deliveredAt = Date.now();
    expect(await emailsTo(email)).toHaveLength(1);
    expect(await smsTo(phone)).toHaveLength(1);

    // Act 1: wait for the rows to leave the table (TTL) and the timeline to come from the archive
    const after = await waitFor(
      `${noticeId} read from the archive`,
      async () => {
        const read = await timeline(noticeId);
        return read.source === 'archive' ? read : undefined;
      },
      { timeoutMs: HOT_RETENTION_S * 1000 + 60_000, intervalMs: 500 },
    );
    const leftAfterMs = Date.now() - deliveredAt;
    console.info(`delivered → read from the archive: ${leftAfterMs} ms (HOT_RETENTION ${HOT_RETENTION_S} s)`);

    // Assess 1: the same story, every channel from the archive, nothing next
    expect(leftAfterMs).toBeGreaterThanOrEqual(HOT_RETENTION_S * 1000 - 2_000);
    expect(story(after)).toEqual(story(before));
    const channels = after.channels as { channel: string; source: string; next: { kind: string } }[];
    expect(channels.map((c) => [c.channel, c.source, c.next.kind])).toEqual([
      ['email', 'archive', 'none'],
      ['sms', 'archive', 'none'],
    ]);

    // Act 2: the same POST again, and a changed one
    const replay = await postNotice(stack.apiUrl, body);
    const changed = await postNotice(stack.apiUrl, { ...body, variables: { firstName: 'Grace' } });
    // Long enough for a wrongly reserved channel to be sent (a worker picks a message up within a
    // second or two) and for one reconciler pass.
    await sleep(5_000);

    // Assess 2: a replay (200), no second message at either simulator, still only in the archive
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({
      noticeId,
      created: false,
      channels: [
        { channel: 'email', state: 'delivered' },
        { channel: 'sms', state: 'delivered' },
      ],
    });
    expect(changed.status).toBe(409);
    expect(changed.json).toMatchObject({
      type: 'https://notice-ledger.dev/problems/notice-conflict',
      noticeId,
      errors: [{ path: 'variables.firstName', code: 'differs_from_recorded' }],
    });
    expect(await emailsTo(email)).toHaveLength(1);
    expect(await smsTo(phone)).toHaveLength(1);
    expect((await timeline(noticeId)).source).toBe('archive');

    // The CLI says where it read the story
    const cli = await runCliCaptured(['get', noticeId], {
      env: { NOTICE_LEDGER_ENDPOINT: stack.apiUrl },
      cwd: stack.dataDir,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('read from the archive: past the hot window, final');
    expect(cli.stdout).toMatch(/^email: delivered \(archived\)/m);
  }, 180_000);
});
