/**
 * The few HTML primitives the pages need. Every value from the API goes through `escapeHtml`
 * (text and attribute values alike: `&<>"'` all encoded), so a detail, a masked destination or
 * an actor can never become markup. Pages carry a Content-Security-Policy that forbids scripts
 * and every external fetch: even an escaping mistake could not load anything or run code.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/** `default-src 'none'`: no script, no network; inline styles only. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

export function page(
  title: string,
  css: string,
  body: string,
  /** `refreshSeconds`: the browser reloads the page this often (no script needed). */
  options: { readonly refreshSeconds?: number } = {},
): string {
  const refresh =
    options.refreshSeconds && Number.isSafeInteger(options.refreshSeconds) && options.refreshSeconds > 0
      ? `\n<meta http-equiv="refresh" content="${options.refreshSeconds}">`
      : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(PAGE_CSP)}">${refresh}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** Shared look: system fonts, no external assets. */
export const BASE_CSS = `
:root { color-scheme: light; --ink:#1d2430; --muted:#5b6575; --line:#d8dde6; --bg:#f7f8fa;
  --ok:#1a7f37; --warn:#9a6700; --bad:#cf222e; --info:#0969da; --person:#8250df; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink); background: var(--bg); }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 8px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.muted { color: var(--muted); }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px; margin: 16px 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.state { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; }
.s-accepted, .s-delivered { color: var(--ok); }
.s-failed { color: var(--bad); }
.s-suppressed { color: var(--muted); }
.s-unknown { color: var(--warn); }
.s-reserved, .s-sending, .s-retry_scheduled { color: var(--info); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
`;

/** The state as a coloured badge. */
export function stateBadge(state: string): string {
  return `<span class="state s-${escapeHtml(state)}">${escapeHtml(state)}</span>`;
}
