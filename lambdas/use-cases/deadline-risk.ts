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
  const backlog = await deps.backlog?.read(intent.channel).catch(() => undefined);
  if (!backlog) return { intent, atRisk: false };
  const lane = priorityOf(intent);
  const estimatedSendAt = estimateSendAt(backlog, lane, now, {
    leadMs: deps.laneLeadMs?.[lane] ?? 0,
    pipelineMs: DEFAULT_PIPELINE_MS,
  });
  if (!isDeadlineAtRisk(estimatedSendAt, intent.deadline)) return { intent, estimatedSendAt, atRisk: false };
  const plan = planDeadlineRisk(intent, { at: now, estimatedSendAt });
  return { intent: plan?.next ?? intent, estimatedSendAt, atRisk: true };
}
