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
import type { ReadChannel, StorySource } from '../use-cases/read-notice.ts';

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

/**
 * A channel read from the archive left the table resolved, HOT_RETENTION after it resolved: it
 * is final, and nothing more happens to it (not even an escalation a person might still owe:
 * that was the table's, long before).
 */
const ARCHIVED_STEP: NextStep = { kind: 'none' };

export function nextStepView(
  row: Intent,
  context: RowViewContext,
  source: StorySource = 'ledger',
): NextStepView {
  const step = source === 'archive' ? ARCHIVED_STEP : nextStepOf(row, context.now, context.policy);
  const at = nextStepAt(step);
  return {
    kind: step.kind,
    at: at === undefined ? null : iso(at),
    summary: `${describeNextStep(step, row.state)}${source === 'archive' ? ' (archived: past the hot window, final)' : ''}`,
  };
}

export function lastReasonView(row: Intent): LastReasonView | null {
  const last = row.transitions.at(-1);
  return last ? { reason: last.reason, at: iso(last.at), detail: last.detail ?? null } : null;
}

export interface TimelineChannel {
  readonly channel: Channel;
  /**
   * Where this channel's story was read: `ledger`, the table (HOT_RETENTION after it resolved);
   * `archive`, the write-once archive once its row left the table (final: nothing happens next).
   */
  readonly source: StorySource;
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
  /** `ledger`: every channel from the table; `archive`: every channel from the archive; `mixed`: some of each. */
  readonly source: StorySource | 'mixed';
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
  source: StorySource = 'ledger',
): TimelineChannel {
  return {
    channel: row.channel,
    source,
    state: row.state,
    destination: { fingerprint: row.destination.fingerprint, masked: row.destination.masked },
    provider: row.provider ?? null,
    providerReceiptId: row.providerReceiptId ?? null,
    attempts: row.attempts,
    priority: priorityOf(row),
    nextAttemptAt: row.nextAttemptAt !== undefined ? iso(row.nextAttemptAt) : null,
    escalatedAt: row.escalatedAt !== undefined ? iso(row.escalatedAt) : null,
    submittedBy: row.submitter ?? null,
    next: nextStepView(row, context, source),
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
 * The same for a channel read from the table and one read from the archive (its row as the table
 * held it when it resolved): one builder, one shape, each channel saying where it was read.
 */
export function toTimeline(
  read: readonly [ReadChannel, ...ReadChannel[]],
  context: RowViewContext = { now: Date.now() },
): Timeline {
  const rows = read.map(({ row }) => row);
  const channels = [...read].sort((a, b) => a.row.channel.localeCompare(b.row.channel));
  const first = rows.reduce((earliest, row) => (row.createdAt < earliest.createdAt ? row : earliest));
  const sources = new Set(read.map(({ source }) => source));
  return {
    noticeId: first.noticeId,
    source: sources.size > 1 ? 'mixed' : read[0].source,
    eventId: first.eventId,
    eventType: first.eventType,
    recipientId: first.recipientId,
    template: { id: first.templateId, version: first.templateVersion },
    createdAt: iso(Math.min(...rows.map((row) => row.createdAt))),
    deadline: iso(Math.max(...rows.map((row) => row.deadline))),
    channels: channels.map(({ row, source }) => toTimelineChannel(row, context, source)),
  };
}
