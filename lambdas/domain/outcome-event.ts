import type { Channel } from './channel.ts';
import type { Intent, TransitionRecord } from './intent.ts';
import type { Priority } from './priority.ts';
import { type IntentState, isTerminal, type Reason } from './state-machine.ts';

/*
 * Outcome events (issue 23, docs/outcome-events.md): what the business systems are told about
 * their notices. Derived from one change of a ledger row (its image before and after the write, as
 * the table's change stream carries them), so that every transition of a channel is one event and
 * every fact recorded after the row ended (a complaint after `delivered`, a late report) another.
 * Ids, codes and times only: never the destination, the variables or the sealed envelope.
 */

export const OUTCOME_EVENT_TYPES = [
  'notice.channel.reserved',
  'notice.channel.sending',
  'notice.channel.accepted',
  'notice.channel.delivered',
  'notice.channel.failed',
  'notice.channel.unknown',
  'notice.channel.retry_scheduled',
  'notice.channel.suppressed',
  'notice.channel.fact',
] as const;

export type OutcomeEventType = (typeof OUTCOME_EVENT_TYPES)[number];

export interface OutcomeEventData {
  readonly noticeId: string;
  /** The business event the notice was made for (the caller's own id and type). */
  readonly eventId: string;
  readonly eventType: string;
  readonly channel: Channel;
  /** The channel's state after this event (a fact's: the terminal state it was recorded on). */
  readonly state: IntentState;
  readonly reason: Reason;
  /**
   * The channel's own transition number: 1 for `reserved`, one more per state change. A fact
   * carries the number of the transition it follows. A receiver keeps the highest it has seen and
   * drops anything older (events may arrive out of order, and more than once).
   */
  readonly seq: number;
  /** When the ledger recorded it (ISO 8601). */
  readonly at: string;
  readonly attempt: number;
  readonly provider?: string;
  readonly priority: Priority;
}

export interface OutcomeEvent {
  /**
   * Deterministic from (noticeId, channel, transition number) or, for a fact, its record's number:
   * the stream's redelivery of a change yields the same id, the webhook's `webhook-id`.
   */
  readonly id: string;
  readonly type: OutcomeEventType;
  /** The event's time (ISO 8601): the record's. */
  readonly timestamp: string;
  readonly data: OutcomeEventData;
}

/** Whether a record changed the row's state (the intake record, `from` null, included). */
function changesState(record: Pick<TransitionRecord, 'from' | 'to'>): boolean {
  return record.from !== record.to;
}

/** A record telling what happened to a row that had already ended. */
function isLateFact(record: Pick<TransitionRecord, 'from' | 'to'>): boolean {
  return record.from === record.to && isTerminal(record.to);
}

/**
 * The events one write of a ledger row owes, oldest first: one per record the write appended that
 * changed the state or is a fact on an ended row. Waits, escalations and warnings that keep an open
 * row's state, and an accepted row's end of follow-up, are the operators' (timeline, escalations),
 * not the caller's. `oldImage` is absent when the write created the row; a row removed (TTL) owes
 * nothing.
 */
export function outcomeEventsOf(oldImage: Intent | undefined, newImage: Intent | undefined): OutcomeEvent[] {
  if (!newImage) return [];
  const seen = oldImage?.version ?? 0;
  const events: OutcomeEvent[] = [];
  let transitions = 0;
  for (const record of newImage.transitions) {
    if (changesState(record)) transitions += 1;
    if (record.seq <= seen) continue;
    if (changesState(record)) {
      events.push(eventOf(newImage, record, transitions, `notice.channel.${record.to}`, `${transitions}`));
    } else if (isLateFact(record)) {
      events.push(eventOf(newImage, record, transitions, 'notice.channel.fact', `f${record.seq}`));
    }
  }
  return events;
}

function eventOf(
  row: Intent,
  record: TransitionRecord,
  seq: number,
  type: OutcomeEventType,
  idTail: string,
): OutcomeEvent {
  const at = new Date(record.at).toISOString();
  return {
    id: `msg_${row.noticeId}_${row.channel}_${idTail}`,
    type,
    timestamp: at,
    data: {
      noticeId: row.noticeId,
      eventId: row.eventId,
      eventType: row.eventType,
      channel: row.channel,
      state: record.to,
      reason: record.reason,
      seq,
      at,
      attempt: record.attempt ?? row.attempts,
      ...(row.provider !== undefined ? { provider: row.provider } : {}),
      priority: row.priority ?? 'standard',
    },
  };
}

/** What a webhook carries (Standard Webhooks' payload shape): the event without its id. */
export function webhookPayload(event: OutcomeEvent): {
  type: OutcomeEventType;
  timestamp: string;
  data: OutcomeEventData;
} {
  return { type: event.type, timestamp: event.timestamp, data: event.data };
}

/**
 * When a webhook not answered with a 2xx is tried again: `schedule[tries - 1]` ms after the try
 * that failed, where `tries` counts the tries so far (1 after the first); once the schedule is
 * spent, `dead_letter`.
 */
export function webhookRetry(
  tries: number,
  schedule: readonly number[],
): { readonly kind: 'retry'; readonly delayMs: number } | { readonly kind: 'dead_letter' } {
  const delayMs = schedule[tries - 1];
  return delayMs === undefined ? { kind: 'dead_letter' } : { kind: 'retry', delayMs };
}
