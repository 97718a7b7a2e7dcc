import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/cli.ts';

/**
 * The CLI against a scripted HTTP server: which request each command sends, what it prints,
 * and its exit code. (test/e2e/cli.test.ts runs it against the real local stack.)
 */

interface Seen {
  method: string;
  url: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}
type Reply = { status: number; body?: unknown; type?: string };

const seen: Seen[] = [];
let replies: Reply[] = [];
let endpoint: string;
let dir: string;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      body: Buffer.concat(chunks).toString('utf8'),
      headers: req.headers,
    });
    const reply = replies.shift() ?? { status: 500, body: { title: 'no scripted reply', status: 500 } };
    const type = reply.type ?? (reply.status >= 400 ? 'application/problem+json' : 'application/json');
    res.writeHead(reply.status, { 'content-type': type });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'nl-cli-'));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
  replies = [];
});

const NOW = new Date('2026-11-30T10:30:00Z');

function cli(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) {
  return runCliCaptured(args, {
    env: { NOTICE_LEDGER_ENDPOINT: endpoint, ...options.env },
    cwd: dir,
    now: () => NOW,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });
}

const NOTICE_ID = 'ntc_hgvctydqtwabm3yfztbx6a356f';

const timeline = {
  noticeId: NOTICE_ID,
  eventId: 'evt_8f31',
  eventType: 'lab-result-ready',
  recipientId: 'pat_1042',
  template: { id: 'lab-result-ready', version: 'v3' },
  createdAt: '2026-11-30T10:00:00.000Z',
  deadline: '2026-12-01T10:00:00.000Z',
  channels: [
    {
      channel: 'sms',
      state: 'accepted',
      destination: { fingerprint: 'fp_abc', masked: '+1******4567' },
      provider: 'twilio',
      providerReceiptId: null,
      attempts: 1,
      priority: 'critical',
      nextAttemptAt: null,
      submittedBy: 'arn:aws:iam::123456789012:role/lab-system',
      sms: { encoding: 'GSM-7', segments: 1, characters: 80 },
      transitions: [
        { seq: 1, at: '2026-11-30T10:00:00.000Z', from: null, to: 'reserved', reason: 'intake' },
        {
          seq: 2,
          at: '2026-11-30T10:00:00.200Z',
          from: 'reserved',
          to: 'sending',
          reason: 'claimed',
          attempt: 1,
        },
        {
          seq: 3,
          at: '2026-11-30T10:00:10.200Z',
          from: 'sending',
          to: 'unknown',
          reason: 'provider_timeout',
          attempt: 1,
          detail: 'timeout',
        },
        {
          seq: 4,
          at: '2026-11-30T10:20:00.000Z',
          from: 'unknown',
          to: 'accepted',
          reason: 'operator_confirmed_accepted',
          attempt: 1,
          detail: 'seen in provider console\u001b[2J',
          actor: 'arn:aws:sts::123456789012:assumed-role/Operator/ada',
        },
      ],
    },
  ],
};

describe('usage (exit 2, nothing sent)', () => {
  it.each([
    [[]],
    [['frobnicate']],
    [['get']],
    [['get', NOTICE_ID, '--bogus']],
    [['get', NOTICE_ID, '--reason', 'x']],
    [['resolve', NOTICE_ID, 'sms', '--outcome', 'accepted']],
    [['resolve', NOTICE_ID, 'fax', '--outcome', 'accepted', '--reason', 'r']],
    [['resolve', NOTICE_ID, 'sms', '--outcome', 'maybe', '--reason', 'r']],
    [['cancel', NOTICE_ID]],
    [['list', '--older-than', 'ten minutes']],
    [['list', '--limit', 'many']],
    // Out of the API's range: refused here like every other bad option, not sent for a 400 (exit 1).
    [['list', '--limit', '500']],
    [['list', '--limit', '0']],
    [['suppress', 'block', 'sms', '+15551234567']],
    [['suppress', 'get', 'sms', '+15551234567', '--reason', 'x']],
    [['send', 'missing.json']],
    [['health', '--endpoint', 'not a url']],
    [['health', '--sigv4', '--endpoint', 'http://127.0.0.1:1']],
  ])('%j', async (args) => {
    const result = await cli(args, { env: { AWS_REGION: '' } });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe('');
    expect(seen).toEqual([]);
  });

  it('--help prints the commands and exits 0', async () => {
    const result = await cli(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['send', 'get', 'list', 'resolve', 'cancel', 'suppress', 'health']) {
      expect(result.stdout).toContain(`  ${command}`);
    }
  });
});

