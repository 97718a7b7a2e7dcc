import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from '../process-utils.ts';
import { ensureDynamoDbLocal } from './fetch.ts';

export interface DynamoDbLocalOptions {
  /** Defaults to a free port. */
  port?: number;
  /** Persist tables here (created if missing). Mutually exclusive with `inMemory`. */
  dataDir?: string;
  /** Defaults to true unless `dataDir` is given. */
  inMemory?: boolean;
  /** How long to wait for the first successful ListTables; defaults to 30 s. */
  readyTimeoutMs?: number;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after 5 s. Idempotent. */
  stop(): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;
const ERROR_TAIL_CHARS = 4000;
const STOP_GRACE_MS = 5000;
const POLL_INTERVAL_MS = 100;
const AUTO_PORT_ATTEMPTS = 3;
// Jetty logs this and the JVM stays up, so the process never exits on its own.
const BIND_ERROR = /Failed to bind to|BindException|Address already in use/;

// One handler for every JVM this process started: a per-instance listener would trip Node's
// MaxListeners warning in test runs that start many instances.
const liveJvms = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackJvm(child: ChildProcess): void {
  liveJvms.add(child);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous; SIGKILL because nobody will wait for a graceful stop.
  process.on('exit', () => {
    for (const jvm of liveJvms) jvm.kill('SIGKILL');
  });
}

class PortInUseError extends Error {}

/** Keeps only the recent JVM output, so a chatty or long-lived JVM cannot grow memory. */
class OutputTail {
  private text = '';

  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > 2 * OUTPUT_LIMIT) this.text = this.text.slice(-OUTPUT_LIMIT);
  }

  /** Looks only at the end of the buffer, so each chunk costs O(chunk), not O(buffer). */
  recentMatch(pattern: RegExp, window: number): boolean {
    return pattern.test(this.text.slice(-window));
  }

  describe(): string {
    const tail = this.text.slice(-ERROR_TAIL_CHARS).trimEnd();
    return tail ? `\n--- DynamoDB Local output (tail) ---\n${tail}` : '\n(DynamoDB Local printed nothing)';
  }
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const { dataDir, readyTimeoutMs = 30_000 } = options;
  const inMemory = options.inMemory ?? dataDir === undefined;
  if (inMemory && dataDir !== undefined) {
    throw new Error('startDynamoDbLocal: pass either inMemory or dataDir, not both');
  }
  if (!inMemory && dataDir === undefined) {
    // Without either flag the JVM writes its database into the shared emulator cache folder.
    throw new Error('startDynamoDbLocal: inMemory: false needs a dataDir');
  }

  const emulatorDir = await ensureDynamoDbLocal();
  let storageArgs = ['-inMemory'];
  if (dataDir !== undefined) {
    const absDataDir = resolve(dataDir);
    await mkdir(absDataDir, { recursive: true });
    storageArgs = ['-dbPath', absDataDir];
  }

  // The timeout covers the JVM only; a first-time download is not counted against it.
  const deadline = Date.now() + readyTimeoutMs;
  if (options.port !== undefined) {
    await assertPortFree(options.port);
    return launch(emulatorDir, options.port, storageArgs, deadline, readyTimeoutMs);
  }
  // A picked port can be taken by someone else before the JVM binds it; just pick another.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await launch(emulatorDir, port, storageArgs, deadline, readyTimeoutMs);
    } catch (error) {
      if (!(error instanceof PortInUseError) || attempt >= AUTO_PORT_ATTEMPTS) throw error;
    }
  }
}

