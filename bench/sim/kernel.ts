import { seededRandom } from '../../local/seeded-random.ts';

/**
 * A discrete-event kernel with simulated time. Processes are ordinary async functions that
 * await `sleep(ms)`; the kernel pops the earliest event, sets `now`, resolves it, and lets every
 * promise continuation run (a macrotask boundary) before the next event, so code written for
 * real time (the SharedSendGate, which awaits its store and its sleep) runs unchanged.
 */
export class Simulation {
  now = 0;
  events = 0;
  private times: number[] = [];
  private seqs: number[] = [];
  private actions: (() => void)[] = [];
  private seq = 0;

  at(time: number, action: () => void): void {
    this.push(Math.max(time, this.now), this.seq++, action);
  }

  sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      this.at(this.now + Math.max(0, ms), resolve);
    });

  get pending(): number {
    return this.times.length;
  }

  /** Runs until `until` (simulated ms), no event is left, or `stop()` says so. */
  async run(until: number, stop: () => boolean = () => false): Promise<void> {
    const drain = () => new Promise<void>((resolve) => setImmediate(resolve));
    await drain();
    while (this.times.length > 0 && !stop()) {
      const time = this.times[0] as number;
      if (time > until) break;
      const action = this.pop();
      this.now = time;
      this.events++;
      action();
      await drain();
    }
  }

  // --- binary heap on (time, seq) ------------------------------------------------------------
  private less(i: number, j: number): boolean {
    const ti = this.times[i] as number;
    const tj = this.times[j] as number;
    return ti < tj || (ti === tj && (this.seqs[i] as number) < (this.seqs[j] as number));
  }

  private swap(i: number, j: number): void {
    [this.times[i], this.times[j]] = [this.times[j] as number, this.times[i] as number];
    [this.seqs[i], this.seqs[j]] = [this.seqs[j] as number, this.seqs[i] as number];
    [this.actions[i], this.actions[j]] = [this.actions[j] as () => void, this.actions[i] as () => void];
  }

  private push(time: number, seq: number, action: () => void): void {
    this.times.push(time);
    this.seqs.push(seq);
    this.actions.push(action);
    let i = this.times.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private pop(): () => void {
    const top = this.actions[0] as () => void;
    const last = this.times.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.seqs.pop();
    this.actions.pop();
    let i = 0;
    const n = this.times.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
}

export { seededRandom };

/** Exponentially distributed with the given mean. */
export function exponential(random: () => number, mean: number): number {
  return -Math.log(1 - random()) * mean;
}