describe('commands', () => {
  it('send <file>: POST /v1/notices with the file, a table of channels', async () => {
    const file = join(dir, 'notice.json');
    await writeFile(file, JSON.stringify({ eventId: 'evt_1' }));
    replies = [
      {
        status: 202,
        body: { noticeId: NOTICE_ID, created: true, channels: [{ channel: 'email', state: 'reserved' }] },
      },
    ];
    const result = await cli(['send', 'notice.json']);
    expect(result.code).toBe(0);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/notices', body: '{"eventId":"evt_1"}' });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(result.stdout).toContain(`recorded: ${NOTICE_ID} (HTTP 202)`);
    expect(result.stdout).toMatch(/email\s+reserved/);
  });

  it('send -: a batch from stdin; an item that failed makes exit 1', async () => {
    replies = [
      {
        status: 200,
        body: {
          results: [
            { index: 0, status: 202, noticeId: NOTICE_ID },
            {
              index: 1,
              status: 422,
              error: {
                title: 'Notice cannot be accepted',
                status: 422,
                errors: [{ path: 'variables.firstName', code: 'required', message: 'is required' }],
              },
            },
          ],
        },
      },
    ];
    const result = await cli(['send', '-'], { stdin: '{"notices":[{},{}]}' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/notices/batch' });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ notices: [{}, {}] });
    expect(result.stdout).toMatch(/1\s+422\s+Notice cannot be accepted: variables.firstName required/);
    expect(result.code).toBe(1);
  });

  it('an API problem: title, status and field errors on stderr, exit 1', async () => {
    replies = [
      {
        status: 400,
        body: {
          type: 'https://notice-ledger.dev/problems/invalid-request',
          title: 'Invalid request',
          status: 400,
          detail: '1 problem with: recipient.phone',
          errors: [
            { path: 'recipient.phone', code: 'invalid_phone', message: 'must be an E.164 phone number' },
          ],
        },
      },
    ];
    const result = await cli(['send', '-'], { stdin: '{}' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Invalid request (HTTP 400)');
    expect(result.stderr).toContain('- recipient.phone: must be an E.164 phone number [invalid_phone]');
  });

  it('get: the timeline as text, with the actor, and no terminal escapes from the API', async () => {
    replies = [{ status: 200, body: timeline }];
    const result = await cli(['get', NOTICE_ID]);
    expect(result.code).toBe(0);
    expect(seen[0]).toMatchObject({ method: 'GET', url: `/v1/notices/${NOTICE_ID}` });
    expect(result.stdout).toContain('sms: accepted  to +1******4567');
    expect(result.stdout).toContain('  priority critical  provider twilio');
    expect(result.stdout).toContain('  submitted by arn:aws:iam::123456789012:role/lab-system');
    expect(result.stdout).toContain('created 2026-11-30 10:00:00Z (30m 00s ago)');
    expect(result.stdout).toMatch(
      /4\s+2026-11-30 10:20:00Z\s+\+19m 49s\s+unknown → accepted\s+operator_confirmed_accepted\s+1\s+arn:aws:sts::123456789012:assumed-role\/Operator\/ada\s+seen in provider console/,
    );
    expect(result.stdout).not.toContain('\u001b');
  });

  it('get: a deadline-risk warning is marked as the escalation it raised, while the row keeps trying', async () => {
    const [channel] = timeline.channels;
    const warned = {
      ...timeline,
      channels: [
        {
          ...channel,
          state: 'reserved',
          priority: 'bulk',
          transitions: [
            channel?.transitions[0],
            {
              seq: 2,
              at: '2026-11-30T10:00:00.000Z',
              from: 'reserved',
              to: 'reserved',
              reason: 'deadline_at_risk',
              detail: 'estimatedSendAt 2026-11-30T10:05:00.000Z',
            },
          ],
        },
      ],
    };
    replies = [{ status: 200, body: warned }];
    const result = await cli(['get', NOTICE_ID]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('priority bulk');
    expect(result.stdout).toMatch(/reserved → reserved\s+deadline_at_risk \(escalated\)\s+estimatedSendAt/);
  });

  it('get: a notice past the hot window says it was read from the archive, each archived channel marked', async () => {
    const [channel] = timeline.channels;
    const delivered = {
      ...channel,
      state: 'delivered',
      source: 'archive',
      next: { kind: 'none', at: null, summary: 'nothing: delivered (archived: past the hot window, final)' },
    };
    replies = [
      { status: 200, body: { ...timeline, source: 'archive', channels: [delivered] } },
      { status: 200, body: { ...timeline, source: 'ledger', channels: [{ ...channel, source: 'ledger' }] } },
    ];
    const archived = await cli(['get', NOTICE_ID]);
    const ledger = await cli(['get', NOTICE_ID]);
    expect(archived.code).toBe(0);
    expect(archived.stdout).toContain('  read from the archive: past the hot window, final');
    expect(archived.stdout).toContain('sms: delivered (archived)  to +1******4567');
    expect(archived.stdout).toContain('  next: nothing: delivered (archived: past the hot window, final)');
    expect(ledger.stdout).toContain('  read from the ledger table');
    expect(ledger.stdout).not.toContain('archive');
  });

  it('get --json prints the body as the API gave it', async () => {
    replies = [{ status: 200, body: timeline }];
    const result = await cli(['get', NOTICE_ID, '--json']);
    expect(JSON.parse(result.stdout)).toEqual(timeline);
  });

  it('get --html FILE writes the self-contained page', async () => {
    replies = [{ status: 200, body: timeline }];
    const result = await cli(['get', NOTICE_ID, '--html', 'page.html']);
    expect(result.code).toBe(0);
    const html = await readFile(join(dir, 'page.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('data-lane="sms"');
    expect(html).toContain('operator_confirmed_accepted');
    expect(result.stderr).toContain('page.html');
  });

  it('get --html into a folder that does not exist yet creates it', async () => {
    replies = [{ status: 200, body: timeline }];
    const result = await cli(['get', NOTICE_ID, '--html', 'pages/2026/t.html']);
    expect(result.code).toBe(0);
    expect(await readFile(join(dir, 'pages', '2026', 't.html'), 'utf8')).toMatch(/^<!doctype html>/);
    expect(result.stderr).toContain(join(dir, 'pages', '2026', 't.html'));
  });

  it('get --html where a file stands in the folder path: a usage error naming the path, nothing sent', async () => {
    await writeFile(join(dir, 'not-a-folder'), 'x');
    const result = await cli(['get', NOTICE_ID, '--html', 'not-a-folder/t.html']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cannot write ${join(dir, 'not-a-folder', 't.html')}`);
    expect(result.stderr).toContain('a part of its folder path is a file');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(seen).toEqual([]);
  });

  it('list: the query as the API defines it; a table oldest first with counts', async () => {
    replies = [
      {
        status: 200,
        body: {
          items: [
            {
              noticeId: NOTICE_ID,
              channel: 'sms',
              state: 'unknown',
              createdAt: '2026-11-30T10:00:00.000Z',
              deadline: '2026-12-01T10:00:00.000Z',
              attempts: 1,
              ageSeconds: 1800,
              escalated: true,
            },
          ],
          nextCursor: null,
        },
      },
    ];
    const result = await cli([
      'list',
      '--state',
      'unknown',
      '--channel',
      'sms',
      '--older-than',
      '10m',
      '--limit',
      '20',
    ]);
    expect(result.code).toBe(0);
    expect(seen[0]?.url).toBe('/v1/notices?state=unknown&channel=sms&olderThan=PT10M&limit=20');
    expect(result.stdout).toMatch(
      new RegExp(`${NOTICE_ID}\\s+sms\\s+unknown \\(escalated\\)\\s+30m 00s\\s+2026-11-30 10:00:00Z`),
    );
    expect(result.stdout).toContain('1 channel(s): unknown 1; oldest 30m 00s');
    // An answer without last reasons and next steps (an older deployment): dashes.
    expect(result.stdout).toMatch(/\s1\s+—\s+—\n/);
  });

  it('list: each channel’s last reason and what happens next; --state failed', async () => {
    replies = [
      {
        status: 200,
        body: {
          items: [
            {
              noticeId: NOTICE_ID,
              channel: 'sms',
              state: 'failed',
              createdAt: '2026-11-30T10:00:00.000Z',
              deadline: '2026-11-30T10:05:00.000Z',
              attempts: 0,
              ageSeconds: 1800,
              escalated: true,
              lastReason: {
                reason: 'deadline_exceeded',
                at: '2026-11-30T10:05:00.000Z',
                detail:
                  'no attempt made; waited on channel_held: twilio held the channel: provider_throttled until 2026-11-30T10:10:00.000Z',
              },
              next: {
                kind: 'operator',
                at: null,
                summary: "escalated: an operator's call (deadline_exceeded)",
              },
            },
          ],
          nextCursor: null,
        },
      },
      { status: 200, body: { items: [], nextCursor: null } },
    ];
    const result = await cli(['list', '--state', 'failed']);
    expect(result.code).toBe(0);
    expect(seen[0]?.url).toBe('/v1/notices?state=failed');
    expect(result.stdout).toContain(
      'deadline_exceeded: no attempt made; waited on channel_held: twilio held the channel: provider_throttled until 2026-11-30T10:10:00.000Z',
    );
    expect(result.stdout).toContain("escalated: an operator's call (deadline_exceeded)");
    expect((await cli(['list', '--state', 'failed'])).stdout.trim()).toBe(
      'no failed channel in the last 24 hours',
    );
  });

  it('list --all follows nextCursor', async () => {
    const item = (id: string) => ({
      noticeId: id,
      channel: 'email',
      state: 'reserved',
      createdAt: '2026-11-30T10:00:00.000Z',
      deadline: '2026-12-01T10:00:00.000Z',
      attempts: 0,
      ageSeconds: 60,
      escalated: false,
    });
    replies = [
      { status: 200, body: { items: [item('ntc_a')], nextCursor: 'c1' } },
      { status: 200, body: { items: [item('ntc_b')], nextCursor: null } },
    ];
    const result = await cli(['list', '--all', '--json']);
    expect(seen.map((s) => s.url)).toEqual(['/v1/notices', '/v1/notices?cursor=c1']);
    expect(JSON.parse(result.stdout).items.map((i: { noticeId: string }) => i.noticeId)).toEqual([
      'ntc_a',
      'ntc_b',
    ]);
  });

  it('resolve: the body of the resolution route; 409 for a channel not unknown is exit 1', async () => {
    replies = [
      {
        status: 409,
        body: { title: 'Channel is not unknown', status: 409, detail: 'the channel is accepted; unchanged' },
      },
    ];
    const result = await cli([
      'resolve',
      NOTICE_ID,
      'sms',
      '--outcome',
      'accepted',
      '--reason',
      'seen in provider console',
      '--evidence',
      'ticket OPS-7',
    ]);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: `/v1/notices/${NOTICE_ID}/channels/sms/resolution`,
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({
      outcome: 'accepted',
      reason: 'seen in provider console',
      evidence: 'ticket OPS-7',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Channel is not unknown (HTTP 409)');
  });

  it('cancel: says which channels were called off and which were already with the provider', async () => {
    replies = [
      {
        status: 200,
        body: {
          noticeId: NOTICE_ID,
          channels: [
            { channel: 'email', state: 'failed', cancelled: true },
            { channel: 'sms', state: 'sending', cancelled: false },
          ],
        },
      },
    ];
    const result = await cli(['cancel', NOTICE_ID, '--reason', 'appointment cancelled']);
    expect(result.code).toBe(0);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ reason: 'appointment cancelled' });
    expect(result.stdout).toMatch(/email\s+failed\s+yes/);
    expect(result.stdout).toMatch(/sms\s+sending\s+no \(already with the provider\)/);
  });

  it('suppress add|get|remove: the destination travels URL-encoded and is never printed', async () => {
    const bounce = {
      action: 'suppress',
      reason: 'hard_bounce',
      source: 'provider',
      actor: 'twilio',
      at: '2026-11-30T10:20:00.000Z',
      code: '30005',
    };
    const operator = {
      action: 'suppress',
      reason: 'patient_request',
      source: 'operator',
      actor: 'ops-7',
      at: '2026-11-30T10:29:00.000Z',
      code: null,
    };
    const entry = {
      channel: 'sms',
      destination: { fingerprint: 'fp_abc', masked: '+1******4567' },
      suppressed: true,
      latest: operator,
      history: [bounce, operator],
      historyTruncated: false,
    };
    replies = [{ status: 200, body: entry }, { status: 200, body: entry }, { status: 204 }];
    const outputs = [
      await cli([
        'suppress',
        'add',
        'sms',
        '+15551234567',
        '--reason',
        'patient_request',
        '--actor',
        'ops-7',
      ]),
      await cli(['suppress', 'get', 'sms', '+15551234567']),
      await cli(['suppress', 'remove', 'sms', '+15551234567', '--actor', 'ops-7']),
    ];
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'PUT /v1/suppressions/sms/%2B15551234567',
      'GET /v1/suppressions/sms/%2B15551234567',
      'DELETE /v1/suppressions/sms/%2B15551234567',
    ]);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ reason: 'patient_request', actor: 'ops-7' });
    expect(JSON.parse(seen[2]?.body ?? '')).toEqual({ actor: 'ops-7' });
    expect(outputs.map((o) => o.code)).toEqual([0, 0, 0]);
    expect(outputs[0]?.stdout).toMatch(/^already suppressed \(recorded again\)\n/);
    expect(outputs[1]?.stdout).toMatch(
      /^sms \+1\*{6}4567 \(fp_abc\): suppressed, since 2026-11-30 10:29:00Z \(1m 00s ago\) \(suppress patient_request by ops-7\)\n/,
    );
    expect(outputs[1]?.stdout).toMatch(
      /2026-11-30 10:20:00Z\s+suppress\s+hard_bounce\s+provider\s+twilio\s+30005/,
    );
    expect(outputs[1]?.stdout).toMatch(
      /2026-11-30 10:29:00Z\s+suppress\s+patient_request\s+operator\s+ops-7\n?/,
    );
    expect(outputs[2]?.stdout).toBe('lifted\n');
    for (const o of outputs) expect(o.stdout + o.stderr).not.toContain('15551234567');
  });

  it('health; an unreachable endpoint is exit 1 with the reason', async () => {
    replies = [{ status: 200, body: { status: 'ok' } }];
    expect(await cli(['health'])).toMatchObject({ code: 0, stdout: 'ok\n' });
    const down = await cli(['health', '--endpoint', 'http://127.0.0.1:9', '--timeout', '2000']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: GET http:\/\/127\.0\.0\.1:9\/v1\/health failed/);
  });

  it('events: an unreachable stack is exit 1 with the reason, as for the other commands', async () => {
    const down = await cli(['events', '--endpoint', 'http://127.0.0.1:9', '--timeout', '2000']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: GET http:\/\/127\.0\.0\.1:9\/console\/events\.json failed: /);
    replies = [{ status: 404, body: { status: 404 } }];
    const elsewhere = await cli(['events']);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/answered 404 \(a local stack serves the events\)/);
  });

  it('--actor names the actor on the local stack and is refused where SigV4 signs (exit 2, nothing sent)', async () => {
    replies = [{ status: 200, body: { noticeId: NOTICE_ID, channels: [] } }];
    const local = await cli(['cancel', NOTICE_ID, '--reason', 'x', '--actor', 'ops-7']);
    expect(local.code).toBe(0);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ reason: 'x', actor: 'ops-7' });
    const signed = await cli(
      [
        'resolve',
        NOTICE_ID,
        'sms',
        '--outcome',
        'accepted',
        '--reason',
        'seen',
        '--actor',
        'ops-7',
        '--sigv4',
      ],
      { env: { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' } },
    );
    expect(signed.code).toBe(2);
    expect(signed.stderr).toContain('--actor is for the local stack');
    expect(seen).toHaveLength(1);
  });

  it('--as (or NOTICE_LEDGER_CALLER) names the caller on the local stack in its header, and is refused where SigV4 signs', async () => {
    const caller = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-0a1b';
    replies = [
      { status: 200, body: timeline },
      { status: 200, body: timeline },
      { status: 200, body: timeline },
    ];
    const named = await cli(['get', NOTICE_ID, '--as', caller]);
    const fromEnv = await cli(['get', NOTICE_ID], { env: { NOTICE_LEDGER_CALLER: caller } });
    const none = await cli(['get', NOTICE_ID]);
    const signed = await cli(['get', NOTICE_ID, '--as', caller, '--sigv4'], {
      env: { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' },
    });

    expect([named.code, fromEnv.code, none.code]).toEqual([0, 0, 0]);
    expect(seen.map((s) => s.headers['x-notice-ledger-caller'])).toEqual([caller, caller, undefined]);
    expect(signed.code).toBe(2);
    expect(signed.stderr).toContain('--as (NOTICE_LEDGER_CALLER) is for the local stack');
    expect(seen).toHaveLength(3);
  });

  it('list --older-than with nothing that old says so, and how old the oldest match is', async () => {
    const young = {
      noticeId: NOTICE_ID,
      channel: 'sms',
      state: 'unknown',
      createdAt: '2026-11-30T10:29:47.000Z',
      deadline: '2026-12-01T10:00:00.000Z',
      attempts: 1,
      ageSeconds: 13,
      escalated: false,
    };
    replies = [
      { status: 200, body: { items: [], nextCursor: null } },
      { status: 200, body: { items: [young], nextCursor: null } },
    ];
    const result = await cli(['list', '--state', 'unknown', '--older-than', '10m']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('no unknown channel older than 10m (the oldest is 13 s old)');
    expect(result.stdout).not.toContain('nothing unresolved');
    // The second question keeps the other filters and drops only the age.
    expect(seen.map((s) => s.url)).toEqual([
      '/v1/notices?state=unknown&olderThan=PT10M',
      '/v1/notices?state=unknown&limit=1',
    ]);
  });

  it('list with nothing open at all: "nothing unresolved" only when no filter narrowed it', async () => {
    replies = [
      { status: 200, body: { items: [], nextCursor: null } },
      { status: 200, body: { items: [], nextCursor: null } },
    ];
    const aged = await cli(['list', '--channel', 'email', '--older-than', '1h']);
    expect(aged.stdout.trim()).toBe('no unresolved email channel older than 1h (none younger either)');
    replies = [{ status: 200, body: { items: [], nextCursor: null } }];
    expect((await cli(['list', '--state', 'sending'])).stdout.trim()).toBe('no sending channel');
    replies = [{ status: 200, body: { items: [], nextCursor: null } }];
    expect((await cli(['list'])).stdout.trim()).toBe('nothing unresolved');
    // --json prints the API's body and asks nothing more.
    seen.length = 0;
    replies = [{ status: 200, body: { items: [], nextCursor: null } }];
    const json = await cli(['list', '--older-than', '10m', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ items: [], nextCursor: null });
    expect(seen).toHaveLength(1);
  });

  it('list --state takes the unresolved states only (exit 2 before any request)', async () => {
    const result = await cli(['list', '--state', 'delivered']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--state must be one of reserved, sending, retry_scheduled, unknown');
    expect(seen).toHaveLength(0);
  });

  it('a gateway refusal that is not problem+json still reads as a problem', async () => {
    replies = [{ status: 403, body: { message: 'Forbidden' }, type: 'application/json' }];
    const result = await cli(['health']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Forbidden (HTTP 403)');
  });
});

describe('the notice-ledger command (bin/notice-ledger.mjs) as a process', () => {
  const ROOT = join(import.meta.dirname, '..', '..');

  /** Runs the shim with only `env` (no inherited AWS or vitest variables); never throws. */
  async function command(args: string[], env: Record<string, string>) {
    try {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'bin', 'notice-ledger.mjs'), ...args],
        { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, ...env } },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  it('a signed command whose credentials cannot be had: one error line, exit 1, no SDK Node-version warning', async () => {
    // A role profile makes the credential chain build an STS client (where the SDK warns about
    // Node < 22), and an STS endpoint that refuses connections makes signing fail.
    await writeFile(
      join(dir, 'aws-config'),
      '[profile ops]\nrole_arn = arn:aws:iam::123456789012:role/ops\nsource_profile = base\nregion = eu-west-1\n',
    );
    await writeFile(
      join(dir, 'aws-credentials'),
      '[base]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = secret\n',
    );
    const env = {
      AWS_CONFIG_FILE: join(dir, 'aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'aws-credentials'),
      AWS_ENDPOINT_URL_STS: 'http://127.0.0.1:1',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    const args = ['--endpoint', endpoint, '--sigv4', '--region', 'eu-west-1', '--profile', 'ops', 'health'];

    const result = await command(args, env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: cannot sign GET http:\/\/127\.0\.0\.1:\d+\/v1\/health: /);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stderr).not.toContain('NodeVersionSupportWarning');
    expect(seen).toEqual([]);

    // The control: the same run with the warning asked for shows it on this Node (< 22), so the
    // run above did build an SDK client and the shim is what keeps it quiet.
    const control = await command(args, {
      ...env,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false',
    });
    const sdkWarnsOnThisNode = Number(process.versions.node.split('.')[0]) < 22;
    expect(control.stderr.includes('NodeVersionSupportWarning')).toBe(sdkWarnsOnThisNode);
  }, 60_000);
});
