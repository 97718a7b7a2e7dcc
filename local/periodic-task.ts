import { setTimeout as sleep } from 'node:timers/promises';

export interface PeriodicTask {
  /** Cancels future runs and waits (at most `graceMs`) for a run in progress. */
  stop(graceMs: number): Promise<void>;
}

export interface PeriodicTaskOptions {
  readonly intervalMs: number;
  /** Delay before the first run. */
  readonly firstRunAfterMs: number;
  readonly run: () => Promise<void>;
  readonly onError: (error: unknown) => void;
}

/**
 * Plays an EventBridge Scheduler rate schedule for a local function, minus its one flaw for
 * this purpose: runs never overlap. The next run is due `intervalMs` after the previous one
 * started; a run that overshoots delays the next instead of stacking behind it.
 */
export function startPeriodicTask(options: PeriodicTaskOptions): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopped = false;

  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(tick, Math.max(0, delayMs));
  };

  function tick(): void {
    const startedAt = Date.now();
    current = options
      .run()
      .catch(options.onError)
      .finally(() => {
        current = undefined;
        schedule(options.intervalMs - (Date.now() - startedAt));
      });
  }

  schedule(options.firstRunAfterMs);
  return {
    async stop(graceMs) {
      stopped = true;
      clearTimeout(timer);
      if (current) await Promise.race([current, sleep(graceMs)]);
    },
  };
}
