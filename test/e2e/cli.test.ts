/**
 * `notice-ledger` against the running local stack (`npm start`), in-process: the routes that
 * exist so far (send, get, get --html, suppress, health) and that no raw destination is printed.
 * The bin shim itself (`npx notice-ledger`) is run once, as a child process.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/cli.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, noticeBody, testRecipient, waitFor } from './support.ts';

let stack: StackProcess;
let dir: string;

beforeAll(async () => {
  stack = await startStackProcess();
  dir = await mkdtemp(join(tmpdir(), 'nl-cli-e2e-'));
});

afterAll(async () => {
  await stopAllStacks();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function cli(args: string[], stdin = '') {
  return runCliCaptured(args, { env: { NOTICE_LEDGER_ENDPOINT: stack.apiUrl }, cwd: dir, stdin });
}

describe('notice-ledger CLI against the local stack', () => {
  const recipient = testRecipient();
  const body = noticeBody({ eventId: `evt_cli_${randomBytes(6).toString('hex')}`, ...recipient });
  let noticeId: string;

  it('health', async () => {
    expect(await cli(['health'])).toMatchObject({ code: 0, stdout: 'ok\n' });
  });

  it('send <file>, then the same body from stdin is a replay', async () => {
    await writeFile(join(dir, 'notice.json'), JSON.stringify(body));
    const first = await cli(['send', 'notice.json', '--json']);
    expect(first.code).toBe(0);
    const recorded = JSON.parse(first.stdout);
    expect(recorded).toMatchObject({ created: true });
    noticeId = recorded.noticeId;
    const replay = await cli(['send', '-'], JSON.stringify(body));
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain(`already recorded (replay): ${noticeId} (HTTP 200)`);
  });

  it('get: the table and --json agree with the API, once both channels are sent', async () => {
    // Delivered is the last word both simulators give: the timeline stops changing there.
    await waitFor('both channels delivered', async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels.every((c) => c.state === 'delivered') ? timeline : undefined;
    });
    const json = await cli(['get', noticeId, '--json']);
    expect(JSON.parse(json.stdout)).toEqual(await getTimeline(stack.apiUrl, noticeId));
    const text = await cli(['get', noticeId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^email: delivered {2}to s\*+\w@simulator\.amazonses\.com/m);
    expect(text.stdout).toMatch(/^sms: delivered {2}to \+1\*+\d{4} /m);
    expect(text.stdout).toMatch(/reserved → sending\s+claimed\s+1/);
    expect(text.stdout).toContain('provider_accepted');
  });

  it('get --html writes the page of the same timeline', async () => {
    const result = await cli(['get', noticeId, '--html', 'page.html']);
    expect(result.code).toBe(0);
    const html = await readFile(join(dir, 'page.html'), 'utf8');
    expect(html).toContain('data-lane="email"');
    expect(html).toContain('data-lane="sms"');
    expect(html).toContain('data-reason="provider_accepted"');
    expect(html).not.toMatch(/https?:\/\/(?!notice-ledger\.dev)/);
  });

  it('suppress add | get | remove', async () => {
    const add = await cli([
      'suppress',
      'add',
      'sms',
      recipient.phone,
      '--reason',
      'patient_request',
      '--actor',
      'ops-7',
    ]);
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^added\n/);
    const get = await cli(['suppress', 'get', 'sms', recipient.phone, '--json']);
    expect(JSON.parse(get.stdout)).toMatchObject({
      channel: 'sms',
      suppressed: true,
      latest: { action: 'suppress', reason: 'patient_request', source: 'operator', actor: 'ops-7' },
    });
    expect(await cli(['suppress', 'remove', 'sms', recipient.phone])).toMatchObject({
      code: 0,
      stdout: 'lifted\n',
    });
    // The lift is a record of its own: the history keeps both.
    const after = await cli(['suppress', 'get', 'sms', recipient.phone]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/: not suppressed, since .* \(lift lifted_by_operator by /);
    expect(after.stdout).toMatch(/suppress\s+patient_request\s+operator\s+ops-7/);
    const again = await cli(['suppress', 'remove', 'sms', recipient.phone]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error: Not found (HTTP 404)');
    for (const output of [add, get, after, again]) {
      expect(output.stdout + output.stderr).not.toContain(recipient.phone.slice(1));
    }
  });

  it('a bad notice: exit 1 with the field errors, the submitted values not echoed', async () => {
    const result = await cli(
      ['send', '-'],
      JSON.stringify({ ...body, recipient: { id: 'pat_1', phone: 'call me' } }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Invalid request (HTTP 400)');
    expect(result.stderr).toContain('- recipient.email: is required for the email channel [required]');
    expect(result.stderr).not.toContain('call me');
  });

  it('npx notice-ledger runs the same CLI from the bin shim', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'notice-ledger', 'health'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, NOTICE_LEDGER_ENDPOINT: stack.apiUrl },
      timeout: 60_000,
    });
    expect(stdout).toBe('ok\n');
  });
});
