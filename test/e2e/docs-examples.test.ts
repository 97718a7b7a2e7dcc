/**
 * The examples a newcomer copies, run as written against `npm start` (a child process with the
 * defaults the docs assume): the README's first notice and its timeline, docs/operators.md's
 * resolution and cancel on the local stack (the SMS simulator's faults arrange what each needs),
 * and docs/api.md's suppression calls. A `# → 201 …` after a command is what the doc promises
 * it answers; that is what is checked (status, and the JSON shown, `…` standing for the rest).
 *
 * Where the doc says "a second later" or "ten seconds later", the test waits for the condition
 * instead: after a notice is posted, until none of its channels is `reserved`, `sending` or
 * `accepted` any more (the provider timeout of 10 s decides how long the `unknown` one takes).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/cli.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { getTimeline, waitFor } from './support.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** What the docs call the API (the default `npm start`). */
const DOC_API = 'http://127.0.0.1:3000';
const DOC_STACK_FILE = './.local/data/local-stack.json';

interface Expectation {
  readonly status: number;
  /** The JSON the doc shows, when it shows one. */
  readonly body?: string;
}

interface Step {
  readonly command: string;
  readonly expect?: Expectation;
}

/** The ```bash blocks of `file` (continuations joined) that `select` keeps, in order. */
function bashBlocks(file: string, select: (block: string) => boolean): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)]
    .map((m) => (m[1] as string).replace(/\\\n\s*/g, ' '))
    .filter(select);
}

/** `# → 201 {…}` (on its own line after a command, or at the end of the command's line). */
function expectation(comment: string): Expectation | undefined {
  const m = /→ (\d{3})(?: (\{.*\}))?/.exec(comment);
  return m ? { status: Number(m[1]), ...(m[2] ? { body: m[2] } : {}) } : undefined;
}

/**
 * Where a shell line's comment starts (-1: none), and whether a quote is still open at its end,
 * as the shell reads it: `#` after a blank and outside quotes starts a comment.
 */
function scan(text: string): { comment: number; open: boolean } {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      return { comment: i, open: false };
    }
  }
  return { comment: -1, open: quote !== undefined };
}

/** Commands of a block, each with the answer the doc promises for it. */
function stepsOf(block: string): Step[] {
  const steps: { command: string; expect?: Expectation }[] = [];
  // A quoted body may span lines (`-d '{` … `}'`): a command ends where its quotes close.
  let pending = '';
  for (const raw of block.split('\n')) {
    const text = pending === '' ? raw.trim() : `${pending}\n${raw}`;
    const { comment, open } = scan(text);
    if (open) {
      pending = text;
      continue;
    }
    pending = '';
    const command = (comment < 0 ? text : text.slice(0, comment)).trim();
    const promised = comment < 0 ? undefined : expectation(text.slice(comment));
    if (command === '') {
      // A comment line: what it promises belongs to the command before it.
      const last = steps.at(-1);
      if (promised && last && !last.expect) last.expect = promised;
      continue;
    }
    steps.push({ command, ...(promised ? { expect: promised } : {}) });
  }
  return steps;
}

/**
 * Problems of `actual` against what a doc shows: every key shown has the value shown, an array
 * shown is a prefix of the actual one, `"ntc_…"` is a prefix, `…` in place of members is the rest.
 */
function differences(actual: unknown, shown: unknown, path = ''): string[] {
  if (typeof shown === 'string' && shown.endsWith('…')) {
    return typeof actual === 'string' && actual.startsWith(shown.slice(0, -1))
      ? []
      : [`${path}: ${JSON.stringify(actual)} does not start with ${shown.slice(0, -1)}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: not an array`];
    return shown.flatMap((item, i) => differences(actual[i], item, `${path}[${i}]`));
  }
  if (typeof shown === 'object' && shown !== null) {
    if (typeof actual !== 'object' || actual === null) return [`${path}: not an object`];
    return Object.entries(shown).flatMap(([key, value]) =>
      differences((actual as Record<string, unknown>)[key], value, `${path}.${key}`),
    );
  }
  return Object.is(actual, shown)
    ? []
    : [`${path}: ${JSON.stringify(actual)}, the doc shows ${JSON.stringify(shown)}`];
}

/** The doc's abbreviated JSON as a value: `,…` (the rest of a list or object) dropped. */
function shownJson(text: string): unknown {
  return JSON.parse(text.replace(/,\s*…/g, ''));
}

let stack: StackProcess;
let dir: string;

beforeAll(async () => {
  stack = await startStackProcess();
  dir = await mkdtemp(join(tmpdir(), 'nl-docs-examples-'));
}, 120_000);

