/**
 * Writes `docs/openapi.json` from the zod schemas (`npm run openapi`); `--check` only compares
 * and exits 1 when the committed file is stale. test/edge/openapi.test.ts runs the same check.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openApiJson } from '../lambdas/handlers/http/openapi.ts';

const target = join(import.meta.dirname, '..', 'docs', 'openapi.json');
const generated = openApiJson();

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== generated) {
    console.error('docs/openapi.json is stale: run `npm run openapi`');
    process.exit(1);
  }
  console.log('docs/openapi.json is up to date');
} else {
  await writeFile(target, generated);
  console.log(`wrote ${target}`);
}
