import type { Channel } from '../domain/channel.ts';
import type { Intent, SmsShape, TransitionRecord } from '../domain/intent.ts';
import {
  describeNextStep,
  type NextStep,
  type NextStepPolicy,
  nextStepAt,
  nextStepOf,
} from '../domain/next-step.ts';
import { type Priority, priorityOf } from '../domain/priority.ts';
import type { IntentState } from '../domain/state-machine.ts';

/**
 * The operator timeline of `GET /v1/notices/{noticeId}` (docs/architecture.md §6, field names fixed).
 *
 * Built field by field, never by spreading an Intent: the row also holds the sealed envelope
 * (destination and variables), the lease owner and the content digest, none of which may leave
 * the service. Times are ISO 8601 UTC strings; absent values are `null`, not missing keys, so
 * clients see the full shape on every row. `sms` (encoding, segments, characters) is an extra
 * member on SMS channels only.
 */
export interface TimelineTransition {
  readonly seq: number;
  readonly at: string;
  readonly from: IntentState | null;
  readonly to: IntentState;
  readonly reason: string;
  readonly attempt?: number;
  readonly detail?: string;
  /** Who wrote it, on records written by a person or a business caller (resolution, cancel). */
  readonly actor?: string;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/**
 * What happens next to a channel (lambdas/domain/next-step.ts, derived once from the row): the
 * step's kind, its time (when it happens, or by when; null when it names none) and one line of
 * plain words that every client prints as it is.
 */
export interface NextStepView {
  readonly kind: NextStep['kind'];
  readonly at: string | null;
  readonly summary: string;
}

/** The row's last record, as a list shows it: why the channel is where it is. */
export interface LastReasonView {
  readonly reason: string;
  readonly at: string;
  readonly detail: string | null;
}

/** When the views are taken, and the settings that time the system's own next steps. */
export interface RowViewContext {
  readonly now: number;
  readonly policy?: NextStepPolicy | undefined;
}

export function nextStepView(row: Intent, context: RowViewContext): NextStepView {
  const step = nextStepOf(row, context.now, context.policy);
  const at = nextStepAt(step);
  return {
    kind: step.kind,
    at: at === undefined ? null : iso(at),
    summary: describeNextStep(step, row.state),
  };
}

export function lastReasonView(row: Intent): LastReasonView | null {
  const last = row.transitions.at(-1);
  return last ? { reason: last.reason, at: iso(last.at), detail: last.detail ?? null } : null;
}

export interface TimelineChannel {
  readonly channel: Channel;
  readonly state: IntentState;
  readonly destination: { readonly fingerprint: string; readonly masked: string };
  readonly provider: string | null;
  readonly providerReceiptId: string | null;
  readonly attempts: number;
  /** The lane it waits in (docs/architecture.md §11). */
  readonly priority: Priority;
  readonly nextAttemptAt: string | null;
  /**
   * Since when this channel's current `unknown` has been escalated to a person and waits for an
   * operator's resolution (UNKNOWN_POLICY=escalate); null otherwise. Its record
   * (`unknown_escalated`) stays in `transitions` after the channel moves on.
   */
  readonly escalatedAt: string | null;
  /**
   * The IAM principal whose request recorded this channel (domain/intent.ts `submitter`), so that
   * an operator sees whose notice it is; null on channels recorded before submitters were.
   */
  readonly submittedBy: string | null;
  /** What happens next to the channel (its last reason is the last of `transitions`). */
  readonly next: NextStepView;
  readonly transitions: readonly TimelineTransition[];
  readonly sms?: SmsShape | null;
}

export interface Timeline {
  readonly noticeId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly recipientId: string;
  readonly template: { readonly id: string; readonly version: string };
  readonly createdAt: string;
  readonly deadline: string;
  readonly channels: readonly TimelineChannel[];
}

function toTransition(record: TransitionRecord): TimelineTransition {
  return {
    seq: record.seq,
    at: iso(record.at),
    from: record.from,
    to: record.to,
    reason: record.reason,
    ...(record.attempt !== undefined ? { attempt: record.attempt } : {}),
    ...(record.detail !== undefined ? { detail: record.detail } : {}),
    ...(record.actor !== undefined ? { actor: record.actor } : {}),
  };
}

/** One channel as the timeline shows it (also the answer of a resolution). */
export function toTimelineChannel(
  row: Intent,
  context: RowViewContext = { now: Date.now() },
): TimelineChannel {
  return {
    channel: row.channel,
    state: row.state,
    destination: { fingerprint: row.destination.fingerprint, masked: row.destination.masked },
    provider: row.provider ?? null,
    providerReceiptId: row.providerReceiptId ?? null,
    attempts: row.attempts,
    priority: priorityOf(row),
    nextAttemptAt: row.nextAttemptAt !== undefined ? iso(row.nextAttemptAt) : null,
    escalatedAt: row.escalatedAt !== undefined ? iso(row.escalatedAt) : null,
    submittedBy: row.submitter ?? null,
    next: nextStepView(row, context),
    transitions: [...row.transitions].sort((a, b) => a.seq - b.seq).map(toTransition),
    ...(row.channel === 'sms'
      ? {
          sms: row.sms
            ? { encoding: row.sms.encoding, segments: row.sms.segments, characters: row.sms.characters }
            : null,
        }
      : {}),
  };
}

/**
 * Notice-level fields come from the rows, which share ids and, normally, content revision and
 * times. Channels recorded by a later request (a replay that added a channel) can have their
 * own createdAt and deadline: the timeline shows the earliest creation and the latest deadline,
 * i.e. the span in which the notice was owed, and the revision the notice was first recorded with.
 */
export function toTimeline(
  rows: readonly [Intent, ...Intent[]],
  context: RowViewContext = { now: Date.now() },
): Timeline {
  const channels = [...rows].sort((a, b) => a.channel.localeCompare(b.channel));
  const first = rows.reduce((earliest, row) => (row.createdAt < earliest.createdAt ? row : earliest));
  return {
    noticeId: first.noticeId,
    eventId: first.eventId,
    eventType: first.eventType,
    recipientId: first.recipientId,
    template: { id: first.templateId, version: first.templateVersion },
    createdAt: iso(Math.min(...rows.map((row) => row.createdAt))),
    deadline: iso(Math.max(...rows.map((row) => row.deadline))),
    channels: channels.map((row) => toTimelineChannel(row, context)),
  };
}
