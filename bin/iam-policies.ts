/**
 * Writes `local/iam/role-policies.json`, the role policies the local stack enforces, from the
 * CDK app (`npm run iam:policies`; a few seconds per provider variant); `--check` only compares
 * and exits 1 when the committed file is stale. test/local/iam-policies.test.ts runs the same check.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROLE_POLICIES_FILE } from '../local/iam/enforce.ts';
import { rolePoliciesJson, synthesizeRolePolicies } from '../local/iam/synthesize.ts';

const target = join(import.meta.dirname, '..', ROLE_POLICIES_FILE);
const generated = rolePoliciesJson(synthesizeRolePolicies());

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== generated) {
    console.error(`${ROLE_POLICIES_FILE} is stale: run \`npm run iam:policies\``);
    process.exit(1);
  }
  console.log(`${ROLE_POLICIES_FILE} is up to date`);
} else {
  await writeFile(target, generated);
  console.log(`wrote ${target}`);
}
