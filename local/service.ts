/**
 * The local stack is an ordered list of services (local/stack.ts). Each one starts, contributes
 * the environment later services and the functions read (an endpoint, credentials, queue URLs),
 * and stops; they stop in reverse order. A service the environment already provides (its
 * endpoint or base URL is set) is not started: it contributes nothing and is reported external.
 */

export interface StackContext {
  /** The configuration: `process.env`, where the functions read it. Services add to it. */
  readonly env: NodeJS.ProcessEnv;
  /** `LEDGER_DATA_DIR`, absolute: where everything that must survive a restart is kept. */
  readonly dataDir: string;
  readonly region: string;
  readonly log: (line: string) => void;
  readonly signal: AbortSignal | undefined;
}

export interface RunningService {
  /** True: the environment provides it; nothing was started. */
  readonly external?: boolean;
  /** Variables for later services and the functions; set into `env` before the next stage. */
  readonly env?: Readonly<Record<string, string>>;
  /** Where it listens (for the banner and the state file); absent for services without one. */
  readonly endpoint?: string;
  /** One banner line (without the name), e.g. `started (DynamoDB Local, data in …)`. */
  readonly describe?: string;
  /** Graceful, idempotent. */
  stop(): Promise<void>;
}

export interface LocalService {
  /** Key in the banner, the state file's `endpoints` and `started` maps. */
  readonly name: string;
  /** Its name in the banner, when not the stack's own (a provider's simulator names itself). */
  readonly label?: string;
  /** The endpoint the environment provides (then nothing is started), or undefined. */
  readonly external?: (env: NodeJS.ProcessEnv) => string | undefined;
  start(context: StackContext): Promise<RunningService>;
}

/** A service the environment provides: nothing to stop. */
export function externalService(endpoint: string | undefined): RunningService {
  return {
    external: true,
    ...(endpoint ? { endpoint } : {}),
    describe: 'external (from the environment)',
    stop: async () => undefined,
  };
}
