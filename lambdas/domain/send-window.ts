import { DomainError } from './errors.ts';
import type { Intent } from './intent.ts';
import { type Priority, priorityOf } from './priority.ts';
import { Reason } from './state-machine.ts';
import { nextRecord, planSameState } from './transition.ts';

/*
 * Send windows (docs/architecture.md §12 "Delivery policies"): the hours of the recipient's local
 * day in which a channel may reach them (`SMS_SEND_WINDOW=08:00-21:00`). A `standard` or `bulk`
 * notice that arrives outside its channel's window is held until the window next opens; a
 * `critical` one is sent at once, and says so on its timeline. Pure: local times are computed with
 * `Intl` (the runtime's full ICU time-zone data), never with the server's own zone.
 */

/** A daily window of local time, in minutes of the day: `[opens, closes)`. */
export interface SendWindow {
  /** Minute of the local day the window opens (08:00 → 480). */
  readonly opens: number;
  /** Minute of the local day it closes; below `opens` when the window crosses midnight. */
  readonly closes: number;
  /** As configured (`08:00-21:00`): shown on the timeline. */
  readonly text: string;
}

/** Each channel's window (`EMAIL_SEND_WINDOW`, `SMS_SEND_WINDOW`) and the default zone. */
export interface SendWindows {
  readonly email?: SendWindow | undefined;
  readonly sms?: SendWindow | undefined;
  /** `SEND_WINDOW_TIME_ZONE`: the zone of a recipient whose request names none. */
  readonly defaultZone: string;
}

/** A window setting that is not `HH:MM-HH:MM` with two different times of day. */
export class InvalidSendWindowError extends DomainError {
  constructor(message: string) {
    super('invalid_send_window', message);
    this.name = 'InvalidSendWindowError';
  }
}

const WINDOW = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * `08:00-21:00` (opens 08:00, closes 21:00 local time). A window crossing midnight
 * (`21:00-08:00`: evenings and nights) is allowed: it is open from its first time to midnight and
 * from midnight to its second. Equal times are refused: they would mean either never or always.
 */
export function parseSendWindow(text: string): SendWindow {
  const m = WINDOW.exec(text.trim());
  if (!m)
    throw new InvalidSendWindowError('a send window is HH:MM-HH:MM in 24-hour local time, e.g. 08:00-21:00');
  const opens = Number(m[1]) * 60 + Number(m[2]);
  const closes = Number(m[3]) * 60 + Number(m[4]);
  if (opens === closes) {
    throw new InvalidSendWindowError(
      'a send window must open and close at different times (unset it to send at any hour)',
    );
  }
  return { opens, closes, text: text.trim() };
}

/** Whether the runtime knows the IANA zone (`Europe/Berlin`, `Australia/Adelaide`, `UTC`). */
export function isKnownTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The local wall-clock reading of `at` in `zone`, as if it were UTC (ms, whole seconds). */
function wallClock(at: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(new Date(at))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return Date.UTC(
    parts.year as number,
    (parts.month as number) - 1,
    parts.day as number,
    parts.hour as number,
    parts.minute as number,
    parts.second as number,
  );
}

/** The zone's offset from UTC at `at` (ms; +09:30 → 34 200 000). */
function offsetAt(at: number, zone: string): number {
  return wallClock(at, zone) - Math.floor(at / 1000) * 1000;
}

const HOUR = 3_600_000;

/**
 * The first instant whose local reading in `zone` is at or after the wall time `wall` (a local
 * date and time written as if UTC). A time that occurs twice (the hour a clock is set back) is
 * its first occurrence; a time that does not occur (the hour a clock skips) is the moment the
 * clock jumps (02:30 on a spring-forward night opens at 03:00). Offsets 12 hours either side bound
 * the answer: zones change their offset at most a few times a year.
 */
export function zonedInstant(wall: number, zone: string): number {
  const candidates = [wall - offsetAt(wall - 12 * HOUR, zone), wall - offsetAt(wall + 12 * HOUR, zone)];
  const exact = candidates.filter((t) => wallClock(t, zone) === wall);
  if (exact.length > 0) return Math.min(...exact);
  // In the gap: search the minute the clock jumps, between the two readings.
  let lo = Math.min(...candidates);
  let hi = Math.max(...candidates);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallClock(mid, zone) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

const MINUTE = 60_000;
const DAY = 24 * HOUR;

function isInside(window: SendWindow, minuteOfDay: number): boolean {
  return window.opens < window.closes
    ? minuteOfDay >= window.opens && minuteOfDay < window.closes
    : minuteOfDay >= window.opens || minuteOfDay < window.closes;
}

/**
 * When the window next opens for a recipient in `zone`, seen at `now`; undefined when it is open
 * now. The opening is the window's first minute on the recipient's calendar (today's when it is
 * still ahead, else tomorrow's), so a day of 23 or 25 hours moves it with the local clock.
 */
export function nextWindowOpening(now: number, window: SendWindow, zone: string): number | undefined {
  const wall = wallClock(now, zone);
  const minuteOfDay = Math.floor((wall % DAY) / MINUTE);
  if (isInside(window, minuteOfDay)) return undefined;
  const localMidnight = wall - (wall % DAY);
  const day = minuteOfDay < window.opens ? localMidnight : localMidnight + DAY;
  return zonedInstant(day + window.opens * MINUTE, zone);
}

/** What a channel's send window does to one notice at intake. */
export type WindowDecision =
  /** No window for the channel, or it is open: sent as usual. */
  | { readonly kind: 'open' }
  /** Held until `until` (the window's opening): a `held_for_send_window` record. */
  | { readonly kind: 'held'; readonly until: number; readonly detail: string }
  /** Critical: sent at once although the window is shut; a `send_window_not_applied` record. */
  | { readonly kind: 'not_applied'; readonly detail: string };

/**
 * The window's verdict for a notice of `priority` to a recipient in `zone` at `now`. Only
 * `critical` notices go out when the window is shut (a fraud alert at 03:00 is wanted); the
 * record says which window was not applied, so the exception is never silent.
 */
export function decideSendWindow(input: {
  readonly now: number;
  readonly window?: SendWindow | undefined;
  readonly zone: string;
  readonly priority?: Priority | undefined;
}): WindowDecision {
  if (!input.window) return { kind: 'open' };
  const opening = nextWindowOpening(input.now, input.window, input.zone);
  if (opening === undefined) return { kind: 'open' };
  const where = `${input.window.text} ${input.zone}`;
  if (priorityOf(input) === 'critical') {
    return { kind: 'not_applied', detail: `critical: sent outside the send window ${where}` };
  }
  return {
    kind: 'held',
    until: opening,
    detail: `until ${new Date(opening).toISOString()} (send window ${where})`,
  };
}

/**
 * The row intake reserves, after its window's verdict: held → a `held_for_send_window` record
 * (`reserved → reserved`, until when and which window in `detail`), `notBefore` the opening and
 * due then (never past the deadline: the reconciler fails it there, saying no attempt was made);
 * not applied → a `send_window_not_applied` record, and it goes out at once; open → as it was.
 */
export function applySendWindow(intent: Intent, decision: WindowDecision, at: number): Intent {
  if (decision.kind === 'open') return intent;
  const reason = decision.kind === 'held' ? Reason.heldForSendWindow : Reason.sendWindowNotApplied;
  const record = nextRecord(intent, intent.state, { at, reason, detail: decision.detail });
  const changes =
    decision.kind === 'held'
      ? { notBefore: decision.until, dueAt: Math.min(decision.until, intent.deadline) }
      : {};
  return planSameState(intent, record, changes).next;
}
