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

/**
 * Provider ids that are also words of the core's own vocabulary, where the id test looks for
 * the provider's title instead (case-sensitive): `resend` is the verb, and a value of
 * UNKNOWN_POLICY. Its variables (RESEND_…) are still looked for as they are.
 */
const COMMON_WORDS: Readonly<Record<string, string>> = {
  resend: 'the verb, and an UNKNOWN_POLICY value',
};

/** Folders of provider modules and bindings: a vendor's own text may name its parent company. */
const PROVIDER_FOLDERS = /^(lambdas|lib)\/providers\/[^/]+\//;

describe('providers are modules', () => {
  for (const { descriptor } of PROVIDERS) {
    it(`nothing outside its module, binding and the registries names ${descriptor.id}`, () => {
      const names = [
        descriptor.id in COMMON_WORDS
          ? new RegExp(`\\b${descriptor.title}\\b`)
          : new RegExp(`\\b${descriptor.id}\\b`, 'i'),
        ...descriptor.settings.map((s) => new RegExp(`\\b${s.name}\\b`)),
        ...(descriptor.secretVariable ? [new RegExp(`\\b${descriptor.secretVariable}\\b`)] : []),
      ];
      const offenders = [...files('lambdas'), ...files('lib')]
        .filter((f) => !PROVIDER_FOLDERS.test(f) && !REGISTRIES.includes(f))
        .filter((f) => {
          const text = readFileSync(join(ROOT, f), 'utf8');
          return names.some((name) => name.test(text));
        });
      expect(offenders).toEqual([]);
    });
  }

  it('a provider module imports no other provider module (text about a vendor is its own business)', () => {
    const offenders: string[] = [];
    for (const { descriptor } of PROVIDERS) {
      for (const dir of [`lambdas/providers/${descriptor.id}`, `lib/providers/${descriptor.id}`]) {
        for (const f of files(dir)) {
          const text = readFileSync(join(ROOT, f), 'utf8');
          for (const other of PROVIDERS.filter((p) => p.descriptor.id !== descriptor.id)) {
            if (new RegExp(`from '[./]*/${other.descriptor.id}/`).test(text))
              offenders.push(`${f} → ${other.descriptor.id}`);
          }
        }
      }
    }
    expect(offenders).toEqual([]);
  });

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
