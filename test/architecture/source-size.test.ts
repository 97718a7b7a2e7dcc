/**
 * No source file in lambdas/ over 500 lines: past that a file holds more than one concern and is
 * cut by concern (the ledger adapter into lambdas/adapters/dynamodb/ledger/, the intent model
 * into domain/intent.ts, transition.ts and attempt.ts, templates into domain/template-*.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_LINES = 500;

/** Lines as `wc -l` counts them (newline characters). */
function lineCount(text: string): number {
  let count = 0;
  for (const char of text) if (char === '\n') count += 1;
  return count;
}

function oversized(
  files: readonly { readonly path: string; readonly text: string }[],
  max: number,
): string[] {
  return files.flatMap(({ path, text }) => {
    const lines = lineCount(text);
    return lines > max ? [`${path}: ${lines} lines`] : [];
  });
}

function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ path: join(dir, file), text: readFileSync(join(ROOT, dir, file), 'utf8') }));
}

describe('source file size', () => {
  it(`no file in lambdas/ is over ${MAX_LINES} lines`, () => {
    const files = sources('lambdas');
    expect(files.length).toBeGreaterThan(100);
    expect(oversized(files, MAX_LINES)).toEqual([]);
  });

  it('the check counts as wc -l does and names each file over the limit', () => {
    const files = [
      { path: 'at-limit.ts', text: 'x\n'.repeat(MAX_LINES) },
      { path: 'over.ts', text: 'x\n'.repeat(MAX_LINES + 1) },
      { path: 'unterminated.ts', text: `${'x\n'.repeat(MAX_LINES)}x` },
    ];
    expect(oversized(files, MAX_LINES)).toEqual([`over.ts: ${MAX_LINES + 1} lines`]);
  });
});
