import type {
  BatchResponse,
  CancelResponse,
  NoticeRecorded,
  ProblemBody,
  Suppression,
} from '../../lambdas/edge/api-responses.ts';
import type { Timeline, TimelineChannel } from '../../lambdas/edge/timeline.ts';
import {
  formatAge,
  formatDuration,
  formatUtc,
  isEscalationRecord,
  type ListedChannel,
  type ListedChannels,
  lastReasonText,
} from '../format.ts';

/**
 * Human output of the CLI: plain-text tables, times in UTC with a relative age, destinations
 * only in the masked form the API answers. `--json` bypasses all of this and prints the body.
 */

/** Terminal control characters in API text would let a detail rewrite the operator's screen. */
function clean(value: unknown): string {
  return String(value ?? '').replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, '�');
}

export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = rows.map((row) => row.map(clean));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => [...(row[i] ?? '')].length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

const when = (iso: string | null | undefined, now: Date) =>
  iso ? `${formatUtc(iso)} (${formatAge(iso, now)})` : '—';

export function problemText(problem: ProblemBody, status: number): string {
  const lines = [`error: ${clean(problem.title)} (HTTP ${status})`];
  if (problem.detail) lines.push(`  ${clean(problem.detail)}`);
  for (const e of problem.errors ?? [])
    lines.push(`  - ${clean(e.path || '(body)')}: ${clean(e.message)} [${clean(e.code)}]`);
  if (typeof problem.type === 'string' && problem.type !== 'about:blank')
    lines.push(`  type: ${clean(problem.type)}`);
  return lines.join('\n');
}

export function recordedText(body: NoticeRecorded, status: number): string {
  return [
    `${body.created ? 'recorded' : 'already recorded (replay)'}: ${body.noticeId} (HTTP ${status})`,
    table(
      ['channel', 'state'],
      body.channels.map((c) => [c.channel, c.state]),
    ),
  ].join('\n');
}

export function batchText(body: BatchResponse): string {
  return table(
    ['index', 'status', 'noticeId', 'error'],
    body.results.map((r) => [
      r.index,
      r.status,
      r.noticeId ?? '',
      r.error
        ? `${r.error.title}${r.error.errors?.length ? `: ${r.error.errors.map((e) => `${e.path} ${e.code}`).join(', ')}` : ''}`
        : '',
    ]),
  );
}

/** Where the story was read (`source`): the table, or the write-once archive past the hot window. */
export function sourceText(source: Timeline['source']): string {
  switch (source) {
    case 'ledger':
      return 'read from the ledger table';
    case 'archive':
      return 'read from the archive: past the hot window, final';
    case 'mixed':
      return 'read from the ledger table and, for the channels marked archived, the archive (final)';
  }
}

function channelText(channel: TimelineChannel, now: Date): string {
  const head = [
    `${channel.channel}: ${channel.state}${channel.source === 'archive' ? ' (archived)' : ''}  to ${channel.destination.masked}  (${channel.destination.fingerprint})`,
    ...(channel.next ? [`  next: ${channel.next.summary}`] : []),
    `  priority ${channel.priority}  provider ${channel.provider ?? '—'}  receipt ${channel.providerReceiptId ?? '—'}  attempts ${channel.attempts}${
      channel.nextAttemptAt ? `  next attempt ${when(channel.nextAttemptAt, now)}` : ''
    }`,
    // Whose notice it is (absent on channels recorded before submitters were).
    ...(channel.submittedBy ? [`  submitted by ${channel.submittedBy}`] : []),
  ];
  const transitions = [...channel.transitions].sort((a, b) => a.seq - b.seq);
  const rows = transitions.map((t, i) => {
    const previous = transitions[i - 1];
    return [
      t.seq,
      formatUtc(t.at),
      previous ? `+${formatDuration(new Date(t.at).getTime() - new Date(previous.at).getTime())}` : '',
      `${t.from ?? '∅'} → ${t.to}`,
      `${t.reason}${isEscalationRecord(t) ? ' (escalated)' : ''}`,
      t.attempt ?? '',
      t.actor ?? '',
      t.detail ?? '',
    ];
  });
  return [
    ...head,
    table(['#', 'at (UTC)', 'after', 'move', 'reason', 'attempt', 'actor', 'detail'], rows)
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  ].join('\n');
}

