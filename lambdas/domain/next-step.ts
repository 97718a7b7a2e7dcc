import { acceptedAt } from './follow-up.ts';
import type { Intent, TransitionRecord } from './intent.ts';
import { unknownSince } from './reconcile.ts';
import { escalates, Reason } from './state-machine.ts';
import { currentWait } from './waits.ts';

/*
 * What happens next to a row, derived from the row alone (and the clock): the one answer the
 * list (`GET /v1/notices`), the timeline, the CLI and the console show beside the row's last
 * reason (docs/operators.md "What happens next"). Clients print `describeNextStep`'s text; they
 * load no server code.
 */

/** The settings that say when the system's own next step is due (absent: the step has no time). */
export interface NextStepPolicy {
  /** `UNKNOWN_GRACE_MS`: when an undecided `unknown` is handed to the policy. */
  readonly unknownGraceMs?: number | undefined;
  /** `DELIVERY_REPORT_DEADLINE_MS`: how long after acceptance a final report is waited for. */
  readonly reportDeadlineMs?: number | undefined;
}

export type NextStep =
  /** Waiting for a worker (its queue message); failed at `deadline` if not sent by then. */
  | { readonly kind: 'send'; readonly deadline: number }
  /** A retry is scheduled at `at`, after a failed attempt's `reason`. */
  | { readonly kind: 'retry'; readonly at: number; readonly reason: string }
  /** Held for the channel's send window (./send-window.ts): sent when it opens at `opens`. */
  | { readonly kind: 'window'; readonly opens: number }
  /** The channel is held (a provider's "slow down", an operator hold) until `until`. */
  | { readonly kind: 'held'; readonly until: number; readonly provider: string; readonly reason: string }
  /** The provider's pre-send check is not answered: asked again with backoff until `deadline`. */
  | {
      readonly kind: 'check';
      readonly provider: string;
      readonly check: string;
      readonly code: string;
      readonly deadline: number;
    }
  /** An attempt is in flight: its answer, or at `leaseEnds` the outcome is in doubt. */
  | { readonly kind: 'outcome'; readonly leaseEnds: number }
  /** The outcome is unknown: the provider is asked; at `decidedAt` the policy decides. */
  | { readonly kind: 'lookup'; readonly decidedAt?: number | undefined }
  /** Escalated: a person is expected to act (`reason`: what was escalated). */
  | { readonly kind: 'operator'; readonly reason: string }
  /** Accepted: a final delivery report is waited for, until `until`. */
  | { readonly kind: 'report'; readonly until?: number | undefined }
  /** Nothing more: delivered, suppressed, failed without an escalation, or its follow-up ended. */
  | { readonly kind: 'none' };

/** The record that moved the row into its current state (a wait or a warning keeps it). */
function lastMove(row: Pick<Intent, 'transitions'>): TransitionRecord | undefined {
  return row.transitions.findLast((t) => t.from !== t.to);
}

/** What happens next to `row`, at `now`. */
export function nextStepOf(row: Intent, now: number, policy: NextStepPolicy = {}): NextStep {
  switch (row.state) {
    case 'delivered':
    case 'suppressed':
      return { kind: 'none' };
    case 'failed': {
      const failure = lastMove(row);
      return failure && escalates('failed', failure.reason)
        ? { kind: 'operator', reason: failure.reason }
        : { kind: 'none' };
    }
    case 'accepted': {
      const since = acceptedAt(row);
      const ended = row.transitions.some((t) => t.reason === Reason.deliveryUnconfirmed && t.at >= since);
      if (ended) return { kind: 'none' };
      return {
        kind: 'report',
        until: policy.reportDeadlineMs === undefined ? undefined : since + policy.reportDeadlineMs,
      };
    }
    case 'unknown':
      if (row.escalatedAt !== undefined) return { kind: 'operator', reason: Reason.unknownEscalated };
      return {
        kind: 'lookup',
        decidedAt:
          policy.unknownGraceMs === undefined ? undefined : unknownSince(row) + policy.unknownGraceMs,
      };
    case 'sending':
      return { kind: 'outcome', leaseEnds: row.leaseExpiresAt ?? now };
    case 'reserved':
    case 'retry_scheduled': {
      if (row.state === 'reserved' && row.notBefore !== undefined && row.notBefore > now) {
        return { kind: 'window', opens: row.notBefore };
      }
      const waiting = currentWait(row)?.wait;
      if (waiting?.kind === 'channel_held' && waiting.until > now) {
        return { kind: 'held', until: waiting.until, provider: waiting.provider, reason: waiting.reason };
      }
      if (waiting?.kind === 'provider_check_unavailable') {
        return { ...waiting, kind: 'check', deadline: row.deadline };
      }
      if (row.state === 'retry_scheduled' && row.nextAttemptAt !== undefined && row.nextAttemptAt > now) {
        return { kind: 'retry', at: row.nextAttemptAt, reason: lastMove(row)?.reason ?? row.state };
      }
      return { kind: 'send', deadline: row.deadline };
    }
  }
}

/** The time the step names (when it happens, or by when), if it names one. */
export function nextStepAt(step: NextStep): number | undefined {
  switch (step.kind) {
    case 'send':
    case 'check':
      return step.deadline;
    case 'retry':
      return step.at;
    case 'held':
      return step.until;
    case 'window':
      return step.opens;
    case 'outcome':
      return step.leaseEnds;
    case 'lookup':
      return step.decidedAt;
    case 'report':
      return step.until;
    default:
      return undefined;
  }
}

const iso = (at: number) => new Date(at).toISOString();

/** The step in one line of plain words (ids, codes and times only: never an address). */
export function describeNextStep(step: NextStep, state: Intent['state']): string {
  switch (step.kind) {
    case 'send':
      return `waiting to be sent; failed at its deadline ${iso(step.deadline)} if not sent by then`;
    case 'retry':
      return `retry at ${iso(step.at)} (after ${step.reason})`;
    case 'held':
      return `held until ${iso(step.until)}: ${step.provider} ${step.reason}`;
    case 'window':
      return `held for its send window: sent when it opens at ${iso(step.opens)}`;
    case 'check':
      return `waiting for ${step.provider}'s ${step.check} check (${step.code}): asked again with backoff until the deadline ${iso(step.deadline)}`;
    case 'outcome':
      return `attempt in flight; in doubt if no answer by ${iso(step.leaseEnds)}`;
    case 'lookup':
      return step.decidedAt === undefined
        ? 'outcome unknown: the provider is asked'
        : `outcome unknown: the provider is asked; the policy decides at ${iso(step.decidedAt)}`;
    case 'operator':
      return `escalated: an operator's call (${step.reason})`;
    case 'report':
      return step.until === undefined
        ? 'waiting for a delivery report'
        : `waiting for a delivery report until ${iso(step.until)}`;
    case 'none':
      return `nothing: ${state}`;
  }
}
