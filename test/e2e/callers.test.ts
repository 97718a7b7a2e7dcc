/**
 * Callers see what is theirs, end to end (README "Callers", docs/api.md "Callers"): three
 * principals and the default caller against `npm start` (a child process), each named by the
 * `x-notice-ledger-caller` header the local gateway turns into `requestContext.authorizer.iam`.
 * A submits and reads its notice; B reads and cancels it as an unknown id (404) and replays it
 * for a 409 that names nothing; the auditor reads everything and cancels nothing (403); the
 * operator cancels it. The senders are off (LOCAL_SENDERS=none), so the notice stays `reserved`
 * and a cancel has something to call off. The CLI's `--as` sends the same header.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/cli.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { noticeBody, testRecipient, waitFor } from './support.ts';

const A = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-0a1b2c3d';
const A_OTHER_SESSION = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-9f8e7d6c';
const B = 'arn:aws:sts::222222222222:assumed-role/billing-service/task-7';
const AUDITOR = 'arn:aws:sts::000000000000:assumed-role/notice-ledger-local-auditor/eve';
const OPERATOR = 'arn:aws:sts::000000000000:assumed-role/notice-ledger-local-operator/ada';
const UNKNOWN_ID = 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa';

let stack: StackProcess;

beforeAll(async () => {
  stack = await startStackProcess({ env: { LOCAL_SENDERS: 'none' } });
}, 120_000);

afterAll(async () => {
  await stopAllStacks();
});

interface Answer {
  readonly status: number;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field
  readonly json: any;
}

async function call(method: string, path: string, caller?: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: {
      ...(caller ? { 'x-notice-ledger-caller': caller } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
}

const cli = (args: string[]) =>
  runCliCaptured(args, { env: { NOTICE_LEDGER_ENDPOINT: stack.apiUrl }, cwd: process.cwd() });

describe('three principals against the local stack', () => {
  const recipient = testRecipient();
  const body = { ...noticeBody({ eventId: `evt_callers_${randomBytes(6).toString('hex')}`, ...recipient }) };
  let noticeId: string;

  it('A submits and reads its notice from any of its sessions; the timeline names A’s role', async () => {
    const submitted = await call('POST', '/v1/notices', A, body);
    expect(submitted.status).toBe(202);
    noticeId = submitted.json.noticeId;

    const read = await call('GET', `/v1/notices/${noticeId}`, A_OTHER_SESSION);

    expect(read.status).toBe(200);
    expect(read.json.channels.map((c: { submittedBy: string }) => c.submittedBy)).toEqual([
      'arn:aws:iam::111111111111:role/lab-system',
      'arn:aws:iam::111111111111:role/lab-system',
    ]);
  });

  it('B reads and cancels it as an unknown id (the same 404), and its replay is a 409 that names nothing', async () => {
    const readByB = await call('GET', `/v1/notices/${noticeId}`, B);
    const readUnknown = await call('GET', `/v1/notices/${UNKNOWN_ID}`, B);
    const cancelByB = await call('POST', `/v1/notices/${noticeId}/cancel`, B, { reason: 'not mine' });
    const cancelUnknown = await call('POST', `/v1/notices/${UNKNOWN_ID}/cancel`, B, { reason: 'not mine' });
    const replayByB = await call('POST', '/v1/notices', B, body);
    const viaCli = await cli(['get', noticeId, '--as', B]);

    expect(readByB.status).toBe(404);
    expect(readByB.text).toBe(readUnknown.text);
    expect(cancelByB.status).toBe(404);
    expect(cancelByB.text).toBe(cancelUnknown.text);
    expect(replayByB.status).toBe(409);
    expect(replayByB.json.type).toBe('https://notice-ledger.dev/problems/notice-taken');
    expect(replayByB.text).not.toContain(noticeId);
    expect(replayByB.text).not.toContain('reserved');
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toContain('HTTP 404');
    // Still A's, untouched.
    const mine = await call('GET', `/v1/notices/${noticeId}`, A);
    expect(mine.json.channels.map((c: { state: string }) => c.state)).toEqual(['reserved', 'reserved']);
  });

  it('the auditor reads the notice and the list, and may not cancel it (403)', async () => {
    const read = await call('GET', `/v1/notices/${noticeId}`, AUDITOR);
    // A row on the happy path enters the list once its watch finds it still owed something
    // (INDEX_WATCH_DELAY_MS, seconds locally: docs/table-design.md "Watched rows"); this one is
    // still reserved (no sender runs here).
    const list = await waitFor(
      'the reserved notice in the auditor’s list',
      async () => {
        const page = await call('GET', '/v1/notices?state=reserved&limit=200', AUDITOR);
        const ids = (page.json?.items ?? []).map((i: { noticeId: string }) => i.noticeId);
        return ids.includes(noticeId) ? page : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const cancel = await call('POST', `/v1/notices/${noticeId}/cancel`, AUDITOR, { reason: 'audit' });
    const viaCli = await cli(['get', noticeId, '--as', AUDITOR, '--json']);

    expect(read.status).toBe(200);
    expect(list.status).toBe(200);
    expect(list.json.items.map((i: { noticeId: string }) => i.noticeId)).toContain(noticeId);
    expect(cancel.status).toBe(403);
    expect(cancel.json).toMatchObject({
      type: 'https://notice-ledger.dev/problems/forbidden',
      role: 'auditor',
    });
    expect(viaCli.code).toBe(0);
    expect(JSON.parse(viaCli.stdout).noticeId).toBe(noticeId);
  });

  it('the operator cancels it, recorded with the operator’s session', async () => {
    const cancel = await call('POST', `/v1/notices/${noticeId}/cancel`, OPERATOR, {
      reason: 'appointment cancelled',
    });

    expect(cancel.status).toBe(200);
    expect(cancel.json.channels).toEqual([
      { channel: 'email', state: 'failed', cancelled: true },
      { channel: 'sms', state: 'failed', cancelled: true },
    ]);
    const read = await call('GET', `/v1/notices/${noticeId}`, A);
    for (const channel of read.json.channels) {
      expect(channel.transitions.at(-1)).toMatchObject({ reason: 'cancelled', actor: OPERATOR });
    }
  });

  it('without the header a request is the local operator, as before; a header that names no principal is refused', async () => {
    const unsignedBody = { ...body, eventId: `${body.eventId}_default` };
    const submitted = await call('POST', '/v1/notices', undefined, unsignedBody);
    const readByDefault = await call('GET', `/v1/notices/${noticeId}`);
    const listByDefault = await call('GET', '/v1/notices');
    const malformed = await call('GET', `/v1/notices/${noticeId}`, 'ops-team');

    expect(submitted.status).toBe(202);
    const own = await call('GET', `/v1/notices/${submitted.json.noticeId}`);
    expect(own.json.channels[0].submittedBy).toBe(
      'arn:aws:iam::000000000000:role/notice-ledger-local-operator',
    );
    expect(readByDefault.status).toBe(200);
    expect(listByDefault.status).toBe(200);
    expect(malformed.status).toBe(403);
    expect(malformed.json.detail).toContain('x-notice-ledger-caller');
  });
});
