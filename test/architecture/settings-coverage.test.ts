import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE_SWITCH_PREFIX, SETTING_NAMES } from '../../lambdas/contract/settings.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { LOCAL_PROVIDERS } from '../../local/providers/registry.ts';
import { LOCAL_SETTINGS, SERVICE_PORT } from '../../local/settings.ts';

/**
 * Every variable a process reads is declared in the settings data, so docs/configuration.md
 * (generated from it) covers it: the runtime's (lambdas/contract/settings.ts), the providers'
 * (their descriptors) and, for local/, the local stack's own (local/settings.ts).
 */
const ROOT = join(import.meta.dirname, '..', '..');

/** How code here reads a variable: `process.env.X`, `env.X`, `env['X']`, `config.X`, `settings.X`, `setting(ctx, 'X')`. */
const READS = [
  /\b(?:env|e)\s*\??\.\s*([A-Z][A-Z0-9_]{2,})\b/g,
  /\b(?:env|e)\s*\[\s*['"`]([A-Z][A-Z0-9_]{2,})['"`]\s*\]/g,
  /\b(?:config|settings)\s*\??\.\s*([A-Z][A-Z0-9_]{2,})\b/g,
  /\b(?:config|settings)\s*\[\s*['"`]([A-Z][A-Z0-9_]{2,})['"`]\s*\]/g,
  /\bsetting\(\s*[\w.]+\s*,\s*['"`]([A-Z][A-Z0-9_]{2,})['"`]/g,
];

function variablesRead(text: string): Set<string> {
  return new Set(READS.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1] as string)));
}

/** variable → the files that read it, over every .ts file under `dir`. */
function reads(dir: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    for (const name of variablesRead(readFileSync(join(ROOT, dir, file), 'utf8'))) {
      found.set(name, [...(found.get(name) ?? []), `${dir}/${file}`]);
    }
  }
  return found;
}

const RUNTIME = new Set<string>([
  ...SETTING_NAMES,
  ...PROVIDERS.flatMap(({ descriptor }) => [
    ...descriptor.settings.map((s) => s.name),
    ...(descriptor.secretVariable ? [descriptor.secretVariable] : []),
  ]),
]);
const LOCAL = new Set<string>([
  ...Object.keys(LOCAL_SETTINGS),
  ...[...LOCAL_PROVIDERS.map((p) => p.id), 'scheduler'].map(SERVICE_PORT.variable),
]);

const undeclared = (found: Map<string, string[]>, declared: ReadonlySet<string>) =>
  [...found]
    .filter(([name]) => !declared.has(name) && !name.startsWith(BUNDLE_SWITCH_PREFIX))
    .map(([name, files]) => `${name} (${files.join(', ')})`);

describe('every variable read is declared in the settings data', () => {
  it('finds reads in each form the code uses', () => {
    expect([
      ...variablesRead(
        "process.env.A_ONE; env['A_TWO']; e.A_THREE ||= x; config.A_FOUR; context.settings.A_FIVE; setting(context, 'A_SIX'); env?.A_SEVEN",
      ),
    ]).toEqual(['A_ONE', 'A_THREE', 'A_SEVEN', 'A_TWO', 'A_FOUR', 'A_FIVE', 'A_SIX']);
  });

  it('lambdas/: the runtime settings and the providers’ variables, nothing else', () => {
    const found = reads('lambdas');
    // The scan sees the reads it must see (a broken pattern would pass vacuously).
    for (const name of [
      'PROVIDER_TIMEOUT_MS',
      'SENDGRID_EMAIL_ACTIVITY',
      'LEDGER_TABLE_NAME',
      'NOTICE_LEDGER_OMIT_SES',
    ])
      expect(found.has(name), name).toBe(true);
    expect(undeclared(found, RUNTIME)).toEqual([]);
  });

  it('local/: those and the local stack’s own (local/settings.ts), nothing else', () => {
    const found = reads('local');
    for (const name of ['PORT', 'LOCAL_LANES', 'AWS_ENDPOINT_URL_SQS', 'CRASH_POINT', 'FINGERPRINT_KEY'])
      expect(found.has(name), name).toBe(true);
    expect(undeclared(found, new Set([...RUNTIME, ...LOCAL]))).toEqual([]);
  });
});
