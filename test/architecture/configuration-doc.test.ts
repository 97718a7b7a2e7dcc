import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, configurationDoc } from '../../bin/configuration-doc.ts';
import { deployKeyOf, OPERATOR_SETTINGS, WIRING_SETTINGS } from '../../lambdas/contract/settings.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { SETTING_DEFAULTS } from '../../lib/config.ts';
import { LOCAL_SETTINGS } from '../../local/settings.ts';

/** docs/configuration.md is generated from the settings data; these keep it so. */
const committed = readFileSync(CONFIGURATION_DOC, 'utf8');

/** The text between `## title` and the next `## `. */
function section(title: string): string {
  const start = committed.indexOf(`\n## ${title}\n`);
  expect(start, title).toBeGreaterThan(0);
  const end = committed.indexOf('\n## ', start + 1);
  return committed.slice(start, end < 0 ? undefined : end);
}

/** The first cells (`NAME`) of a section's table rows. */
function listed(text: string, column = 0): string[] {
  return [...text.matchAll(/^\| (.*) \|$/gm)]
    .map((m) => ((m[1] as string).split(' | ')[column] as string).trim())
    .flatMap((c) => [...c.matchAll(/^`([^`]+)`$/g)].map((n) => n[1] as string));
}

describe('docs/configuration.md', () => {
  it('is the generated document (run `npm run docs:config` after changing a setting)', () => {
    expect(committed).toBe(configurationDoc());
  });

  it('lists operator choices and stack wiring apart, each with exactly its group', () => {
    expect(listed(section('Operator choices')).sort()).toEqual(Object.keys(OPERATOR_SETTINGS).sort());
    expect(listed(section('Stack wiring')).sort()).toEqual(Object.keys(WIRING_SETTINGS).sort());
    // Every operator choice shows its deploy key, the variable's camelCase, a key the CDK takes;
    // the wiring table has no deploy key column at all.
    const keys = listed(section('Operator choices'), 1);
    expect(keys).toEqual(Object.keys(OPERATOR_SETTINGS).map(deployKeyOf));
    for (const key of keys) expect(key in SETTING_DEFAULTS, key).toBe(true);
    expect(section('Stack wiring')).toMatch(/^\| variable +\| default +\| meaning +\|$/m);
  });

  it('names every provider variable under its provider, every deploy key and every local variable', () => {
    const providers = section('Provider settings');
    for (const { descriptor } of PROVIDERS) {
      const start = providers.indexOf(`### \`${descriptor.id}\``);
      expect(start, descriptor.id).toBeGreaterThan(0);
      const next = providers.indexOf('\n### ', start + 1);
      const own = providers.slice(start, next < 0 ? undefined : next);
      const names = [
        ...descriptor.settings.map((s) => s.name),
        ...(descriptor.secretVariable ? [descriptor.secretVariable] : []),
      ];
      expect(listed(own).sort(), descriptor.id).toEqual(names.sort());
    }
    const keys = new Set(
      [...committed.matchAll(/^\| (.*) \|$/gm)].flatMap((m) =>
        (m[1] as string)
          .split(' | ')
          .flatMap((c) => [...c.trim().matchAll(/^`([a-z][A-Za-z0-9]*)`$/g)].map((n) => n[1])),
      ),
    );
    for (const key of Object.keys(SETTING_DEFAULTS)) expect(keys.has(key), key).toBe(true);
    const local = listed(section('Local stack only'));
    for (const name of Object.keys(LOCAL_SETTINGS)) expect(local, name).toContain(name);
    expect(local).toContain('LOCAL_<ID>_PORT');
  });
});
