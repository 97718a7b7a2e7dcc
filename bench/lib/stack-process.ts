/**
 * The local stack for the bench, as a child process (`node --import tsx local/start.ts`, what
 * `npm start` runs) or in this process (`startLocalStack`). The child is the default: the
 * stack's functions then have an event loop of their own, as Lambda functions would, instead of
 * sharing one with the bench's simulators, counting proxies and samplers, whose work would
 * otherwise show up as latency between a sender's pacing token and its provider call.
 *
 * The child is detached into its own process group and SIGTERMed on stop (SIGKILL to the group
 * after 20 s, and from an exit hook as a last resort). Its stdout (the functions' JSON logs and
 * EMF metrics, which CloudWatch Logs would ingest) is counted and dropped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY_LINE = 'notice-ledger local stack ready';

export interface StackHandle {
  readonly apiUrl: string;
  readonly tableName: string;
  readonly queues: Readonly<Record<'email' | 'sms', { readonly url: string }>>;
  /** The services it uses, by AWS service (a second stack on the same data shares them). */
  readonly endpoints: Readonly<Record<string, string>>;
  /** Bytes the functions wrote to stdout so far (JSON logs, EMF). */
  stdoutBytes(): number;
  /** The process the stack runs in (the child's, or this one's). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** Configuration of the bench's own environment that must not leak into the stack. */
const STACK_VARIABLES =
  /^(AWS_ENDPOINT_URL|TWILIO_|LEDGER_|PORT$|PUBLIC_BASE_URL$|EMAIL_|SMS_|SES_|FINGERPRINT_KEY|ENVELOPE_|PROVIDER_TIMEOUT_MS$|SEND_LEASE_MS$|RECONCILE_INTERVAL_MS$|UNKNOWN_GRACE_MS$|RETRY_|MAX_ATTEMPTS$|NOTICE_DEFAULT_DEADLINE_MS$|SCHEDULE|LOCAL_|CRASH_POINT|RATE_BUDGET_)/;

const live = new Set<ChildProcess>();
let exitHook = false;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export interface StackChildOptions {
  /** @default 120000 */
  readonly readyTimeoutMs?: number;
  /**
   * Each line of the functions' stdout (JSON logs, EMF) once the stack is ready, for a scenario
   * that counts what the stack logs (the `deferred` delivery steps); otherwise lines are not split.
   */
  readonly onStdoutLine?: (line: string) => void;
}

export async function startStackChild(
  env: Readonly<Record<string, string>>,
  log: (line: string) => void,
  options: StackChildOptions = {},
): Promise<StackHandle> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const onLine = options.onStdoutLine;
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const child of live) killGroup(child.pid, 'SIGKILL');
    });
  }
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!STACK_VARIABLES.test(name)) childEnv[name] = value;
  }
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: REPO_ROOT,
    env: childEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child);
      resolve();
    });
  });
  let bytes = 0;
  let tail = '';
  let ready = false;
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (!ready) {
      tail = (tail + chunk.toString('utf8')).slice(-16_384);
      if (tail.includes(READY_LINE)) ready = true;
    } else if (onLine) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    }
  });
  let errTail = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errTail = (errTail + chunk.toString('utf8')).slice(-8_192);
  });

  const deadline = Date.now() + readyTimeoutMs;
  while (!ready) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the local stack exited before it was ready:\n${errTail.slice(-3000)}`);
    }
    if (Date.now() > deadline) {
      killGroup(child.pid, 'SIGKILL');
      throw new Error(`the local stack was not ready within ${readyTimeoutMs} ms:\n${errTail.slice(-3000)}`);
    }
    await sleep(50);
  }
  const dataDir = env.LEDGER_DATA_DIR;
  if (!dataDir) throw new Error('LEDGER_DATA_DIR is required');
  const state = JSON.parse(await readFile(join(dataDir, 'local-stack.json'), 'utf8')) as {
    apiUrl: string;
    tableName: string;
    queues: Record<'email' | 'sms', { url: string }>;
    endpoints: Record<string, string>;
  };
  // From here on only the byte count matters.
  tail = '';
  let stopping: Promise<void> | undefined;
  // A stack that dies mid-scenario says why (else the bench only sees its sockets close).
  child.once('exit', (code, signal) => {
    if (!stopping)
      process.stderr.write(`the local stack exited (${code ?? signal}):\n${errTail.slice(-3000)}\n`);
  });
  return {
    apiUrl: state.apiUrl,
    tableName: state.tableName,
    queues: state.queues,
    endpoints: state.endpoints,
    stdoutBytes: () => bytes,
    pid: child.pid,
    stop() {
      stopping ??= (async () => {
        try {
          process.kill(child.pid as number, 'SIGTERM');
        } catch {
          return;
        }
        const graceful = await Promise.race([exited.then(() => true), sleep(20_000).then(() => false)]);
        if (!graceful) {
          log('the local stack did not stop within 20 s of SIGTERM; SIGKILL to its group');
          killGroup(child.pid, 'SIGKILL');
          await exited;
        }
        for (const line of errTail
          .split('\n')
          .filter((l) => /fail|threw|error/i.test(l))
          .slice(-5)) {
          log(`stack: ${line}`);
        }
      })();
      return stopping;
    },
  };
}

/** The same stack in this process: one per process (the runtime is cached per process). */
export async function startStackInProcess(
  env: Readonly<Record<string, string>>,
  stdoutBytes: () => number,
): Promise<StackHandle> {
  const { startLocalStack } = await import('../../local/stack.ts');
  const lines: string[] = [];
  const stack = await startLocalStack({ ...process.env, ...env }, { log: (line) => lines.push(line) });
  return {
    apiUrl: stack.apiUrl,
    tableName: stack.tableName,
    queues: stack.queues,
    endpoints: stack.endpoints,
    stdoutBytes,
    pid: process.pid,
    stop: () => stack.stop(),
  };
}
