import { describe, expect, it } from 'vitest';
import { escapeHtml, PAGE_CSP } from '../../client/html/html.ts';
import { renderListPage } from '../../client/html/list-page.ts';
import { renderTimelinePage } from '../../client/html/timeline-page.ts';
import { T0 } from '../helpers/factories.ts';
import { TEST_ACTOR } from '../helpers/ledger-properties.ts';
import { throttledAndResolvedTimeline } from '../helpers/timelines.ts';

const NOW = new Date(T0 + 15 * 60_000);
const HOSTILE = `"><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><a href='https://evil.example'>x</a>`;

/** Every tag name in the page: hostile text must add none. */
function tags(html: string): Set<string> {
  return new Set([...html.matchAll(/<([a-z][a-z0-9]*)\b/gi)].map((m) => (m[1] as string).toLowerCase()));
}

describe('renderTimelinePage', () => {
  it('is one self-contained document: no script, no external reference, a CSP that forbids both', () => {
    const html = renderTimelinePage(throttledAndResolvedTimeline(), { now: NOW });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(`content="${escapeHtml(PAGE_CSP)}"`);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|@import|url\(/i);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('draws one lane per channel with a point per transition, in order, at increasing positions', () => {
    const timeline = throttledAndResolvedTimeline();
    const html = renderTimelinePage(timeline, { now: NOW });
    for (const channel of timeline.channels) {
      const lane = html.slice(html.indexOf(`data-lane="${channel.channel}"`));
      const laneHtml = lane.slice(0, lane.indexOf('<table class="transitions">'));
      const points = [
        ...laneHtml.matchAll(
          /class="point[^"]*" style="left:([\d.]+)%" data-seq="(\d+)" data-reason="([a-z_]+)"/g,
        ),
      ];
      expect(points.map((p) => p[3])).toEqual(channel.transitions.map((t) => t.reason));
      const lefts = points.map((p) => Number(p[1]));
      for (let i = 1; i < lefts.length; i++) expect(lefts[i]).toBeGreaterThanOrEqual(lefts[i - 1] as number);
    }
    expect(html).toContain('<dt>priority</dt><dd>standard</dd>');
    expect(html).toContain('data-wait="retry"');
    expect(html).toContain('data-wait="unknown"');
    expect(html).toContain(`data-actor="${escapeHtml(TEST_ACTOR)}"`);
  });

  it("marks an unknown's escalation as an escalation point on one unknown bar, and says while it waits", () => {
    const waiting = renderTimelinePage(
      throttledAndResolvedTimeline({ escalatedAfterMs: 600_000, unresolved: true }),
      {
        now: NOW,
      },
    );
    const settled = renderTimelinePage(throttledAndResolvedTimeline({ escalatedAfterMs: 600_000 }), {
      now: NOW,
    });
    for (const html of [waiting, settled]) {
      expect(html).toMatch(
        /class="point to-unknown escalation" [^>]*data-seq="4" data-reason="unknown_escalated"/,
      );
    }
    // While it waits: the lane and the facts say so; there is no end to draw a bar to yet.
    expect(waiting).toMatch(/data-lane="sms"[^>]*data-escalated-at="2026-11-30T10:10:10.250Z"/);
    expect(waiting).toContain('waiting for an operator’s resolution');
    expect(waiting).not.toContain('data-wait="unknown"');
    // Once resolved: one unknown stretch from the timeout to the operator, across the escalation.
    expect(settled.match(/data-wait="unknown"/g)).toHaveLength(1);
    expect(settled).toContain('unknown for 11m 49s');
    expect(settled).not.toContain('data-escalated-at');
  });

  it('escapes everything the API says: hostile operator words add no element and no attribute', () => {
    const plain = renderTimelinePage(throttledAndResolvedTimeline(), { now: NOW });
    const hostile = renderTimelinePage(throttledAndResolvedTimeline({ operatorWords: HOSTILE }), {
      now: NOW,
    });
    expect(tags(hostile)).toEqual(tags(plain));
    expect(hostile).not.toContain('<script>window');
    expect(hostile).toContain('&lt;script&gt;window.pwned=1&lt;/script&gt;');
    expect(hostile).not.toMatch(/onerror="/);
  });

  it('escapes masked destinations and ids too', () => {
    const timeline = throttledAndResolvedTimeline();
    const tampered = {
      ...timeline,
      eventId: HOSTILE,
      channels: timeline.channels.map((c) => ({
        ...c,
        destination: { fingerprint: HOSTILE, masked: HOSTILE },
      })),
    };
    const html = renderTimelinePage(tampered, { now: NOW });
    expect(tags(html)).toEqual(tags(renderTimelinePage(timeline, { now: NOW })));
  });
});

describe('renderListPage', () => {
  const item = (noticeId: string, state: 'reserved' | 'unknown', createdAt: string, escalated = false) => ({
    noticeId,
    channel: 'sms' as const,
    state,
    createdAt,
    deadline: '2026-12-01T10:00:00.000Z',
    attempts: 1,
    ageSeconds: Math.round((NOW.getTime() - Date.parse(createdAt)) / 1000),
    escalated,
  });

  it('oldest first, counts per state, the oldest age, a link per notice', () => {
    const html = renderListPage(
      {
        items: [
          item('ntc_b', 'reserved', '2026-11-30T10:10:00.000Z'),
          item('ntc_a', 'unknown', '2026-11-30T10:00:00.000Z', true),
        ],
        nextCursor: null,
      },
      { now: NOW },
    );
    expect(html.indexOf('data-notice="ntc_a"')).toBeLessThan(html.indexOf('data-notice="ntc_b"'));
    expect(html).toContain('<td data-count="unknown">1</td>');
    expect(html).toContain('<td data-count="reserved">1</td>');
    expect(html).toContain('<td data-oldest-age>15m 00s</td>');
    expect(html).toContain('href="notices/ntc_a"');
    expect(html).toContain('escalated');
  });

  it('uses counts it is given, and escapes ids', () => {
    const html = renderListPage(
      { items: [item(HOSTILE, 'unknown', '2026-11-30T10:00:00.000Z')], nextCursor: 'more' },
      {
        now: NOW,
        counts: { unknown: 7, reserved: 2 },
        noticeHref: (id) => `/console/notices/${encodeURIComponent(id)}`,
      },
    );
    expect(html).toContain('<td data-count="unknown">7</td>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('More channels exist');
  });

  it('shows each channel’s last reason and next step (— from an older server), the recent failures, and reloads when asked', () => {
    const held = {
      ...item('ntc_h', 'reserved', '2026-11-30T10:10:00.000Z'),
      lastReason: {
        reason: 'channel_held',
        at: '2026-11-30T10:11:00.000Z',
        detail: 'twilio held the channel: provider_throttled until 2026-11-30T10:30:00.000Z',
      },
      next: {
        kind: 'held' as const,
        at: '2026-11-30T10:30:00.000Z',
        summary: 'held until 2026-11-30T10:30:00.000Z: twilio provider_throttled',
      },
    };
    const failed = {
      ...item('ntc_f', 'reserved', '2026-11-30T09:00:00.000Z'),
      state: 'failed' as const,
      escalated: true,
      lastReason: { reason: 'deadline_exceeded', at: '2026-11-30T10:05:00.000Z', detail: null },
      next: {
        kind: 'operator' as const,
        at: null,
        summary: "escalated: an operator's call (deadline_exceeded)",
      },
    };
    const html = renderListPage(
      { items: [held, item('ntc_old', 'unknown', '2026-11-30T10:00:00.000Z')], nextCursor: null },
      { now: NOW, failed: { items: [failed], nextCursor: null }, refreshSeconds: 10 },
    );
    expect(html).toContain('<meta http-equiv="refresh" content="10">');
    expect(html).toContain(
      '<code>channel_held: twilio held the channel: provider_throttled until 2026-11-30T10:30:00.000Z</code>',
    );
    expect(html).toContain('data-next="held">held until 2026-11-30T10:30:00.000Z: twilio provider_throttled');
    // An older deployment's answer has neither: a dash.
    expect(html).toMatch(
      /data-notice="ntc_old"[\s\S]*?<td class="why"><code>—<\/code><\/td>\s*<td class="next">—<\/td>/,
    );
    const recent = html.slice(html.indexOf('Failed in the last 24 hours'));
    expect(recent).toContain('data-notice="ntc_f"');
    expect(recent).toContain('escalated');
    expect(recent).toContain('escalated: an operator&#39;s call (deadline_exceeded)');
    expect(renderListPage({ items: [], nextCursor: null }, { now: NOW })).not.toContain(
      'http-equiv="refresh"',
    );
  });

  it('says when nothing is unresolved', () => {
    expect(renderListPage({ items: [], nextCursor: null }, { now: NOW })).toContain('Nothing unresolved.');
  });
});
