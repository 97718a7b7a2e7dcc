/**
 * Runs `local/start.ts` (what `npm start` runs) as a child process for black-box tests.
 *
 * The child is spawned as `node --import tsx local/start.ts`, detached into its own process
 * group. Not through `npx tsx`: npm forwards signals to its child, and tsx's parent process
 * relays them again and SIGKILLs a child that does not acknowledge within 30 ms, so a test's
 * SIGTERM could arrive twice or end in a SIGKILL on a busy machine. One process is what a
 * process manager would signal; DynamoDB Local, when the stack starts it, is that process's
 * child in the same group, so `kill9()` (SIGKILL to the group) takes everything down.
 *
 * Every stack and temporary directory made here is tracked: call `stopAllStacks()` in
 * `afterAll`; a process `exit` hook SIGKILLs any group still alive as a last resort.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { freePort } from '../../local/process-utils.ts';
import { uniqueTableName } from './dynamodb.ts';
import { requireIntegrationTier } from './tier.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const READY_LINE = 'notice-ledger local stack ready';
const OUTPUT_LIMIT = 512 * 1024;

/** What local/stack.ts writes to `$LEDGER_DATA_DIR/local-stack.json` once it is ready. */
export interface StackState {
  readonly pid: number;
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly tableName: string;
  /** The key table (docs/archive.md "Key records"). */
  readonly keyTableName: string;
  /** The archive's bucket at `endpoints.s3` (docs/archive.md). */
  readonly archiveBucket: string;
  readonly endpoints: {
    dynamodb: string;
    sqs: string;
    s3: string;
    sesv2: string;
    twilio: string;
    scheduler?: string;
  };
  readonly started: { dynamodb: boolean; sqs: boolean; s3: boolean; sesv2: boolean; twilio: boolean };
  readonly queues: Record<'email' | 'sms', { name: string; url: string; arn: string; dlqUrl: string }>;
  readonly jvmPid?: number;
}

export interface StackProcessOptions {
  /**
   * `shared` (default): the test run's DynamoDB Local with a table of its own;
   * `own`: the stack starts DynamoDB Local under its data dir (needed to test persistence
   * across restarts and that a group kill takes the JVM down).
   */
  readonly dynamodb?: 'shared' | 'own';
  /** Reuse one to restart on the same data; default: a fresh temporary directory. */
  readonly dataDir?: string;
  /** Default: a free port. */
  readonly port?: number;
  /** With `shared`, default: a unique name. */
  readonly tableName?: string;
  /** Extra configuration (docs/architecture.md §6 names). */
  readonly env?: Readonly<Record<string, string>>;
  /** @default 90_000 */
  readonly readyTimeoutMs?: number;
}

export interface ExitResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** From the signal to the exit. */
  readonly ms: number;
}

