import type { Channel } from '../domain/channel.ts';
import {
  DEFAULT_PIPELINE_MS,
  estimateSendAt,
  isDeadlineAtRisk,
  planDeadlineRisk,
} from '../domain/deadline-risk.ts';
import type { Intent } from '../domain/intent.ts';
import { type Priority, priorityOf } from '../domain/priority.ts';
import type { BacklogProbe } from '../ports/backlog.port.ts';
import type { EscalationPublisher } from '../ports/escalation.port.ts';
import type { IntentTransitions } from '../ports/intent-ledger.port.ts';
import type { OpenIndex } from '../ports/open-index.port.ts';
import type { ThrottleGateStore } from '../ports/throttle-gate.port.ts';
import type { EscalationDependencies } from './dependencies.ts';
import { publishEscalation } from './escalate.ts';

/** What estimating a send needs (docs/architecture.md §11); absent: no estimates, no warnings. */
export interface DeadlineRiskDependencies {
  readonly backlog?: BacklogProbe | undefined;
  /** How far ahead of the budget's clock each lane takes its tokens (ms). */
  readonly laneLeadMs?: Readonly<Record<Priority, number>> | undefined;
  /**
   * Publishes a warning at once, from intake; absent, or when the publish fails, the marker
   * makes the reconciler's next run publish it.
   */
  readonly escalations?: EscalationPublisher | undefined;
}

/** A warned row just reserved: its escalation out at once when intake can publish. */
export async function publishWarning(
  row: Intent,
  deps: DeadlineRiskDependencies & Pick<EscalationDependencies, 'store' | 'clock' | 'timing'>,
): Promise<void> {
  if (!deps.escalations || !row.escalationPending) return;
  await publishEscalation(row, { ...deps, escalations: deps.escalations });
}

export interface IntakeEstimate {
  /** The row to reserve: warned (deadline_at_risk + escalation marker) when at risk. */
  readonly intent: Intent;
  readonly estimatedSendAt?: number;
  readonly atRisk: boolean;
}

/**
 * At intake: when will this channel be sent, and is its deadline at risk. A backlog that cannot
 * be read costs the estimate, never the notice.
 */
export async function estimateAtIntake(
  intent: Intent,
  deps: DeadlineRiskDependencies,
  now: number,
): Promise<IntakeEstimate> {
  // A row held for its send window (docs/architecture.md §12) is sent when the window opens:
  // that is its estimate, whatever the backlog is now.
  const held = intent.notBefore;
  const backlog =
    held === undefined ? await deps.backlog?.read(intent.channel).catch(() => undefined) : undefined;
  if (held === undefined && !backlog) return { intent, atRisk: false };
  const lane = priorityOf(intent);
  const estimatedSendAt =
    held ??
    estimateSendAt(backlog as NonNullable<typeof backlog>, lane, now, {
      leadMs: deps.laneLeadMs?.[lane] ?? 0,
      pipelineMs: DEFAULT_PIPELINE_MS,
    });
  if (!isDeadlineAtRisk(estimatedSendAt, intent.deadline)) return { intent, estimatedSendAt, atRisk: false };
  const plan = planDeadlineRisk(intent, { at: now, estimatedSendAt });
  return { intent: plan?.next ?? intent, estimatedSendAt, atRisk: true };
}

/**
 * What the reconciler's re-check reads and writes: due rows from the open index, the channel's
 * throttle gate, the row it warns, and the escalation it publishes.
 */
export type RiskCheckDependencies = DeadlineRiskDependencies &
  Pick<EscalationDependencies, 'store' | 'clock' | 'timing'> & {
    readonly store: IntentTransitions & Pick<OpenIndex, 'listDue'> & Pick<ThrottleGateStore, 'readGate'>;
  };

/** Rows looked at per channel per run, at most. */
const MAX_CANDIDATES = 1_000;

/**
 * At each reconciler run (docs/architecture.md §11): a row not warned at intake was estimated in
 * time then; it is at risk now when the channel cannot reach it before its deadline any more —
 * the budget is booked beyond it (a burst in the lanes ahead) or the provider holds the channel
 * past it (a 429's advice, an operator hold). Only rows due by then can be (every open row's due
 * time is capped at its deadline), so the open index's due query finds them; each is read,
 * warned in one conditional write and published. Returns how many were warned.
 */
export async function warnRowsAtRisk(
  deps: RiskCheckDependencies,
  channels: readonly Channel[],
): Promise<number> {
  if (!deps.backlog) return 0;
  const now = deps.clock.now();
  let warned = 0;
  for (const channel of channels) {
    const backlog = await deps.backlog.read(channel).catch(() => undefined);
    if (!backlog) continue;
    const holdUntil = (await deps.store.readGate(channel).catch(() => undefined)) ?? 0;
    const reachAt = (lane: Priority) =>
      Math.max(
        now + Math.max(0, (backlog.clockMs ?? now) - now - (deps.laneLeadMs?.[lane] ?? 0)),
        holdUntil,
      ) + DEFAULT_PIPELINE_MS;
    const horizon = reachAt('bulk');
    if (horizon <= now + DEFAULT_PIPELINE_MS) continue;
    let cursor: string | undefined;
    let seen = 0;
    do {
      const page = await deps.store.listDue(horizon, { limit: 200, ...(cursor ? { cursor } : {}) });
      cursor = page.cursor;
      seen += page.items.length;
      for (const ref of page.items) {
        if (ref.channel !== channel || ref.escalationPending || ref.deadline > horizon) continue;
        if (ref.state !== 'reserved' && ref.state !== 'retry_scheduled') continue;
        const row = await deps.store.get(ref.noticeId, ref.channel);
        if (!row) continue;
        const estimatedSendAt = reachAt(priorityOf(row));
        if (!isDeadlineAtRisk(estimatedSendAt, row.deadline)) continue;
        const plan = planDeadlineRisk(row, { at: now, estimatedSendAt });
        if (!plan) continue;
        const applied = await deps.store.apply(plan);
        if (applied.kind === 'stale') continue;
        warned++;
        await publishWarning(applied.intent, deps);
      }
    } while (cursor && seen < MAX_CANDIDATES);
  }
  return warned;
}
