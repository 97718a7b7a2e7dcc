import {
  formatAge,
  formatDuration,
  formatUtc,
  type ListedChannel,
  type ListedChannels,
  lastReasonText,
} from '../format.ts';
import { BASE_CSS, escapeHtml, page, stateBadge } from './html.ts';

/**
 * The unresolved channels (`GET /v1/notices`) as one self-contained page: counts per state, the
 * oldest age (the health signal the alarm pages on), then the channels oldest first, each with
 * its last reason and what happens next, linking to its timeline page; optionally the channels
 * that failed recently (`GET /v1/notices?state=failed`), most recent first. Served by the local
 * stack at `GET /console`, which refreshes itself.
 */

const STATES = ['reserved', 'sending', 'retry_scheduled', 'unknown'] as const;

export interface ListPageOptions {
  readonly now?: Date;
  /**
   * Counts per state over every open row, when the caller has them (the store's open-row
   * gauge); otherwise the page counts the items it shows, and says so.
   */
  readonly counts?: Readonly<Partial<Record<(typeof STATES)[number], number>>>;
  /** Link of a notice's timeline page. @default `notices/{noticeId}` (relative) */
  readonly noticeHref?: (noticeId: string) => string;
  readonly title?: string;
  /** The channels that failed recently (`state=failed`), shown in a section of their own. */
  readonly failed?: ListedChannels | undefined;
  /** Reload the page this often (a `<meta http-equiv="refresh">`: the pages run no script). */
  readonly refreshSeconds?: number | undefined;
}

/** The last reason and the next step of a listed channel, two cells. */
function whyCells(item: ListedChannel): string {
  const next = item.next;
  return `<td class="why"><code>${escapeHtml(lastReasonText(item))}</code></td>
<td class="next"${next ? ` data-next="${escapeHtml(next.kind)}"` : ''}>${escapeHtml(next?.summary ?? '—')}</td>`;
}

function failedSection(failed: ListedChannels, href: (id: string) => string, now: Date): string {
  const rows = failed.items
    .map(
      (
        item,
      ) => `<tr data-notice="${escapeHtml(item.noticeId)}" data-channel="${escapeHtml(item.channel)}" data-state="failed">
<td><a class="mono" href="${escapeHtml(href(item.noticeId))}">${escapeHtml(item.noticeId)}</a></td>
<td>${escapeHtml(item.channel)}</td>
<td>${stateBadge('failed')}${item.escalated ? ' <span class="esc">escalated</span>' : ''}</td>
<td class="mono">${item.lastReason ? `${escapeHtml(formatUtc(item.lastReason.at))} <span class="muted">(${escapeHtml(formatAge(item.lastReason.at, now))})</span>` : '—'}</td>
<td>${item.attempts}</td>
${whyCells(item)}
</tr>`,
    )
    .join('\n');
  return `<section class="card failed">
<h2>Failed in the last 24 hours</h2>
<table class="channels"><thead><tr><th>notice</th><th>channel</th><th>state</th><th>failed (UTC)</th><th>attempts</th><th>last reason</th><th>next</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="7" class="muted">Nothing failed in the last 24 hours.</td></tr>'}
</tbody></table>
${failed.nextCursor ? '<p class="muted">More failures exist beyond this page.</p>' : ''}
</section>`;
}

export function renderListPage(list: ListedChannels, options: ListPageOptions = {}): string {
  const now = options.now ?? new Date();
  const href = options.noticeHref ?? ((id: string) => `notices/${encodeURIComponent(id)}`);
  const items = [...list.items].sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.noticeId.localeCompare(b.noticeId),
  );
  const counted =
    options.counts ?? Object.fromEntries(STATES.map((s) => [s, items.filter((i) => i.state === s).length]));
  const oldest = items[0];
  const oldestAge = oldest ? Math.max(0, now.getTime() - new Date(oldest.createdAt).getTime()) : undefined;
  const summary = `<section class="card summary">
<h2>Unresolved</h2>
<table class="counts"><thead><tr>${STATES.map((s) => `<th>${s}</th>`).join('')}<th>oldest</th></tr></thead>
<tbody><tr>${STATES.map((s) => `<td data-count="${s}">${counted[s] ?? 0}</td>`).join('')}<td data-oldest-age>${oldestAge === undefined ? '—' : escapeHtml(formatDuration(oldestAge))}</td></tr></tbody></table>
${options.counts ? '' : `<p class="muted">Counts of the ${items.length} channel(s) listed${list.nextCursor ? ' on this page (more exist)' : ''}.</p>`}
</section>`;
  const rows = items
    .map(
      (
        item,
      ) => `<tr data-notice="${escapeHtml(item.noticeId)}" data-channel="${escapeHtml(item.channel)}" data-state="${escapeHtml(item.state)}">
<td><a class="mono" href="${escapeHtml(href(item.noticeId))}">${escapeHtml(item.noticeId)}</a></td>
<td>${escapeHtml(item.channel)}</td>
<td>${stateBadge(item.state)}${item.escalated ? ' <span class="esc">escalated</span>' : ''}</td>
<td>${escapeHtml(formatDuration(item.ageSeconds * 1000))}</td>
<td class="mono">${escapeHtml(formatUtc(item.createdAt))}</td>
<td class="mono">${escapeHtml(formatUtc(item.deadline))} <span class="muted">(${escapeHtml(formatAge(item.deadline, now))})</span></td>
<td>${item.attempts}</td>
${whyCells(item)}
</tr>`,
    )
    .join('\n');
  const table = `<section class="card">
<table class="channels"><thead><tr><th>notice</th><th>channel</th><th>state</th><th>age</th><th>created (UTC)</th><th>deadline (UTC)</th><th>attempts</th><th>last reason</th><th>next</th></tr></thead>
<tbody>
${rows || '<tr><td colspan="9" class="muted">Nothing unresolved.</td></tr>'}
</tbody></table>
${list.nextCursor ? '<p class="muted">More channels exist beyond this page.</p>' : ''}
</section>`;
  const css =
    '.esc { color: var(--bad); font-weight: 600; font-size: 12px; } a { color: var(--info); } ' +
    'td.why code { overflow-wrap: anywhere; } td.why { max-width: 360px; } td.next { max-width: 320px; }';
  const refresh = options.refreshSeconds ? ` Refreshes every ${options.refreshSeconds} s.` : '';
  return page(
    options.title ?? 'notice-ledger: unresolved',
    BASE_CSS + css,
    `<h1>${escapeHtml(options.title ?? 'Unresolved channels')}</h1>
<p class="muted">Oldest first. Rendered ${escapeHtml(formatUtc(now))}.${refresh}</p>
${summary}
${table}
${options.failed ? failedSection(options.failed, href, now) : ''}`,
    options.refreshSeconds ? { refreshSeconds: options.refreshSeconds } : {},
  );
}