async function launch(
  emulatorDir: string,
  port: number,
  storageArgs: string[],
  deadline: number,
  readyTimeoutMs: number,
): Promise<DynamoDbLocal> {
  const endpoint = `http://127.0.0.1:${port}`;
  const output = new OutputTail();
  const child = spawn(
    'java',
    [
      // Serial GC and C1-only JIT cut start-up to ~2.4 s at similar throughput (local-emulators.md).
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Djava.library.path=./DynamoDBLocal_lib',
      '-jar',
      'DynamoDBLocal.jar',
      // Without -sharedDb tables are partitioned by access key and region.
      '-sharedDb',
      '-port',
      String(port),
      '-disableTelemetry',
      ...storageArgs,
    ],
    {
      cwd: emulatorDir,
      // -disableTelemetry alone still lets it attempt a DNS lookup at start-up.
      env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  trackJvm(child);

  let failure: Error | undefined;
  // Stops the readiness poll, including a request in flight to a server that never answers.
  const stopPolling = new AbortController();
  let rejectFailed: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    rejectFailed = reject;
  });
  // Failures after readiness (e.g. a later crash) have no one awaiting them.
  failed.catch(() => {});
  const fail = (error: Error): void => {
    if (failure) return;
    failure = error;
    stopPolling.abort();
    rejectFailed(error);
  };

  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    // Always drained, even after readiness: a full pipe would block the JVM.
    stream.on('data', (chunk: string) => {
      output.append(chunk);
      if (output.recentMatch(BIND_ERROR, chunk.length + 64)) {
        fail(new PortInUseError(`DynamoDB Local could not bind port ${port}: it is already in use.`));
      }
    });
  }
  child.on('error', (error: NodeJS.ErrnoException) => {
    fail(
      error.code === 'ENOENT'
        ? new Error(
            'DynamoDB Local needs Java, but `java` is not on PATH. Install Java 17 ' +
              '(e.g. `apt-get install -y --no-install-recommends openjdk-17-jre-headless`).',
          )
        : error,
    );
  });
  // 'close' rather than 'exit' so the output tail is complete when the message is built.
  child.on('close', (code, signal) => {
    liveJvms.delete(child);
    fail(
      new Error(
        `DynamoDB Local exited (${signal ?? `code ${code}`}) before it became ready on port ${port}.` +
          output.describe(),
      ),
    );
  });

  try {
    await Promise.race([waitUntilReady(endpoint, deadline, stopPolling.signal), failed]);
    // A bind error can land between the last poll and here; an answer then came from whoever
    // owns the port, not from our JVM.
    if (failure) throw failure;
  } catch (error) {
    await terminate(child);
    if (error instanceof PortInUseError) {
      throw new PortInUseError(`${error.message}${output.describe()}`);
    }
    if (error instanceof ReadyTimeoutError) {
      throw new Error(
        `DynamoDB Local did not answer ListTables at ${endpoint} within ${readyTimeoutMs} ms ` +
          `(last error: ${error.message}).${output.describe()}`,
      );
    }
    throw error;
  }

  const pid = child.pid;
  if (pid === undefined) throw new Error('DynamoDB Local started without a pid');
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    port,
    pid,
    stop() {
      stopping ??= terminate(child);
      return stopping;
    },
  };
}

class ReadyTimeoutError extends Error {}

async function waitUntilReady(endpoint: string, deadline: number, signal: AbortSignal): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    // A socket that accepts but never answers (someone else's server) must not stall the poll.
    // The SDK only logs a warning on requestTimeout unless told to throw.
    requestHandler: { connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true },
  });
  let lastError = 'no attempt made';
  try {
    while (!signal.aborted) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: signal });
        return;
      } catch (error) {
        lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      }
      if (Date.now() >= deadline) throw new ReadyTimeoutError(lastError);
      await sleep(POLL_INTERVAL_MS);
    }
  } finally {
    client.destroy();
  }
}

async function terminate(child: ChildProcess): Promise<void> {
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  if (child.pid === undefined || hasExited()) {
    liveJvms.delete(child);
    return;
  }
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  child.kill('SIGTERM');
  const graceful = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS, false)]);
  if (!graceful && !hasExited()) {
    child.kill('SIGKILL');
    await exited;
  }
  liveJvms.delete(child);
}

/**
 * DynamoDB Local binds every interface and does not exit when the port is taken, and the
 * readiness poll would happily get its answer from whatever already listens there (say, an
 * older DynamoDB Local), so an explicit port is checked up front.
 */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolveFree, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(`Cannot start DynamoDB Local: port ${port} is already in use.`)
          : error,
      );
    });
    // No host: the wildcard address, which conflicts with a listener on any interface, as the
    // JVM's own bind would.
    server.listen({ port, exclusive: true }, () => server.close(() => resolveFree()));
  });
}
