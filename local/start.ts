/**
 * `npm start`: runs the local stack (local/stack.ts) until SIGINT or SIGTERM.
 *
 * First signal: graceful stop (HTTP, pollers and reconciler drain, then the services), exit 0.
 * Second signal: exit at once; DynamoDB Local is SIGKILLed by its module's exit hook.
 * SIGKILL of this process alone leaves the JVM running (nothing can catch SIGKILL); the JVM
 * shares this process group, so `kill -9 -<pgid>` (printed in the banner) takes everything down.
 */
import { type LocalStack, startLocalStack } from './stack.ts';

const controller = new AbortController();
let stack: LocalStack | undefined;

function stopAndExit(reason: string): void {
  process.stderr.write(`[local] ${reason}: stopping (send it again to exit at once)\n`);
  controller.abort();
  stack?.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `[local] stop failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}

/**
 * One Ctrl-C often arrives two or three times: the terminal signals the whole foreground
 * process group, and npm and tsx each forward what they received to their child. A repeat
 * within this window is treated as the same request.
 */
const SAME_SIGNAL_WINDOW_MS = 1_000;
let firstSignalAt = 0;

/** Configuration and environment problems read best as one line; anything else keeps its stack. */
function describeStartError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'Error' || error.name === 'ConfigError') return error.message;
  return error.stack ?? `${error.name}: ${error.message}`;
}

function onSignal(signal: NodeJS.Signals): void {
  if (firstSignalAt === 0) {
    firstSignalAt = Date.now();
    stopAndExit(signal);
    return;
  }
  if (Date.now() - firstSignalAt < SAME_SIGNAL_WINDOW_MS) return;
  process.stderr.write(`[local] ${signal} again: exiting now\n`);
  process.exit(1);
}

// `on`, not `once`: under tsx a signal with no listener left makes its preflight exit the
// process, which would skip our second-signal handling.
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

// The AWS SDK warns at its first client, once per process, that its 2027 releases need Node 22:
// on every start, above the banner. The README states the Node versions once; the deployed
// functions run Node 24 and never see this line (vitest.config.ts and the CLI's shim do the same).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

try {
  stack = await startLocalStack(process.env, { signal: controller.signal });
} catch (error) {
  if (controller.signal.aborted) process.exit(0);
  process.stderr.write(`[local] could not start: ${describeStartError(error)}\n`);
  process.exit(1);
}

if (controller.signal.aborted) {
  // A signal arrived between the last start-up check and here.
  await stack.stop();
  process.exit(0);
}
process.stdout.write(`${stack.banner.join('\n')}\n`);
