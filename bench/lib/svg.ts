/**
 * Hand-written SVG line plots (no plotting dependency): one or more panels stacked vertically,
 * sharing the x axis, each with its own y axis and legend.
 */

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

export interface Panel {
  readonly yLabel: string;
  readonly series: readonly Series[];
  /** Horizontal reference lines, e.g. a provider's rate. */
  readonly references?: readonly { readonly y: number; readonly label: string }[];
}

const WIDTH = 900;
const PANEL_HEIGHT = 260;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 45 };

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** 1, 2 or 5 × 10^k steps giving about `count` ticks. */
function ticks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const out: number[] = [0];
  // Up to the first tick at or above max, so the axis always covers the data.
  while ((out[out.length - 1] as number) < max - step * 1e-9) {
    out.push(Number((out.length * step).toPrecision(12)));
  }
  return out;
}

function format(value: number): string {
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  return String(Number(value.toPrecision(4)));
}

export function figure(options: {
  readonly title: string;
  readonly xLabel: string;
  readonly panels: readonly Panel[];
  readonly note?: string;
}): string {
  const height = options.panels.length * PANEL_HEIGHT + 30 + (options.note ? 20 : 0);
  const allX = options.panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x)));
  const xMax = Math.max(1, ...allX);
  const xTicks = ticks(xMax, 8);
  const xEnd = xTicks[xTicks.length - 1] ?? xMax;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
  ];
  options.panels.forEach((panel, index) => {
    const top = 30 + index * PANEL_HEIGHT + MARGIN.top - 20;
    const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom + 10;
    const yMaxData = Math.max(
      1,
      ...panel.series.flatMap((s) => s.points.map(([, y]) => y)),
      ...(panel.references ?? []).map((r) => r.y),
    );
    const yTicks = ticks(yMaxData * 1.05, 5);
    const yEnd = yTicks[yTicks.length - 1] ?? yMaxData;
    const sx = (x: number) => MARGIN.left + (x / xEnd) * plotWidth;
    const sy = (y: number) => top + plotHeight - (y / yEnd) * plotHeight;
    parts.push(`<g>`);
    for (const t of yTicks) {
      parts.push(
        `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${sy(t)}" y2="${sy(t)}" stroke="#e5e5e5"/>`,
        `<text x="${MARGIN.left - 6}" y="${sy(t) + 4}" text-anchor="end" fill="#444">${format(t)}</text>`,
      );
    }
    for (const t of xTicks) {
      parts.push(
        `<line x1="${sx(t)}" x2="${sx(t)}" y1="${top}" y2="${top + plotHeight}" stroke="#f0f0f0"/>`,
        `<text x="${sx(t)}" y="${top + plotHeight + 16}" text-anchor="middle" fill="#444">${format(t)}</text>`,
      );
    }
    parts.push(
      `<rect x="${MARGIN.left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
      `<text transform="translate(${18} ${top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(panel.yLabel)}</text>`,
    );
    for (const ref of panel.references ?? []) {
      parts.push(
        `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${sy(ref.y)}" y2="${sy(ref.y)}" stroke="#555" stroke-dasharray="2 4"/>`,
        `<text x="${MARGIN.left + plotWidth - 4}" y="${sy(ref.y) - 4}" text-anchor="end" fill="#555">${escapeXml(ref.label)}</text>`,
      );
    }
    for (const s of panel.series) {
      if (s.points.length === 0) continue;
      const d = s.points
        .map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
        .join('');
      parts.push(
        `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"${s.dashed ? ' stroke-dasharray="6 3"' : ''}/>`,
      );
    }
    // Legend in the top-right corner, drawn last on a white box so no line runs through it.
    const legendX = MARGIN.left + plotWidth - 190;
    parts.push(
      `<rect x="${legendX - 6}" y="${top + 4}" width="192" height="${panel.series.length * 16 + 8}" fill="white" fill-opacity="0.9" stroke="#ddd"/>`,
    );
    panel.series.forEach((s, k) => {
      parts.push(
        `<line x1="${legendX}" x2="${legendX + 24}" y1="${top + 14 + k * 16}" y2="${top + 14 + k * 16}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 3"' : ''}/>`,
        `<text x="${legendX + 30}" y="${top + 18 + k * 16}">${escapeXml(s.name)}</text>`,
      );
    });
    if (index === options.panels.length - 1) {
      parts.push(
        `<text x="${MARGIN.left + plotWidth / 2}" y="${top + plotHeight + 34}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
      );
    }
    parts.push(`</g>`);
  });
  if (options.note) {
    parts.push(
      `<text x="${MARGIN.left}" y="${height - 8}" fill="#555" font-size="11">${escapeXml(options.note)}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export function linePlot(options: {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}): string {
  return figure({
    title: options.title,
    xLabel: options.xLabel,
    panels: [{ yLabel: options.yLabel, series: options.series }],
  });
}
