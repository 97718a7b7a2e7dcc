import type { Timeline, TimelineChannel, TimelineTransition } from '../../lambdas/edge/timeline.ts';
import { formatAge, formatDuration, formatUtc, isEscalationRecord } from '../format.ts';
import { BASE_CSS, escapeHtml, page, stateBadge } from './html.ts';

/**
 * The timeline of one notice (`GET /v1/notices/{noticeId}`) as one self-contained HTML page:
 * inline CSS, no script, no external asset, so `notice-ledger get <id> --html FILE` can be
 * mailed, attached to a ticket or opened offline, and the local stack serves the same page.
 *
 * One lane per channel on a shared time axis; each transition is a point at its time, labelled
 * with its reason, attempt number and, for a person's move, its actor. Between a scheduled retry
 * and the next claim, and across an `unknown` stretch, a bar shows the wait. The axis is
 * logarithmic in elapsed time (the same for every lane): it keeps order and lets a 100 ms claim
 * and a 10-minute reconciliation share one screen; the table under each lane gives exact times.
 * Labels are stacked in tiers above and below the lane so that close points stay readable.
 */

/**
 * A channel as the page reads it (`escalatedAt`, `next` and `source` optional: pages of timelines
 * saved before they existed).
 */
export type TimelinePageChannel = Omit<TimelineChannel, 'escalatedAt' | 'next' | 'source'> & {
  readonly escalatedAt?: string | null;
  readonly next?: TimelineChannel['next'];
  readonly source?: TimelineChannel['source'];
};
export type TimelinePageInput = Omit<Timeline, 'channels' | 'source'> & {
  readonly source?: Timeline['source'];
  readonly channels: readonly TimelinePageChannel[];
};

/** Where the story was read, in the header: the table, or the write-once archive past the hot window. */
const SOURCE_TEXT: Readonly<Record<Timeline['source'], string>> = {
  ledger: 'the ledger table',
  archive: 'the archive: past the hot window, final',
  mixed: 'the ledger table and, for the channels marked archived, the archive (final)',
};

export interface TimelinePageOptions {
  /** For relative ages; defaults to the time of rendering. */
  readonly now?: Date;
}

const AXIS_START = 3;
const AXIS_SPAN = 94;

function timeOf(iso: string): number {
  return new Date(iso).getTime();
}

/** Below this, elapsed time is drawn nearly linearly; beyond it, logarithmically. */
const AXIS_KNEE_MS = 100;

/** log(1 + t/knee) from the notice's first moment to its last known one, in percent. */
function axis(timeline: TimelinePageInput): (at: number) => number {
  const times = [
    timeOf(timeline.createdAt),
    ...timeline.channels.flatMap((c) => c.transitions.map((t) => timeOf(t.at))),
  ].filter((t) => !Number.isNaN(t));
  const start = Math.min(...times);
  const span = Math.max(...times) - start;
  const scale = (ms: number) => Math.log1p(Math.max(0, ms) / AXIS_KNEE_MS);
  return (at) => AXIS_START + (span > 0 ? (AXIS_SPAN * scale(at - start)) / scale(span) : 0);
}

const pct = (x: number) => `${x.toFixed(3)}%`;

/** Label tiers, nearest the lane first: above 1, below 1, above 2, below 2, … */
const TIERS = 6;
/** Rough label width in percent of the lane per character (11.5 px text on a ~1000 px lane). */
const CHAR_PCT = 0.62;

type Anchor = 'start' | 'middle' | 'end';

/**
 * Places each label in the nearest tier where it overlaps no earlier label, anchoring labels near
 * the edges inwards so they stay on the page. Widths are estimated; a page wider or narrower
 * than ~1000 px only changes how much room is left between them.
 */
function layoutLabels(points: readonly { x: number; label: string }[]): { tier: number; anchor: Anchor }[] {
  const taken: [number, number][][] = Array.from({ length: TIERS }, () => []);
  return points.map(({ x, label }) => {
    const width = label.length * CHAR_PCT + 1;
    const anchor: Anchor = x < 12 ? 'start' : x > 80 ? 'end' : 'middle';
    const from = anchor === 'start' ? x : anchor === 'end' ? x - width : x - width / 2;
    const span: [number, number] = [from, from + width];
    let tier = taken.findIndex((spans) => spans.every(([a, b]) => span[1] <= a || span[0] >= b));
    if (tier === -1) tier = TIERS - 1;
    taken[tier]?.push(span);
    return { tier, anchor };
  });
}

