/**
 * The ledger is one table cut into ports by caller (lambdas/ports/: intent-ledger, open-index,
 * suppressions, batch-records, key-checks, throttle-gate). No use case, handler or wiring module
 * takes the whole: only the adapters that implement it and the `Dependencies` tests build name
 * `LedgerStore`, and the functions are composed from the adapter's per-port parts
 * (lambdas/wiring/ledger.ts), never from the whole-table adapter, which tests, the local stack
 * and benchmarks use.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** May name the whole ledger: the two adapters that implement it, and the type tests build whole. */
const WHOLE_LEDGER_ALLOWED = [
  'lambdas/adapters/dynamodb/dynamodb-ledger-store.ts',
  'lambdas/adapters/memory/memory-ledger-store.ts',
  'lambdas/use-cases/dependencies.ts',
];

function importSpecifiers(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+['"]([^'"]+)['"]/gms)].map(
    (m) => m[1] as string,
  );
}

/** Files of `files` that import a module whose path ends with `target`, or pick `store` off Dependencies. */
function wholeLedgerUsers(files: readonly { path: string; text: string }[], target: string): string[] {
  return files
    .filter(
      ({ text }) =>
        importSpecifiers(text).some((specifier) => specifier.endsWith(target)) ||
        /Pick<\s*Dependencies\s*,[^>]*'store'/.test(text),
    )
    .map(({ path }) => path);
}

function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ path: join(dir, file), text: readFileSync(join(ROOT, dir, file), 'utf8') }));
}

describe('ledger ports cut to their callers', () => {
  const files = sources('lambdas');

  it('only the adapters and the whole Dependencies type name the whole ledger (LedgerStore)', () => {
    expect(files.length).toBeGreaterThan(100);
    const users = wholeLedgerUsers(files, '/ports/ledger-store.port.ts');
    expect(users.filter((path) => !WHOLE_LEDGER_ALLOWED.includes(path))).toEqual([]);
  });

  it('no function is composed from the whole-table adapter', () => {
    expect(wholeLedgerUsers(files, '/dynamodb/dynamodb-ledger-store.ts')).toEqual([]);
  });

  it('the check finds an import of the whole ledger, a type import, and a Pick of its store', () => {
    const found = wholeLedgerUsers(
      [
        { path: 'a.ts', text: "import type { LedgerStore } from '../ports/ledger-store.port.ts';" },
        { path: 'b.ts', text: "import {\n  type LedgerStore,\n} from '../../ports/ledger-store.port.ts';" },
        { path: 'c.ts', text: "deps: Pick<Dependencies, 'clock' | 'store'>," },
        { path: 'd.ts', text: "import type { OpenIndex } from '../ports/open-index.port.ts';" },
      ],
      '/ports/ledger-store.port.ts',
    );
    expect(found).toEqual(['a.ts', 'b.ts', 'c.ts']);
  });
});
