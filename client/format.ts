import type { NoticeListItem } from '../lambdas/edge/api-responses.ts';

/**
 * A listed channel as the CLI and the pages read it: `lastReason` and `next` are optional, since
 * an answer from a deployment before they existed has neither (shown as —).
 */
export type ListedChannel = Omit<NoticeListItem, 'lastReason' | 'next'> &
  Partial<Pick<NoticeListItem, 'lastReason' | 'next'>>;

/** A page of `GET /v1/notices` as the CLI and the pages read it. */
export interface ListedChannels {
  readonly items: readonly ListedChannel[];
  readonly nextCursor: string | null;
}

/** `reason: detail` of a listed channel's last record, or — when the answer has none. */
export function lastReasonText(item: ListedChannel): string {
  const last = item.lastReason;
  if (!last) return '—';
  return last.detail ? `${last.reason}: ${last.detail}` : last.reason;
}

/**
 * Human forms of API values, shared by the CLI tables and the HTML pages. Times are shown in
 * UTC (operators in several zones read the same page), durations compactly.
 */

/** `2026-11-30 10:00:05Z` (milliseconds only when there are some: ordering within a second matters). */
export function formatUtc(value: string | number | Date): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const iso = date.toISOString();
  const ms = iso.slice(20, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${ms === '000' ? '' : `.${ms}`}Z`;
}

/** `850 ms`, `2.1 s`, `3m 12s`, `4h 05m`, `2d 03h`. Negative durations read as their size. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  const s = Math.floor(abs / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}

/** `3m 12s ago` / `in 2h 00m`, relative to `now`. */
export function formatAge(value: string | number | Date, now: Date): string {
  const at = value instanceof Date ? value.getTime() : new Date(value).getTime();
  if (Number.isNaN(at)) return '';
  const delta = now.getTime() - at;
  return delta >= 0 ? `${formatDuration(delta)} ago` : `in ${formatDuration(delta)}`;
}

/** `10m` → `PT10M`, `90s` → `PT90S`, `2h` → `PT2H`, `1d` → `P1D`, `1w` → `P1W`; ISO durations pass through. */
export function toIsoDuration(value: string): string | undefined {
  const trimmed = value.trim();
  if (/^P/i.test(trimmed)) return trimmed.toUpperCase();
  const m = /^(\d{1,6})\s*(s|m|h|d|w)$/i.exec(trimmed);
  if (!m) return undefined;
  const [, n, unit] = m;
  switch ((unit as string).toLowerCase()) {
    case 's':
      return `PT${n}S`;
    case 'm':
      return `PT${n}M`;
    case 'h':
      return `PT${n}H`;
    case 'd':
      return `P${n}D`;
    default:
      return `P${n}W`;
  }
}

/**
 * Reasons that end a row with an escalation event (`deadline_exceeded`, `attempts_exhausted`,
 * `unknown_unresolved`): a person is owed a look. The pages mark them.
 */
export const ESCALATING_REASONS: readonly string[] = [
  'deadline_exceeded',
  'attempts_exhausted',
  'unknown_unresolved',
];

/** The record of an `unknown` handed to a person while it stays unknown (UNKNOWN_POLICY=escalate). */
export const UNKNOWN_ESCALATED = 'unknown_escalated';

/**
 * The early warning of a channel that will likely miss its deadline (docs/architecture.md §11):
 * an escalation while the row keeps trying.
 */
export const DEADLINE_AT_RISK = 'deadline_at_risk';

/**
 * Whether a timeline record raised an escalation: a failure of the kinds above, an unknown's
 * escalation, or a deadline-risk warning.
 */
export function isEscalationRecord(t: { readonly to: string; readonly reason: string }): boolean {
  return (
    t.reason === UNKNOWN_ESCALATED ||
    t.reason === DEADLINE_AT_RISK ||
    (t.to === 'failed' && ESCALATING_REASONS.includes(t.reason))
  );
}
