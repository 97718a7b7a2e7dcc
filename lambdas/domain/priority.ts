/**
 * A notice's priority, and the lane it waits in (docs/architecture.md §11). The lane is where a
 * reference waits and which share of the provider's rate it may take first; it is never part of
 * an intent's key (one intent per (notice, channel) whatever the lane).
 */
export const Priority = {
  critical: 'critical',
  standard: 'standard',
  bulk: 'bulk',
} as const;

export type Priority = (typeof Priority)[keyof typeof Priority];

/** Highest first: the order in which lanes take the shared rate. */
export const PRIORITIES: readonly Priority[] = [Priority.critical, Priority.standard, Priority.bulk];

/** What a notice gets when neither the request nor its template says. */
export const DEFAULT_PRIORITY: Priority = Priority.standard;

export function isPriority(value: unknown): value is Priority {
  return typeof value === 'string' && (PRIORITIES as readonly string[]).includes(value);
}

/** The priority of a row (rows written before priorities existed are `standard`). */
export function priorityOf(row: { readonly priority?: Priority | undefined }): Priority {
  return row.priority ?? DEFAULT_PRIORITY;
}

/** The lanes a reference of this priority waits behind: its own and every higher one. */
export function lanesAhead(priority: Priority): readonly Priority[] {
  return PRIORITIES.slice(0, PRIORITIES.indexOf(priority) + 1);
}

/**
 * The lane a provider call carrying these rows books in: the highest among them, so that a
 * critical row never waits in a lower lane because it shares a call (docs/architecture.md §4).
 */
export function highestPriority(rows: readonly { readonly priority?: Priority | undefined }[]): Priority {
  let best = PRIORITIES.length - 1;
  for (const row of rows) best = Math.min(best, PRIORITIES.indexOf(priorityOf(row)));
  return PRIORITIES[best] ?? DEFAULT_PRIORITY;
}
