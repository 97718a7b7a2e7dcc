/**
 * A provider is a folder: outside its own module, its CDK binding and the two registries, no
 * file in lambdas/ or lib/ names it (its id or any of its variables). And the registries agree:
 * every runtime module has a CDK binding and a local part, and the other way round.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { PROVIDER_BINDINGS } from '../../lib/providers/registry.ts';
import { LOCAL_PROVIDERS } from '../../local/providers/registry.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

const REGISTRIES = ['lambdas/providers/registry.ts', 'lib/providers/registry.ts'];

describe('providers are modules', () => {
  for (const { descriptor } of PROVIDERS) {
    it(`nothing outside its module, binding and the registries names ${descriptor.id}`, () => {
      const own = [`lambdas/providers/${descriptor.id}/`, `lib/providers/${descriptor.id}/`];
      const names = [
        new RegExp(`\\b${descriptor.id}\\b`, 'i'),
        ...descriptor.settings.map((s) => new RegExp(`\\b${s.name}\\b`)),
        ...(descriptor.secretVariable ? [new RegExp(`\\b${descriptor.secretVariable}\\b`)] : []),
      ];
      const offenders = [...files('lambdas'), ...files('lib')]
        .filter((f) => !own.some((prefix) => f.startsWith(prefix)) && !REGISTRIES.includes(f))
        .filter((f) => {
          const text = readFileSync(join(ROOT, f), 'utf8');
          return names.some((name) => name.test(text));
        });
      expect(offenders).toEqual([]);
    });
  }

  it('every runtime module has a CDK binding and a local part, and only those', () => {
    const ids = PROVIDERS.map((p) => p.descriptor.id).sort();
    expect(PROVIDER_BINDINGS.map((b) => b.descriptor.id).sort()).toEqual(ids);
    expect(LOCAL_PROVIDERS.map((p) => p.id).sort()).toEqual(ids);
    // One descriptor object, read by both sides.
    for (const binding of PROVIDER_BINDINGS) {
      expect(PROVIDERS.find((p) => p.descriptor.id === binding.descriptor.id)?.descriptor).toBe(
        binding.descriptor,
      );
    }
  });

  it('each channel has exactly one default provider, and the registry omits a provider by its id', () => {
    for (const channel of ['email', 'sms'] as const) {
      expect(
        PROVIDERS.filter((p) =>
          (p.descriptor.defaultFor as readonly string[] | undefined)?.includes(channel),
        ),
      ).toHaveLength(1);
    }
    const registry = readFileSync(join(ROOT, 'lambdas/providers/registry.ts'), 'utf8');
    for (const { descriptor } of PROVIDERS) {
      expect(registry).toContain(`process.env.NOTICE_LEDGER_OMIT_${descriptor.id.toUpperCase()}`);
    }
  });
});
