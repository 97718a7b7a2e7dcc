/**
 * Where a run's CPU goes, from Linux's /proc (undefined elsewhere): the CPU seconds of given
 * processes and of the whole machine over a window, so that a figure can say how much of the
 * machine the system under test had, and how much went to other work on it.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: /proc counts CPU time in these ticks (100 on every Linux the bench runs on). */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of a process so far, or undefined when it cannot be read. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12th and 13th after the name.
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The machine's busy and total CPU seconds so far, over all cores. */
export function machineCpuSeconds(): { readonly busy: number; readonly total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    // idle and iowait are the 4th and 5th.
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

export interface CpuShares {
  /** Wall seconds of the window. */
  readonly seconds: number;
  /** CPU seconds the machine had in the window (cores × seconds). */
  readonly capacity: number;
  /** CPU seconds of each named process in the window. */
  readonly processes: Readonly<Record<string, number>>;
  /** CPU seconds of everything else that ran on the machine in the window. */
  readonly others: number;
  /** CPU seconds left idle. */
  readonly idle: number;
}

/** Starts a window; `end()` gives the shares (undefined where /proc cannot be read). */
export function cpuWindow(pids: Readonly<Record<string, number | undefined>>): {
  end(): CpuShares | undefined;
} {
  const startedAt = Date.now();
  const machine = machineCpuSeconds();
  const start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processCpuSeconds(pid)]));
  return {
    end() {
      const after = machineCpuSeconds();
      if (!machine || !after) return undefined;
      const processes: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) {
        const from = start[name];
        const to = processCpuSeconds(pid);
        if (from !== undefined && to !== undefined) processes[name] = round1(to - from);
      }
      const busy = after.busy - machine.busy;
      const capacity = after.total - machine.total;
      const ours = Object.values(processes).reduce((sum, s) => sum + s, 0);
      return {
        seconds: round1((Date.now() - startedAt) / 1000),
        capacity: round1(capacity),
        processes,
        others: round1(Math.max(0, busy - ours)),
        idle: round1(capacity - busy),
      };
    },
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;