export function timelineText(timeline: Timeline, now: Date): string {
  return [
    `notice ${timeline.noticeId}`,
    `  event ${timeline.eventType} ${timeline.eventId}  recipient ${timeline.recipientId}  template ${timeline.template.id} ${timeline.template.version}`,
    `  created ${when(timeline.createdAt, now)}  deadline ${when(timeline.deadline, now)}`,
    // Absent from servers older than the archive (issue 22): their timelines are the table's.
    ...(timeline.source ? [`  ${sourceText(timeline.source)}`] : []),
    '',
    ...timeline.channels.flatMap((c) => [channelText(c, now), '']),
  ]
    .join('\n')
    .trimEnd();
}

export function channelResolvedText(channel: TimelineChannel, now: Date): string {
  return channelText(channel, now);
}

/** What `list` asked for, as typed (`--older-than 10m`), so that an empty answer can say what is true. */
export interface ListAsked {
  readonly state?: string;
  readonly channel?: string;
  readonly olderThan?: string;
  /** With `olderThan` and nothing older: the oldest match of the other filters (`null`: none). */
  readonly oldestYounger?: ListedChannel | null;
}

/** `no unresolved unknown sms channel older than 10m (the oldest is 13 s old)`. */
function nothingListed(asked: ListAsked): string {
  const what = [asked.state ?? 'unresolved', asked.channel, 'channel'].filter(Boolean).join(' ');
  if (asked.state === 'failed' && asked.olderThan === undefined) return `no ${what} in the last 24 hours`;
  if (asked.olderThan === undefined)
    return asked.state || asked.channel ? `no ${what}` : 'nothing unresolved';
  const younger =
    asked.oldestYounger === undefined
      ? ''
      : asked.oldestYounger === null
        ? ' (none younger either)'
        : ` (the oldest is ${formatDuration(asked.oldestYounger.ageSeconds * 1000)} old)`;
  return `no ${what} older than ${asked.olderThan}${younger}`;
}

export function listText(list: ListedChannels, now: Date, asked: ListAsked = {}): string {
  if (list.items.length === 0) return nothingListed(asked);
  const counts = new Map<string, number>();
  for (const item of list.items) counts.set(item.state, (counts.get(item.state) ?? 0) + 1);
  const oldest = list.items[0];
  return [
    table(
      ['noticeId', 'channel', 'state', 'age', 'created (UTC)', 'deadline', 'attempts', 'last reason', 'next'],
      list.items.map((i) => [
        i.noticeId,
        i.channel,
        `${i.state}${i.escalated ? ' (escalated)' : ''}`,
        formatDuration(i.ageSeconds * 1000),
        formatUtc(i.createdAt),
        `${formatUtc(i.deadline)} (${formatAge(i.deadline, now)})`,
        i.attempts,
        lastReasonText(i),
        i.next?.summary ?? '—',
      ]),
    ),
    '',
    `${list.items.length} channel(s): ${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}; oldest ${
      oldest ? formatDuration(oldest.ageSeconds * 1000) : '—'
    }${list.nextCursor ? '; more beyond this page (--all)' : ''}`,
  ].join('\n');
}

export function cancelText(body: CancelResponse): string {
  return [
    `cancel ${body.noticeId}`,
    table(
      ['channel', 'state', 'cancelled'],
      body.channels.map((c) => [
        c.channel,
        c.state,
        c.cancelled
          ? 'yes'
          : c.state === 'sending' || c.state === 'unknown'
            ? 'no (already with the provider)'
            : 'no',
      ]),
    ),
  ].join('\n');
}

export function suppressionText(entry: Suppression, now: Date): string {
  const { latest } = entry;
  return [
    `${entry.channel} ${entry.destination.masked} (${entry.destination.fingerprint}): ${
      entry.suppressed ? 'suppressed' : 'not suppressed'
    }, since ${when(latest.at, now)} (${latest.action} ${latest.reason} by ${latest.actor})`,
    `history, oldest first${entry.historyTruncated ? ' (older records not shown)' : ''}:`,
    table(
      ['at (UTC)', 'action', 'reason', 'source', 'actor', 'code'],
      entry.history.map((r) => [formatUtc(r.at), r.action, r.reason, r.source, r.actor, r.code ?? '']),
    ),
  ].join('\n');
}
