/**
 * The stand-in's one fault: "lost schedule". The next `n` valid, non-conflicting CreateSchedule
 * calls answer 200 with an ARN but are forgotten, as if the schedule never made it.
 */
export class SchedulerFaults {
  #dropNext = 0;

  /** Replaces any pending count. */
  dropNextCreates(n: number): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError('dropNextCreates: n must be a whole number');
    this.#dropNext = n;
  }

  /** True (and one fewer pending) when this create is to be lost. */
  takeDrop(): boolean {
    if (this.#dropNext === 0) return false;
    this.#dropNext -= 1;
    return true;
  }

  view(): Record<string, unknown> {
    return { dropNextCreates: this.#dropNext };
  }
}
