import type { Channel } from './channel.ts';
import {
  createIntent,
  dueWithFallback,
  type FallbackSpec,
  type Intent,
  type LedgerTiming,
  nextDueAt,
} from './intent.ts';
import { applySendWindow, decideSendWindow, type SendWindows } from './send-window.ts';
import { isUnresolved, Reason } from './state-machine.ts';
import { nextRecord, planSameState, type TransitionPlan } from './transition.ts';

/*
 * Channel fallback per notice (docs/architecture.md §12 "Delivery policies"): when the first
 * channel (`from`) ends `failed` or `suppressed`, or is not `delivered` within `within` of intake,
 * the second (`to`) is reserved with reason `fallback`. The `from` row carries what the fallback
 * will reserve (fixed at intake, sealed like any destination) and, while it is pending, the time
 * it is due; exactly one `to` row can ever exist, because reserving it is the ledger's conditional
 * put on (noticeId, to). Both rows carry the evidence: the first channel's state and reason at the
 * moment it fired.
 */

/** What the request (or the template's default) asks for: `within` in ms. */
export interface FallbackRequest {
  readonly from: Channel;
  readonly to: Channel;
  readonly withinMs: number;
}

/** `within` bounds: a minute (a provider's first report takes seconds) to a week. */
export const FALLBACK_WITHIN_MIN_MS = 60_000;
export const FALLBACK_WITHIN_MAX_MS = 7 * 86_400_000;

import { formatDuration } from '../contract/duration.ts';

export { formatDuration, parseIsoDuration } from '../contract/duration.ts';
export type { FallbackSpec };

/** What goes into the `from` row's content digest: a replay must ask for the same fallback. */
export function fallbackDigestPart(spec: Pick<FallbackSpec, 'to' | 'withinMs' | 'destination'>): string {
  return `${spec.to}|${spec.withinMs}|${spec.destination.fingerprint}`;
}

export type FallbackDecision =
  | { readonly kind: 'none' }
  /** Pending, not owed yet: the first channel may still be delivered (or is mid-attempt). */
  | { readonly kind: 'not_yet' }
  | { readonly kind: 'fire'; readonly evidence: string };

/**
 * Whether the fallback is owed now: the first channel ended `failed` or `suppressed`, or its
 * `within` has passed without `delivered`. Never while an attempt is in flight (`sending`): the
 * evidence is recorded on the first row, and writing it under a live lease would refuse the
 * sender's outcome write; the lease bounds that wait.
 */
export function decideFallback(row: Intent, now: number): FallbackDecision {
  if (!row.fallback || row.fallbackDueAt === undefined) return { kind: 'none' };
  const last = row.transitions.findLast((t) => t.from !== t.to) ?? row.transitions[0];
  const reason = last?.reason ?? Reason.intake;
  if (row.state === 'failed' || row.state === 'suppressed') {
    return { kind: 'fire', evidence: `${row.channel} ${row.state}: ${reason}` };
  }
  if (row.state === 'delivered' || row.state === 'sending' || now < row.fallbackDueAt)
    return { kind: 'not_yet' };
  return {
    kind: 'fire',
    evidence: `${row.channel} ${row.state}: ${reason}; not delivered within ${formatDuration(row.fallback.withinMs)}`,
  };
}

/** When the row entered its current state (its last move), for its own next due time. */
function lastMoveAt(row: Intent): number {
  return row.transitions.findLast((t) => t.from !== t.to)?.at ?? row.createdAt;
}

/**
 * The fallback, fired: the `to` row to reserve (reason `fallback`, the evidence in its intake
 * record, the notice's deadline, lane, template and submitter) and the `from` row's record of it
 * (`state → state`, reason `fallback`), which ends the pending fallback: due time and sealed
 * envelope go, and the row is due again when its own next step is.
 */
export function planFallback(
  row: Intent,
  evidence: string,
  now: number,
  timing: LedgerTiming,
  options: {
    /** The caller enqueues the reserved row itself: it is due a lease later, as intake's rows are. */
    readonly enqueued?: boolean;
    /** The `to` channel's send window applies to the row it reserves, in the recipient's zone. */
    readonly windows?: SendWindows | undefined;
  } = {},
): { readonly reserve: Intent; readonly record: TransitionPlan } | undefined {
  const spec = row.fallback;
  if (!spec || row.fallbackDueAt === undefined || row.fallbackEnvelope === undefined) return undefined;
  const reserved = createIntent(
    {
      noticeId: row.noticeId,
      channel: spec.to,
      eventId: row.eventId,
      eventType: row.eventType,
      recipientId: row.recipientId,
      templateId: row.templateId,
      templateVersion: row.templateVersion,
      contentDigest: spec.contentDigest,
      variableDigests: row.variableDigests,
      destination: spec.destination,
      createdAt: now,
      deadline: row.deadline,
      sms: spec.sms,
      priority: row.priority,
      submitter: row.submitter,
      envelope: row.fallbackEnvelope,
    },
    timing,
    { reason: Reason.fallback, detail: evidence },
  );
  // Due at once unless the caller enqueues it: the reconciler then sends its message (./reconcile.ts).
  // A shut send window holds it like any notice of its priority (./send-window.ts).
  const windows = options.windows;
  const reserve = applySendWindow(
    options.enqueued ? reserved : { ...reserved, dueAt: now },
    windows
      ? decideSendWindow({
          now,
          window: windows[spec.to],
          zone: spec.timeZone ?? windows.defaultZone,
          priority: row.priority,
        })
      : { kind: 'open' },
    now,
  );
  const record = nextRecord(row, row.state, {
    at: now,
    reason: Reason.fallback,
    detail: `${spec.to} reserved; ${evidence}`,
  });
  const ownDue = row.escalationPending
    ? row.dueAt
    : nextDueAt(
        row.state,
        {
          enteredAt: lastMoveAt(row),
          deadline: row.deadline,
          leaseExpiresAt: row.leaseExpiresAt,
          nextAttemptAt: row.nextAttemptAt,
          notBefore: row.notBefore,
        },
        timing,
      );
  return {
    reserve,
    record: planSameState(row, record, {
      fallbackDueAt: undefined,
      fallbackEnvelope: undefined,
      dueAt:
        isUnresolved(row.state) || row.state === 'accepted' || row.escalationPending ? ownDue : undefined,
    }),
  };
}

/**
 * The `from` row as intake reserves it with a pending fallback: the spec, the sealed `to`
 * envelope, and due (at the latest) when `within` has passed.
 */
export function withFallback(intent: Intent, spec: FallbackSpec, envelope: string): Intent {
  const pending = {
    ...intent,
    fallback: spec,
    fallbackDueAt: intent.createdAt + spec.withinMs,
    fallbackEnvelope: envelope,
  };
  return { ...pending, dueAt: dueWithFallback(pending, intent.dueAt, intent.createdAt) };
}