const isEscalation = isEscalationRecord;

function pointClasses(t: TimelineTransition): string {
  return ['point', `to-${t.to}`, t.actor !== undefined ? 'person' : '', isEscalation(t) ? 'escalation' : '']
    .filter(Boolean)
    .join(' ');
}

/**
 * Waits worth drawing: a scheduled retry until the next record, an `unknown` stretch from the
 * record that entered it to the one that left it (its escalation, `unknown → unknown`, is a point
 * on the bar, not a new stretch). A stretch still open is not drawn: it has no end yet.
 */
function waits(transitions: readonly TimelineTransition[]) {
  const out: { from: TimelineTransition; to: TimelineTransition; kind: 'retry' | 'unknown' }[] = [];
  transitions.forEach((t, i) => {
    const next = transitions[i + 1];
    if (!next) return;
    if (t.to === 'retry_scheduled') out.push({ from: t, to: next, kind: 'retry' });
    else if (t.to === 'unknown' && t.from !== 'unknown') {
      const end = transitions.slice(i + 1).find((later) => later.to !== 'unknown');
      if (end) out.push({ from: t, to: end, kind: 'unknown' });
    }
  });
  return out;
}

function lane(channel: TimelinePageChannel, x: (at: number) => number): string {
  const transitions = [...channel.transitions].sort((a, b) => a.seq - b.seq);
  const bars = waits(transitions)
    .map(({ from, to, kind }) => {
      const left = x(timeOf(from.at));
      const width = Math.max(0.4, x(timeOf(to.at)) - left);
      const label = `${kind === 'retry' ? 'waited' : 'unknown for'} ${formatDuration(timeOf(to.at) - timeOf(from.at))}`;
      return `<div class="wait wait-${kind}" data-wait="${kind}" style="left:${pct(left)};width:${pct(width)}" title="${escapeHtml(label)}"><span>${escapeHtml(label)}</span></div>`;
    })
    .join('\n');
  const labels = transitions.map((t) =>
    [t.reason, t.attempt !== undefined ? `#${t.attempt}` : '', t.actor !== undefined ? `by ${t.actor}` : '']
      .filter(Boolean)
      .join(' '),
  );
  const layout = layoutLabels(
    transitions.map((t, i) => ({ x: x(timeOf(t.at)), label: labels[i] as string })),
  );
  const points = transitions
    .map((t, i) => {
      const label = labels[i] as string;
      const { tier, anchor } = layout[i] as { tier: number; anchor: Anchor };
      const title = `${t.seq}. ${formatUtc(t.at)} ${t.from ?? '∅'} → ${t.to} (${label})${t.detail ? `: ${t.detail}` : ''}`;
      return `<div class="${pointClasses(t)}" style="left:${pct(x(timeOf(t.at)))}" data-seq="${t.seq}" data-reason="${escapeHtml(t.reason)}" data-to="${escapeHtml(t.to)}" data-at="${escapeHtml(t.at)}"${t.actor !== undefined ? ` data-actor="${escapeHtml(t.actor)}"` : ''} title="${escapeHtml(title)}"><span class="dot"></span><span class="label ${tier % 2 ? 'low' : 'high'} t${Math.floor(tier / 2)} a-${anchor}">${escapeHtml(label)}</span></div>`;
    })
    .join('\n');
  return `<div class="lane" data-lane="${escapeHtml(channel.channel)}" aria-label="${escapeHtml(channel.channel)} lane"${channel.escalatedAt ? ` data-escalated-at="${escapeHtml(channel.escalatedAt)}"` : ''}>
<div class="track"></div>
${bars}
${points}
</div>`;
}