export interface StackProcess {
  readonly pid: number;
  readonly port: number;
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly tableName: string | undefined;
  readonly state: StackState;
  /** The configuration it was started with, to restart it the same way. */
  readonly options: StackProcessOptions & { dataDir: string; port: number };
  /** Everything it printed so far (stdout and stderr interleaved, the last 512 KiB). */
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` to the stack process only and waits for it to exit (rejects after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitResult>;
  /** SIGKILL to the whole process group; resolves once no process of the group is left. */
  kill9(): Promise<void>;
}

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) killGroup(child.pid, 'SIGKILL');
  });
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded) until no process of the group is left, e.g. DynamoDB Local after its parent. */
export async function waitForGroupGone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!groupAlive(pid)) return true;
    await sleep(50);
  }
  return !groupAlive(pid);
}

export async function makeDataDir(prefix = 'notice-ledger-e2e-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export { freePort };

/** Configuration the test runner's own environment must not leak into the stack. */
const STACK_VARIABLES =
  /^(AWS_ENDPOINT_URL|TWILIO_|LEDGER_|PORT$|PUBLIC_BASE_URL$|EMAIL_|SMS_|SES_|FINGERPRINT_KEY|ENVELOPE_|PROVIDER_TIMEOUT_MS$|SEND_LEASE_MS$|RECONCILE_INTERVAL_MS$|UNKNOWN_GRACE_MS$|RETRY_|MAX_ATTEMPTS$|NOTICE_DEFAULT_DEADLINE_MS$|SCHEDULE|LOCAL_|UNKNOWN_POLICY$|CRASH_POINT|OPEN_INDEX_SHARDS$|ESCALATION_|RATE_BUDGET_|OUTCOME_|ARCHIVE_|HOT_RETENTION$)/;

export async function startStackProcess(options: StackProcessOptions = {}): Promise<StackProcess> {
  requireIntegrationTier('A child stack');
  installExitHook();
  const mode = options.dynamodb ?? 'shared';
  const dataDir = options.dataDir ?? (await makeDataDir());
  const port = options.port ?? (await freePort());
  const tableName = options.tableName ?? (mode === 'shared' ? uniqueTableName('e2e') : undefined);

  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!STACK_VARIABLES.test(name)) env[name] = value;
  }
  Object.assign(env, {
    PORT: String(port),
    LEDGER_DATA_DIR: dataDir,
    ...(mode === 'shared' ? { AWS_ENDPOINT_URL_DYNAMODB: inject('ddbEndpoint') } : {}),
    ...(tableName ? { LEDGER_TABLE_NAME: tableName } : {}),
    ...options.env,
  });

  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn the local stack');
  live.add(child);

  let text = '';
  const append = (chunk: string) => {
    text += chunk;
    if (text.length > 2 * OUTPUT_LIMIT) text = text.slice(-OUTPUT_LIMIT);
  };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  // Kept apart from the output, which a long run truncates from the front (the banner first).
  const iam = { ready: false, enforced: false, denials: [] as string[] };
  iamRecords.push(iam);
  child.stdout.on('data', iamLines(iam));
  child.stderr.on('data', iamLines(iam));

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });

  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const describe = () => `\n--- local stack output (tail) ---\n${text.slice(-6000)}`;
  try {
    const ready = await Promise.race([
      (async () => {
        const deadline = Date.now() + readyTimeoutMs;
        while (Date.now() < deadline) {
          if (text.includes(READY_LINE)) return true;
          await sleep(50);
        }
        return false;
      })(),
      exited.then(({ code, signal }) => {
        throw new Error(
          `the local stack exited (${signal ?? `code ${code}`}) before it was ready${describe()}`,
        );
      }),
    ]);
    if (!ready) throw new Error(`the local stack was not ready within ${readyTimeoutMs} ms${describe()}`);
  } catch (error) {
    killGroup(pid, 'SIGKILL');
    await waitForGroupGone(pid);
    throw error;
  }

  const state = JSON.parse(await readFile(join(dataDir, 'local-stack.json'), 'utf8')) as StackState;

  return {
    pid,
    port,
    apiUrl: state.apiUrl,
    dataDir,
    tableName,
    state,
    options: { ...options, dataDir, port },
    output: () => text,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      const sentAt = Date.now();
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone; `exited` has (or will have) the answer.
      }
      const result = await Promise.race([exited, sleep(timeoutMs).then(() => undefined)]);
      if (result === undefined) {
        killGroup(pid, 'SIGKILL');
        throw new Error(`the local stack did not exit within ${timeoutMs} ms of ${signal}${describe()}`);
      }
      return { ...result, ms: Date.now() - sentAt };
    },
    async kill9() {
      killGroup(pid, 'SIGKILL');
      await exited;
      if (!(await waitForGroupGone(pid))) throw new Error(`process group ${pid} survived SIGKILL`);
    },
  };
}

interface IamRecord {
  ready: boolean;
  enforced: boolean;
  denials: string[];
}

const iamRecords: IamRecord[] = [];

/** Watches one stream for the ready line, local IAM's banner line and its denials (whole lines only). */
function iamLines(iam: IamRecord): (chunk: string) => void {
  let partial = '';
  return (chunk) => {
    const lines = `${partial}${chunk}`.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === READY_LINE) iam.ready = true;
      if (/^ {2}IAM +enforced: /.test(line)) iam.enforced = true;
      if (line.startsWith('[local] IAM: ')) iam.denials.push(line);
    }
  };
}

/**
 * Local IAM (local/iam/) over every stack this test file started: how many became ready, how many
 * of those announced enforcement in their banner, and every call one refused (`[local] IAM: …`).
 */
export function localIamReport(): { ready: number; enforced: number; denials: string[] } {
  const ready = iamRecords.filter((r) => r.ready);
  return {
    ready: ready.length,
    enforced: ready.filter((r) => r.enforced).length,
    denials: iamRecords.flatMap((r) => r.denials),
  };
}

/** SIGTERM every stack still running (SIGKILL to its group after 15 s), then remove temp dirs. */
export async function stopAllStacks(): Promise<void> {
  await Promise.all(
    [...live].map(async (child) => {
      const pid = child.pid;
      if (pid === undefined) return;
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone already.
      }
      const graceful = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
      if (!graceful) killGroup(pid, 'SIGKILL');
      await exited;
      // Its DynamoDB Local, if any, must not outlive it either.
      if (!(await waitForGroupGone(pid, 5_000))) killGroup(pid, 'SIGKILL');
    }),
  );
  await Promise.all([...tempDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  tempDirs.clear();
}
