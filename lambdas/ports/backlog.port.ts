import type { Channel } from '../domain/channel.ts';
import type { Backlog } from '../domain/deadline-risk.ts';
import type { Priority } from '../domain/priority.ts';

/**
 * What intake knows of the backlog ahead of a new reference (docs/architecture.md §11,
 * "Deadline risk"): approximate, a second old at most, plus what this process enqueued since.
 */
export interface BacklogProbe {
  /** The channel's backlog; undefined when its rate is not known (no estimate, no risk). */
  read(channel: Channel): Promise<Backlog | undefined>;
  /** This process enqueued `count` references in `priority`'s lane: counted until the next reading. */
  enqueued(channel: Channel, priority: Priority, count: number): void;
}
