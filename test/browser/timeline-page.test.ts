import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderTimelinePage } from '../../client/html/timeline-page.ts';
import { type Browser, launchBrowser } from '../helpers/browser.ts';
import { T0 } from '../helpers/factories.ts';
import { TEST_ACTOR } from '../helpers/ledger-properties.ts';
import { throttledAndResolvedTimeline } from '../helpers/timelines.ts';

/**
 * The timeline page in a real browser (Debian's headless Chromium): opened from a file, as
 * `notice-ledger get <id> --html FILE` leaves it, for a notice whose e-mail went through a 429
 * retry and whose SMS went `unknown` and was settled by an operator.
 *
 * `UPDATE_SCREENSHOTS=1` also writes docs/timeline-page.png.
 */

const HOSTILE = `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`;

let browser: Browser;
let dir: string;
let page: Page;
const requests: string[] = [];

async function open(html: string, name: string): Promise<Page> {
  const file = join(dir, name);
  await writeFile(file, html);
  const p = await browser.context.newPage();
  p.on('request', (r) => requests.push(r.url()));
  await p.goto(pathToFileURL(file).href);
  return p;
}

interface Point {
  seq: number;
  reason: string;
  to: string;
  x: number;
  label: string;
  person: boolean;
}

async function lanePoints(lane: string): Promise<Point[]> {
  const points = page.locator(`[data-lane="${lane}"] .point[data-seq]`);
  const out: Point[] = [];
  for (let i = 0; i < (await points.count()); i++) {
    const point = points.nth(i);
    const box = await point.locator('.dot').boundingBox();
    if (!box) throw new Error(`point ${i} of ${lane} is not rendered`);
    out.push({
      seq: Number(await point.getAttribute('data-seq')),
      reason: String(await point.getAttribute('data-reason')),
      to: String(await point.getAttribute('data-to')),
      x: box.x + box.width / 2,
      label: ((await point.locator('.label').textContent()) ?? '').trim(),
      person: (await point.getAttribute('class'))?.includes('person') ?? false,
    });
  }
  return out;
}

beforeAll(async () => {
  browser = await launchBrowser();
  dir = await mkdtemp(join(tmpdir(), 'nl-page-'));
  page = await open(
    renderTimelinePage(throttledAndResolvedTimeline(), { now: new Date(T0 + 15 * 60_000) }),
    'timeline.html',
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('timeline page in Chromium', () => {
  it('one lane per channel, in the order of the timeline', async () => {
    const lanes = await page
      .locator('[data-lane]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-lane')));
    expect(lanes).toEqual(['email', 'sms']);
    expect(await page.locator('h1').textContent()).toMatch(/^Notice ntc_[a-z2-7]{26}$/);
  });

  it('e-mail: the 429, the wait it advised, the retry as attempt 2, then acceptance; left to right', async () => {
    const points = await lanePoints('email');
    expect(points.map((p) => p.reason)).toEqual([
      'intake',
      'claimed',
      'provider_throttled',
      'claimed',
      'provider_accepted',
      'delivery_reported',
    ]);
    expect(points.map((p) => p.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 1; i < points.length; i++) {
      expect(points[i]?.x, `point ${i + 1} after point ${i}`).toBeGreaterThan(points[i - 1]?.x as number);
    }
    expect(points[1]?.label).toBe('claimed #1');
    expect(points[3]?.label).toBe('claimed #2');
    const wait = page.locator('[data-lane="email"] [data-wait="retry"]');
    await expect(wait.count()).resolves.toBe(1);
    expect(await wait.textContent()).toBe('waited 2.1 s');
    // The bar spans from the throttled point to the retry's claim.
    const bar = await wait.boundingBox();
    expect(bar?.x).toBeCloseTo(points[2]?.x as number, 0);
    expect((bar?.x ?? 0) + (bar?.width ?? 0)).toBeCloseTo(points[3]?.x as number, 0);
  });

  it('sms: unknown for the time it took, then the operator, named, with their reason', async () => {
    const points = await lanePoints('sms');
    expect(points.map((p) => p.reason)).toEqual([
      'intake',
      'claimed',
      'provider_timeout',
      'operator_confirmed_accepted',
    ]);
    const last = points[3] as Point;
    expect(last.person).toBe(true);
    expect(last.to).toBe('accepted');
    expect(last.label).toBe(`operator_confirmed_accepted #1 by ${TEST_ACTOR}`);
    expect(await page.locator('[data-lane="sms"] [data-wait="unknown"]').textContent()).toBe(
      'unknown for 11m 49s',
    );
    const row = page.locator('[data-channel="sms"] table.transitions tr[data-seq="4"]');
    expect(await row.locator('td.actor').textContent()).toBe(TEST_ACTOR);
    expect(await row.locator('td.detail').textContent()).toBe(
      'seen in provider console | evidence: ticket OPS-7',
    );
    // Both lanes share one time axis: the operator acted long after the e-mail was delivered.
    const email = await lanePoints('email');
    expect(last.x).toBeGreaterThan(email[email.length - 1]?.x as number);
  });

  it('loads nothing but the file, and hostile text stays text', async () => {
    expect(requests.every((url) => url.startsWith('file://'))).toBe(true);
    const hostile = await open(
      renderTimelinePage(throttledAndResolvedTimeline({ operatorWords: HOSTILE }), {
        now: new Date(T0 + 15 * 60_000),
      }),
      'hostile.html',
    );
    expect(await hostile.locator('img, script').count()).toBe(0);
    expect(await hostile.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await hostile.locator('[data-channel="sms"] tr[data-seq="4"] td.detail').textContent()).toContain(
      HOSTILE,
    );
    expect(requests.every((url) => url.startsWith('file://'))).toBe(true);
    await hostile.close();
  });

  it('says where the story was read: the table, or the archive for a channel past the hot window', async () => {
    expect(await page.locator('header [data-source]').getAttribute('data-source')).toBe('ledger');
    expect(await page.locator('.archived').count()).toBe(0);
    const archived = await open(
      renderTimelinePage(throttledAndResolvedTimeline({ archived: ['email'] }), {
        now: new Date(T0 + 40 * 86_400_000),
      }),
      'archived.html',
    );
    const header = archived.locator('header [data-source]');
    expect(await header.getAttribute('data-source')).toBe('mixed');
    expect(await header.textContent()).toContain('archive');
    const badge = archived.locator('[data-channel="email"] h2 .archived');
    expect(await badge.isVisible()).toBe(true);
    expect(await badge.textContent()).toBe('archived');
    expect(await archived.locator('[data-channel="sms"] h2 .archived').count()).toBe(0);
    expect(await archived.locator('[data-channel="email"] [data-next]').textContent()).toBe(
      'nothing: delivered (archived: past the hot window, final)',
    );
    expect(await archived.locator('[data-channel="email"] [data-source]').textContent()).toBe(
      'the archive (final)',
    );
    // The same story: the archived lane draws every transition.
    expect(await archived.locator('[data-lane="email"] .point[data-seq]').count()).toBe(6);
    await archived.close();
  });

  it('renders to a screenshot', async () => {
    const shot = await page.screenshot({ fullPage: true });
    expect(shot.byteLength).toBeGreaterThan(10_000);
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await writeFile(join(import.meta.dirname, '..', '..', 'docs', 'timeline-page.png'), shot);
    }
  });
});