function transitionTable(channel: TimelinePageChannel, start: number): string {
  const transitions = [...channel.transitions].sort((a, b) => a.seq - b.seq);
  const rows = transitions
    .map((t, i) => {
      const previous = transitions[i - 1];
      const gap = previous ? formatDuration(timeOf(t.at) - timeOf(previous.at)) : '';
      return `<tr data-seq="${t.seq}"${t.actor !== undefined ? ' class="person"' : ''}>
<td>${t.seq}</td>
<td class="mono">${escapeHtml(formatUtc(t.at))}</td>
<td class="muted">+${escapeHtml(formatDuration(timeOf(t.at) - start))}</td>
<td class="muted">${escapeHtml(gap)}</td>
<td>${t.from ? stateBadge(t.from) : '<span class="muted">∅</span>'} → ${stateBadge(t.to)}</td>
<td><code class="reason">${escapeHtml(t.reason)}</code>${isEscalation(t) ? ' <span class="esc">escalated</span>' : ''}</td>
<td>${t.attempt ?? ''}</td>
<td class="detail">${escapeHtml(t.detail ?? '')}</td>
<td class="actor">${escapeHtml(t.actor ?? '')}</td>
</tr>`;
    })
    .join('\n');
  return `<table class="transitions">
<thead><tr><th>#</th><th>time (UTC)</th><th>since start</th><th>after</th><th>move</th><th>reason</th><th>attempt</th><th>detail</th><th>actor</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}

function channelFacts(channel: TimelinePageChannel, now: Date): string {
  const facts: [string, string][] = [
    ['destination', `<span class="mono">${escapeHtml(channel.destination.masked)}</span>`],
    ['fingerprint', `<span class="mono">${escapeHtml(channel.destination.fingerprint)}</span>`],
    ['priority', escapeHtml(channel.priority)],
    ['provider', escapeHtml(channel.provider ?? '—')],
    ['receipt', `<span class="mono">${escapeHtml(channel.providerReceiptId ?? '—')}</span>`],
    ['attempts', String(channel.attempts)],
  ];
  if (channel.nextAttemptAt) {
    facts.push([
      'next attempt',
      `${escapeHtml(formatUtc(channel.nextAttemptAt))} <span class="muted">(${escapeHtml(formatAge(channel.nextAttemptAt, now))})</span>`,
    ]);
  }
  if (channel.next) {
    // What happens next, in the server's words (derived once from the row).
    facts.push([
      'next',
      `<span data-next="${escapeHtml(channel.next.kind)}">${escapeHtml(channel.next.summary)}</span>`,
    ]);
  }
  if (channel.escalatedAt) {
    facts.push([
      'escalated',
      `${escapeHtml(formatUtc(channel.escalatedAt))} <span class="esc">waiting for an operator’s resolution</span>`,
    ]);
  }
  if (channel.submittedBy) {
    facts.push(['submitted by', `<span class="mono">${escapeHtml(channel.submittedBy)}</span>`]);
  }
  if (channel.source) {
    facts.push([
      'read from',
      `<span data-source="${escapeHtml(channel.source)}">${channel.source === 'archive' ? 'the archive (final)' : 'the ledger table'}</span>`,
    ]);
  }
  if (channel.sms) {
    facts.push([
      'sms',
      escapeHtml(
        `${channel.sms.encoding}, ${channel.sms.segments} segment(s), ${channel.sms.characters} characters`,
      ),
    ]);
  }
  return `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

const TIMELINE_CSS = `
.lane { position: relative; height: 150px; margin: 12px 0 8px; }
.track { position: absolute; left: ${AXIS_START}%; right: ${100 - AXIS_START - AXIS_SPAN}%; top: 72px; height: 2px; background: var(--line); }
.point { position: absolute; top: 65px; width: 0; }
.point .dot { position: absolute; left: -7px; top: 0; width: 14px; height: 14px; border-radius: 50%;
  background: #fff; border: 3px solid var(--info); }
.point.to-accepted .dot, .point.to-delivered .dot { border-color: var(--ok); background: var(--ok); }
.point.to-failed .dot { border-color: var(--bad); background: var(--bad); }
.point.to-unknown .dot { border-color: var(--warn); }
.point.to-retry_scheduled .dot { border-color: var(--warn); background: #fff4d6; }
.point.person .dot { border-color: var(--person); box-shadow: 0 0 0 3px #e9ddff; }
.point.escalation .dot { border-color: var(--bad); border-style: double; border-width: 4px; }
.point .label { position: absolute; white-space: nowrap; font-size: 11.5px; line-height: 16px; color: var(--muted); }
.point .label.a-middle { transform: translateX(-50%); }
.point .label.a-start { transform: translateX(-6px); }
.point .label.a-end { transform: translateX(calc(-100% + 6px)); }
.point .label.high.t0 { bottom: 18px; } .point .label.high.t1 { bottom: 36px; } .point .label.high.t2 { bottom: 54px; }
.point .label.low.t0 { top: 18px; } .point .label.low.t1 { top: 36px; } .point .label.low.t2 { top: 54px; }
.point.person .label { color: var(--person); font-weight: 600; }
.point.escalation .label { color: var(--bad); font-weight: 600; }
.wait { position: absolute; top: 67px; height: 12px; border-radius: 6px; background: repeating-linear-gradient(90deg, #fff4d6 0 6px, #ffe8a3 6px 12px); }
.wait.wait-unknown { background: repeating-linear-gradient(90deg, #fde7e9 0 6px, #f9c6cb 6px 12px); }
.wait span { position: absolute; top: -17px; left: 50%; transform: translateX(-50%); white-space: nowrap; font-size: 11px; color: var(--warn); }
tr.person td { background: #f6f0ff; }
table.transitions td:nth-child(-n+5) { white-space: nowrap; }
td.detail { max-width: 420px; overflow-wrap: anywhere; }
td.actor { font-family: ui-monospace, monospace; font-size: 12px; color: var(--person); overflow-wrap: anywhere; }
.esc { color: var(--bad); font-weight: 600; font-size: 12px; }
.archived { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  color: var(--muted); border: 1px solid var(--line); background: #fff; }
.legend span { margin-right: 14px; }
`;

export function renderTimelinePage(timeline: TimelinePageInput, options: TimelinePageOptions = {}): string {
  const now = options.now ?? new Date();
  const x = axis(timeline);
  const start = Math.min(
    timeOf(timeline.createdAt),
    ...timeline.channels.flatMap((c) => c.transitions.map((t) => timeOf(t.at))),
  );
  const channels = timeline.channels
    .map(
      (channel) => `<section class="card channel" data-channel="${escapeHtml(channel.channel)}">
<h2>${escapeHtml(channel.channel)} ${stateBadge(channel.state)}${channel.source === 'archive' ? ' <span class="archived">archived</span>' : ''}</h2>
${channelFacts(channel, now)}
${lane(channel, x)}
${transitionTable(channel, start)}
</section>`,
    )
    .join('\n');
  const body = `<header>
<h1>Notice <span class="mono">${escapeHtml(timeline.noticeId)}</span></h1>
<dl class="facts">
<dt>event</dt><dd>${escapeHtml(timeline.eventType)} <span class="mono">${escapeHtml(timeline.eventId)}</span></dd>
<dt>recipient</dt><dd class="mono">${escapeHtml(timeline.recipientId)}</dd>
<dt>template</dt><dd>${escapeHtml(timeline.template.id)} <span class="mono">${escapeHtml(timeline.template.version)}</span></dd>
<dt>created</dt><dd>${escapeHtml(formatUtc(timeline.createdAt))} <span class="muted">(${escapeHtml(formatAge(timeline.createdAt, now))})</span></dd>
<dt>deadline</dt><dd>${escapeHtml(formatUtc(timeline.deadline))} <span class="muted">(${escapeHtml(formatAge(timeline.deadline, now))})</span></dd>${
    timeline.source
      ? `\n<dt>read from</dt><dd data-source="${escapeHtml(timeline.source)}">${escapeHtml(SOURCE_TEXT[timeline.source])}</dd>`
      : ''
  }
</dl>
<p class="legend muted"><span>● point: a transition at its time (logarithmic time axis)</span><span>▬ bar: a wait</span><span style="color:var(--person)">● a person's action, with actor</span><span style="color:var(--bad)">◎ escalation</span></p>
</header>
${channels}
<footer class="muted">Rendered ${escapeHtml(formatUtc(now))} from GET /v1/notices/${escapeHtml(timeline.noticeId)}. Destinations are masked; the ledger and the archive hold fingerprints only.</footer>`;
  return page(`Notice ${timeline.noticeId}`, BASE_CSS + TIMELINE_CSS, body);
}
