/**
 * Provider event ids already applied, per warm function instance: providers deliver
 * at least once (some several times per event, webhook relays on every retry and replay with
 * the same id), and the repeats are dropped here before they cost a ledger read. Only a first
 * line: applying a report is idempotent in the ledger itself (a repeated report finds the row
 * already moved, a repeated suppression fact is not recorded twice), which is what holds across
 * instances and cold starts.
 */
export class RecentEvents {
  readonly #seen = new Map<string, true>();
  constructor(private readonly capacity = 10_000) {}

  has(id: string): boolean {
    return this.#seen.has(id);
  }

  /** Remembers an id once its event is applied (never before: a failed apply must be retried). */
  remember(id: string): void {
    this.#seen.set(id, true);
    if (this.#seen.size > this.capacity) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
  }
}
