import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README and the docs as a reader meets them: every relative link leads somewhere (the file
 * exists, and an `#anchor` names a heading of that file, by GitHub's slugs; external links are
 * not fetched), and every table renders as a table (one header separator, every row as many
 * cells as the header; a `|` inside a code span splits a cell unless escaped as `\|`).
 */

const ROOT = join(import.meta.dirname, '..', '..');

/** The documents a reader follows links through. */
const DOCUMENTS = [
  'README.md',
  'local/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks and inline code spans (links there are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1 *$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const withoutCode = markdown.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1 *$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const text = (heading as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let slug = base;
    for (let n = 1; slugs.has(slug); n++) slug = `${base}-${n}`;
    slugs.add(slug);
  }
  return slugs;
}

/** `[text](target)` and `![alt](target)` of the prose, as written (title dropped). */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1] as string,
  );
}

/** Why `target`, linked from `file`, leads nowhere; undefined when it resolves (or is external). */
function brokenReason(file: string, target: string, read: (path: string) => string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [path = '', anchor] = target.split('#', 2);
  const absolute = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path));
  if (!absolute.startsWith(ROOT)) return 'outside the repository';
  if (!existsSync(absolute)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(absolute).isDirectory() || !absolute.endsWith('.md'))
    return 'an anchor into a file that is not markdown';
  const slugs = headingSlugs(read(relative(ROOT, absolute)));
  return slugs.has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `no heading #${anchor}`;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** GFM's cells of a table row: split on pipes not escaped with a backslash. */
function cells(row: string): number {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/).length;
}

const SEPARATOR = /^ *\|?( *:?-+:? *\|)+( *:?-+:? *)?$/;

/** What is wrong with the tables of `markdown`, as `line N: …`. */
function tableProblems(markdown: string): string[] {
  const problems: string[] = [];
  const lines = markdown
    .replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1 *$/gm, (block) => block.replace(/[^\n]/g, ''))
    .split('\n');
  for (let i = 0; i < lines.length; i++) {
    const header = lines[i] as string;
    const separator = lines[i + 1] ?? '';
    if (!header.trim().startsWith('|') || !SEPARATOR.test(separator)) continue;
    const width = cells(header);
    if (cells(separator) !== width)
      problems.push(`line ${i + 2}: separator of ${cells(separator)} cells, header ${width}`);
    let j = i + 2;
    for (; j < lines.length && (lines[j] as string).trim().startsWith('|'); j++) {
      const row = lines[j] as string;
      if (SEPARATOR.test(row)) problems.push(`line ${j + 1}: a second separator row`);
      else if (cells(row) !== width) problems.push(`line ${j + 1}: ${cells(row)} cells, header ${width}`);
    }
    i = j - 1;
  }
  return problems;
}

describe('links in the README and the docs', () => {
  it('every relative link resolves to a file, and every anchor to a heading of it', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of DOCUMENTS) {
      for (const target of linkTargets(read(file))) {
        checked++;
        const reason = brokenReason(file, target, read);
        if (reason) broken.push(`${file}: (${target}) ${reason}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('every table has one separator row and as many cells in each row as in its header', () => {
    const problems = DOCUMENTS.flatMap((file) => tableProblems(read(file)).map((p) => `${file} ${p}`));
    expect(problems).toEqual([]);
  });

  it('the table check finds a doubled separator, a short row, and a pipe in a code span', () => {
    const table = (...rows: string[]) => ['| a | b |', '| - | - |', ...rows].join('\n');
    expect(tableProblems(table('| 1 | 2 |', '| `x\\|y` | 3 |'))).toEqual([]);
    expect(tableProblems(table('| --- | --- |', '| 1 | 2 |'))).toEqual(['line 3: a second separator row']);
    expect(tableProblems(table('| 1 |'))).toEqual(['line 3: 1 cells, header 2']);
    expect(tableProblems(table('| `x|y` | 3 |'))).toEqual(['line 3: 3 cells, header 2']);
    expect(tableProblems(['```', '| a | b |', '| - | - |', '| 1 |', '```'].join('\n'))).toEqual([]);
  });

  it('the check finds a missing file, a missing heading, and accepts what GitHub would', () => {
    const doc = [
      '# Notes',
      '## Settling an `unknown`: `POST /v1/notices/{noticeId}/cancel`',
      '## 4. After the first deploy',
      '## Notes',
      '```bash',
      '# not a heading',
      'see [not a link](nowhere.md)',
      '```',
      'See [a](missing.md), [b](#no-such-heading), [c](#notes-1), [d](https://example.com/x#y), `[e](x.md)`.',
    ].join('\n');
    expect(linkTargets(doc)).toEqual([
      'missing.md',
      '#no-such-heading',
      '#notes-1',
      'https://example.com/x#y',
    ]);
    expect([...headingSlugs(doc)]).toEqual([
      'notes',
      'settling-an-unknown-post-v1noticesnoticeidcancel',
      '4-after-the-first-deploy',
      'notes-1',
    ]);
    const fake = (text: string) => () => text;
    expect(brokenReason('docs/x.md', 'missing.md', fake(doc))).toBe('no such file');
    expect(brokenReason('README.md', '#no-such-heading', fake(doc))).toBe('no heading #no-such-heading');
    expect(brokenReason('README.md', '#notes-1', fake(doc))).toBeUndefined();
    expect(brokenReason('docs/api.md', '../local/README.md#services', read)).toBeUndefined();
    expect(brokenReason('docs/api.md', 'openapi.json#paths', read)).toBe(
      'an anchor into a file that is not markdown',
    );
  });
});
