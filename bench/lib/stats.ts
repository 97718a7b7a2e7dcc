/** Small, dependency-free statistics for the benchmark figures. */

/** Nearest-rank percentile (p in [0, 100]) of finite values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * finite.length));
  return finite[Math.min(finite.length, rank) - 1] as number;
}

export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export interface QueueAgePoint {
  /** Seconds since the start of the burst. */
  readonly t: number;
  /** Notices triggered and not yet accepted by the provider. */
  readonly unresolved: number;
  /** Age of the oldest of them, seconds (0 when none). */
  readonly oldestAgeSeconds: number;
}

/**
 * The "oldest unresolved" signal (docs/architecture.md §3) from per-notice timestamps, at a fixed step:
 * at time t a notice is unresolved when it was triggered at or before t and accepted after t
 * (never accepted = unresolved until the end). Computed after the run from the ledger's own
 * timestamps, so sampling adds no load to the system under test.
 */
export function queueAgeSeries(
  triggers: readonly number[],
  resolvedAt: readonly number[],
  start: number,
  end: number,
  stepMs = 250,
): QueueAgePoint[] {
  const order = triggers.map((_, i) => i).sort((a, b) => (triggers[a] as number) - (triggers[b] as number));
  const points: QueueAgePoint[] = [];
  for (let t = start; t <= end + stepMs; t += stepMs) {
    let unresolved = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const i of order) {
      const trigger = triggers[i] as number;
      if (trigger > t) break;
      const resolved = resolvedAt[i] ?? Number.POSITIVE_INFINITY;
      if (resolved > t) {
        unresolved++;
        if (trigger < oldest) oldest = trigger;
      }
    }
    points.push({
      t: round((t - start) / 1000, 3),
      unresolved,
      oldestAgeSeconds: unresolved === 0 ? 0 : round((t - oldest) / 1000, 3),
    });
  }
  return points;
}

/** Relative difference |a − b| / max(|a|, |b|); 0 when both are 0. */
export function relativeDifference(a: number, b: number): number {
  const scale = Math.max(Math.abs(a), Math.abs(b));
  return scale === 0 ? 0 : Math.abs(a - b) / scale;
}
