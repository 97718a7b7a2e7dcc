/** The throttle-run figures of the issue, computed the same way for our dispatcher and the baseline. */
import type { SimulatedMessage, SimulatorCounters } from '../../local/sms-simulator/server.ts';
import { percentile, type QueueAgePoint, queueAgeSeries, round } from './stats.ts';

export interface ThrottleFigures {
  readonly notices: number;
  readonly providerRatePerSecond: number;
  /** First POST (or enqueue) → last provider acceptance recorded. */
  readonly drainSeconds: number;
  /** N / R. */
  readonly idealSeconds: number;
  readonly drainOverIdeal: number;
  /** Create calls the simulator received / notices it accepted at least once. */
  readonly providerCallsPerAccepted: number;
  /** Messages stored by the simulator beyond the first per destination. */
  readonly duplicates: number;
  /** Notices never accepted by the provider (or accepted in the ledger without a provider message). */
  readonly lost: number;
  readonly p50TriggerToAcceptedSeconds: number;
  readonly p99TriggerToAcceptedSeconds: number;
  /** Max over the run of the oldest unresolved notice's age (250 ms grid, from timestamps). */
  readonly maxQueueAgeSeconds: number;
  readonly providerCalls: number;
  readonly providerRateLimited: number;
  readonly accepted: number;
}

export interface FigureInput {
  readonly providerRatePerSecond: number;
  /** Per notice: when it was triggered (POST / enqueue), epoch ms. */
  readonly triggers: readonly number[];
  /** Per notice: when the dispatcher learned of the acceptance, epoch ms; undefined if never. */
  readonly acceptedAt: readonly (number | undefined)[];
  /** Per notice: its destination, to match the simulator's messages. */
  readonly phones: readonly string[];
  readonly messages: readonly SimulatedMessage[];
  readonly counters: SimulatorCounters;
  /** End of the observation (for notices never accepted). */
  readonly endedAt: number;
}

export function throttleFigures(input: FigureInput): { figures: ThrottleFigures; series: QueueAgePoint[] } {
  const n = input.triggers.length;
  const perPhone = new Map<string, number>();
  for (const m of input.messages) perPhone.set(m.to, (perPhone.get(m.to) ?? 0) + 1);
  let duplicates = 0;
  for (const count of perPhone.values()) duplicates += Math.max(0, count - 1);

  const resolved: number[] = [];
  const latencies: number[] = [];
  let delivered = 0;
  for (let i = 0; i < n; i++) {
    const at = input.acceptedAt[i];
    const sent = (perPhone.get(input.phones[i] as string) ?? 0) > 0;
    if (at !== undefined && sent) {
      delivered++;
      resolved.push(at);
      latencies.push((at - (input.triggers[i] as number)) / 1000);
    } else {
      resolved.push(Number.POSITIVE_INFINITY);
    }
  }
  const start = Math.min(...input.triggers);
  const lastAccepted = Math.max(...resolved.filter(Number.isFinite));
  const end = delivered === n ? lastAccepted : input.endedAt;
  const series = queueAgeSeries(input.triggers, resolved, start, end);
  const idealSeconds = n / input.providerRatePerSecond;
  const drainSeconds = (end - start) / 1000;
  const acceptedDistinct = perPhone.size;
  return {
    figures: {
      notices: n,
      providerRatePerSecond: input.providerRatePerSecond,
      drainSeconds: round(drainSeconds),
      idealSeconds: round(idealSeconds),
      drainOverIdeal: round(drainSeconds / idealSeconds, 3),
      providerCallsPerAccepted: round(input.counters.createCalls / Math.max(1, acceptedDistinct), 3),
      duplicates,
      lost: n - delivered,
      p50TriggerToAcceptedSeconds: round(percentile(latencies, 50)),
      p99TriggerToAcceptedSeconds: round(percentile(latencies, 99)),
      maxQueueAgeSeconds: round(Math.max(0, ...series.map((p) => p.oldestAgeSeconds))),
      providerCalls: input.counters.createCalls,
      providerRateLimited: input.counters.rateLimited,
      accepted: acceptedDistinct,
    },
    series,
  };
}