afterAll(async () => {
  await stopAllStacks();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the steps of a shell session as the doc's reader would, with `vars` set by earlier ones. */
async function run(
  steps: readonly Step[],
  vars: Map<string, string>,
): Promise<{ step: Step; body: unknown }[]> {
  const done: { step: Step; body: unknown }[] = [];
  for (const step of steps) {
    const expand = (text: string) =>
      text
        .replaceAll(DOC_API, stack.apiUrl)
        .replace(/\$(\w+)/g, (whole, name: string) => vars.get(name) ?? whole);

    const assignment = /^(\w+)=\$\(node -p '(.*)'\)$/.exec(step.command);
    if (assignment) {
      const [, name, expression] = assignment as unknown as [string, string, string];
      expect(expression, 'the stack file the doc reads').toContain(DOC_STACK_FILE);
      const field = /\.endpoints\.(\w+)$/.exec(expression)?.[1] as string;
      const state = JSON.parse(readFileSync(join(stack.dataDir, 'local-stack.json'), 'utf8'));
      vars.set(name, state.endpoints[field]);
      continue;
    }

    if (step.command.startsWith('npx notice-ledger ')) {
      const args = step.command.slice('npx notice-ledger '.length).split(/\s+/);
      const result = await runCliCaptured(args, { env: { NOTICE_LEDGER_ENDPOINT: stack.apiUrl }, cwd: dir });
      expect(result.code, `${step.command}\n${result.stderr}`).toBe(0);
      done.push({ step, body: result.stdout });
      continue;
    }

    expect(step.command, 'a command the test knows').toMatch(/^curl -s /);
    const method = /-X (\w+)/.exec(step.command)?.[1] ?? 'GET';
    const target = /(?:"\$\w+[^"\s]*"|https?:\/\/\S+)/.exec(step.command)?.[0];
    expect(target, `the URL of ${step.command}`).toBeDefined();
    const url = expand((target ?? '').replaceAll('"', ''));
    const data = /-d '([\s\S]*)'$/.exec(step.command)?.[1];
    const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = data?.replace(/'"\$\([^)]*\)"'/g, inAWeek);
    const response = await fetch(url, {
      method,
      ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
    });
    const text = await response.text();
    const answer = text === '' ? null : JSON.parse(text);
    if (step.expect) {
      expect(response.status, `${step.command}\n${text}`).toBe(step.expect.status);
      if (step.expect.body !== undefined)
        expect(differences(answer, shownJson(step.expect.body)), step.command).toEqual([]);
    } else {
      expect(response.ok, `${step.command}\n${text}`).toBe(true);
    }
    done.push({ step, body: answer });

    // "A second later" / "ten seconds later": until the notice's channels have settled.
    if (method === 'POST' && /\/v1\/notices$/.test(url) && response.status === 202) {
      const { noticeId } = answer as { noticeId: string };
      await waitFor(
        `${noticeId} settled`,
        async () => {
          const timeline = await getTimeline(stack.apiUrl, noticeId);
          const busy = timeline.channels.some((c) => ['reserved', 'sending', 'accepted'].includes(c.state));
          return busy ? undefined : timeline;
        },
        { timeoutMs: 45_000, intervalMs: 200 },
      );
    }
  }
  return done;
}

describe('the examples of the README and the docs, as written', () => {
  it('README: the first notice is recorded as shown, and its timeline reads as shown', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const [send, read] = bashBlocks('README.md', (b) => b.includes(`${DOC_API}/v1/notices`));
    const sendSteps = stepsOf(send as string);
    // The answer the README shows in the json block after the command.
    const shown = /```bash\ncurl -s -X POST[\s\S]*?```\n\n```json\n([\s\S]*?)```/.exec(readme)?.[1] as string;
    const last = sendSteps.at(-1) as Step;
    const vars = new Map<string, string>();
    await run([{ ...last, expect: { status: 202, body: shown } }], vars);

    const [, cli] = await run(stepsOf(read as string), vars);
    // The CLI's output shown under it: each channel's state line.
    const output = /```\nnotice (ntc_\w+)\n([\s\S]*?)```/.exec(readme)?.[2] as string;
    const states = [...output.matchAll(/^(email|sms): (\w+)/gm)].map((m) => `${m[1]}: ${m[2]}`);
    expect(states).toEqual(['email: delivered', 'sms: delivered']);
    for (const state of states) expect(cli?.body).toContain(state);
  }, 120_000);

  it('operators.md: the resolution of an unknown SMS and the cancel of a waiting one answer as shown', async () => {
    const sessions = bashBlocks('docs/operators.md', (b) => b.includes('$SIM'));
    expect(sessions).toHaveLength(2);
    const vars = new Map<string, string>();
    const resolution = await run(stepsOf(sessions[0] as string), vars);
    const listed = resolution.find((r) => r.step.command.includes('list --state unknown'));
    expect(listed?.body).toMatch(/ntc_pm7o46ikyz23ygnw7o77we6gvg\s+sms\s+unknown/);
    const resolved = resolution.find((r) => r.step.command.includes('/resolution'));
    expect(JSON.stringify(resolved?.body)).toContain('"reason":"operator_confirmed_accepted"');
    expect(resolved?.step.expect?.status).toBe(200);

    const cancel = await run(stepsOf(sessions[1] as string), vars);
    const shownWaiting = cancel.find((r) => r.step.command.startsWith('npx notice-ledger get'));
    expect(shownWaiting?.body).toMatch(/sms: retry_scheduled/);
    expect(cancel.find((r) => r.step.command.includes('/cancel'))?.step.expect).toEqual({
      status: 200,
      body: '{"noticeId":"ntc_gcrojebec45hk5b5txypn5adqc","channels":[{"channel":"sms","state":"failed","cancelled":true}]}',
    });
  }, 180_000);

  it('api.md: a suppression added, lifted and read answers as shown', async () => {
    const [session] = bashBlocks('docs/api.md', (b) => b.includes('/v1/suppressions/'));
    const steps = stepsOf(session as string);
    expect(steps.map((s) => s.expect?.status)).toEqual([201, 204, 200]);
    const [, , read] = await run(steps, new Map());
    expect(read?.body).toMatchObject({
      suppressed: false,
      history: [{ action: 'suppress' }, { action: 'lift' }],
    });
  }, 60_000);
});
