/**
 * Writes docs/configuration.md from the settings data (`npm run docs:config`); `--check` only
 * compares and exits 1 when the committed file is stale. test/architecture/configuration-doc.test.ts
 * runs the same comparison. Sources: lambdas/contract/settings.ts (operator choices and stack
 * wiring), the provider descriptors and their CDK bindings (lib/providers/), lib/config.ts
 * (deployment-only keys and the deployment defaults) and local/settings.ts (the local stack's own).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDuration } from '../lambdas/contract/duration.ts';
import type { ProviderSettingSpec } from '../lambdas/contract/providers.ts';
import {
  BUNDLE_SWITCH_PREFIX,
  CHANNEL_SETTINGS,
  deployKeyOf,
  OPERATOR_SETTING_NAMES,
  OPERATOR_SETTINGS,
  type Setting,
  WIRING_SETTINGS,
} from '../lambdas/contract/settings.ts';
import { DEPLOYMENT_ONLY_DEFAULTS, DEPLOYMENT_ONLY_MEANINGS, SETTING_DEFAULTS } from '../lib/config.ts';
import { PROVIDER_BINDINGS } from '../lib/providers/registry.ts';
import { SETTINGS_FILE } from '../lib/settings-file.ts';
import { LOCAL_PROVIDERS } from '../local/providers/registry.ts';
import { LOCAL_SETTINGS, type LocalSetting, SERVICE_PORT } from '../local/settings.ts';

export const CONFIGURATION_DOC = join(import.meta.dirname, '..', 'docs', 'configuration.md');

const code = (value: string) => `\`${value}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const width = (text: string) => [...text].length;

/** A table as the repository's formatter (biome) lays it out: every column padded to its widest cell. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const body = [header, ...rows].map((cells) => cells.map(cell));
  const widths = header.map((_, k) => Math.max(3, ...body.map((cells) => width(cells[k] ?? ''))));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, k) => c + ' '.repeat((widths[k] as number) - width(c))).join(' | ')} |`;
  const [head, ...rest] = body as [string[], ...string[][]];
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rest.map(line)];
}

/** A JSON-ish value as the settings file or the environment would carry it. */
function shown(value: unknown): string {
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return '—';
  if (typeof value === 'string') return code(value);
  return code(JSON.stringify(value));
}

const number = (n: number) => (n === Number.MAX_SAFE_INTEGER ? '∞' : String(n));

function range(setting: Setting): string {
  switch (setting.kind) {
    case 'integer':
    case 'number': {
      const own = `${number(setting.min)}–${number(setting.max)}`;
      const deploy = [
        setting.deployMin !== undefined || setting.deployMax !== undefined
          ? `${number(setting.deployMin ?? setting.min)}–${number(setting.deployMax ?? setting.max)}`
          : undefined,
        setting.deployMultipleOf ? `a multiple of ${setting.deployMultipleOf}` : undefined,
      ].filter(Boolean);
      return deploy.length > 0 ? `${own} (deployed: ${deploy.join(', ')})` : own;
    }
    case 'enum':
      return setting.values.map(code).join(', ');
    case 'list':
      return 'comma-separated (deployed: a JSON list)';
    case 'url':
      return 'a URL (deployed: https)';
    case 'text':
      return 'text';
    case 'duration':
      return `an ISO 8601 duration, at least ${formatDuration(setting.minMs)}${setting.deployMinMs ? ` (deployed: at least ${formatDuration(setting.deployMinMs)})` : ''}`;
  }
}

/** The process default, and the deployment's where it differs. */
function defaults(processDefault: unknown, deployDefault: unknown): string {
  const here = shown(processDefault);
  const deployed = shown(deployDefault);
  return here === deployed ? here : `${here} (deployed: ${deployed})`;
}

const PROVIDER_SETTINGS = new Set<string>(Object.values(CHANNEL_SETTINGS).map((c) => c.provider));

function operatorSection(): string[] {
  return [
    '## Operator choices',
    '',
    'What whoever runs a deployment chooses: providers, rates, deadlines, timeouts, policies. In AWS each',
    `is set in \`${SETTINGS_FILE}\` under its deploy key (the variable in camelCase, same unit) and the`,
    'stack hands it to every function under the variable; locally it is the variable itself.',
    '',
    ...table(
      ['variable', 'deploy key', 'default', 'range', 'meaning'],
      OPERATOR_SETTING_NAMES.map((name) => {
        const setting: Setting = OPERATOR_SETTINGS[name];
        const key = deployKeyOf(name);
        // Unset, a channel's provider is the module that declares itself its default, here as in AWS.
        const processDefault = PROVIDER_SETTINGS.has(name) ? SETTING_DEFAULTS[key] : setting.default;
        return [
          code(name),
          code(key),
          defaults(processDefault, SETTING_DEFAULTS[key]),
          range(setting),
          setting.description,
        ];
      }),
    ),
  ];
}

function deploymentOnlySection(): string[] {
  return [
    '## Deployment only',
    '',
    `Keys of \`${SETTINGS_FILE}\` that set no variable: they shape the infrastructure. Providers' own`,
    'deployment-only keys are listed with the provider below; docs/deploy.md has the walkthrough.',
    '',
    ...table(
      ['deploy key', 'default', 'meaning'],
      (Object.keys(DEPLOYMENT_ONLY_DEFAULTS) as (keyof typeof DEPLOYMENT_ONLY_DEFAULTS)[]).map((key) => [
        code(key),
        shown(DEPLOYMENT_ONLY_DEFAULTS[key]),
        DEPLOYMENT_ONLY_MEANINGS[key],
      ]),
    ),
  ];
}

function wiringSection(): string[] {
  return [
    '## Stack wiring',
    '',
    'Names and ARNs of what the stack creates or starts: the CDK sets each on the functions it grants the',
    'resource to, the local stack from the services it starts. Never a deploy key.',
    '',
    ...table(
      ['variable', 'default', 'meaning'],
      Object.entries(WIRING_SETTINGS).map(([name, setting]: [string, Setting]) => [
        code(name),
        shown(setting.default),
        setting.description,
      ]),
    ),
    '',
    `Bundle-time switches, not run-time settings: \`${BUNDLE_SWITCH_PREFIX}<WHAT>\` is defined by`,
    'lib/constructs/bundling.ts when it bundles a function, so that esbuild leaves out the provider modules',
    '(`<ID>`), facets (`TRANSPORT`, `LOOKUP`, `STATUS`, `INBOUND`) and the secrets adapter (`SECRETS`) the',
    'function does not carry. Unset everywhere else.',
  ];
}

function providerMeaning(spec: ProviderSettingSpec, note: string | undefined): string {
  const parts = [spec.description];
  if (spec.requiredBy && spec.requiredBy.length > 0)
    parts.push(`required by its ${spec.requiredBy.join(', ')}`);
  if (spec.secretField) parts.push(`AWS: field \`${spec.secretField}\` of its secret`);
  if (note) parts.push(`deployed: ${note}`);
  return parts.join('; ');
}

function providerSection(): string[] {
  const lines = [
    '## Provider settings',
    '',
    'Each provider module declares its variables in its descriptor (lambdas/providers/<id>/descriptor.ts);',
    'its CDK binding (lib/providers/<id>/binding.ts) offers those a deployment chooses under the same',
    "derived keys, and keys of its own that set no variable. A provider's settings are read only where",
    'it is selected (`EMAIL_PROVIDER`, `SMS_PROVIDER`) or retained.',
  ];
  for (const binding of PROVIDER_BINDINGS) {
    const { descriptor, settings } = binding;
    const rows = descriptor.settings.map((spec) => {
      const deployed = settings.variables[spec.name];
      const key = deployKeyOf(spec.name);
      return [
        code(spec.name),
        deployed ? code(key) : '—',
        deployed ? defaults(spec.default, settings.defaults[key]) : shown(spec.default),
        providerMeaning(spec, deployed?.note),
      ];
    });
    if (descriptor.secretVariable) {
      const fields = descriptor.settings.flatMap((s) => (s.secretField ? [code(s.secretField)] : []));
      const deployed = settings.variables[descriptor.secretVariable];
      rows.push([
        code(descriptor.secretVariable),
        deployed ? code(deployKeyOf(descriptor.secretVariable)) : '—',
        '—',
        `AWS: the Secrets Manager secret holding ${fields.join(', ')} (wins over the plain variables); set by the stack` +
          (deployed?.note ? `; deployed: ${deployed.note}` : ''),
      ]);
    }
    for (const [key, setting] of Object.entries(settings.deploymentOnly)) {
      rows.push(['—', code(key), shown(setting.default), `deployment only: ${setting.description}`]);
    }
    lines.push(
      '',
      `### \`${descriptor.id}\`: ${descriptor.title} (${descriptor.channels.join(', ')})`,
      '',
      ...table(['variable', 'deploy key', 'default', 'meaning'], rows),
    );
  }
  return lines;
}

function localSection(): string[] {
  const ids = [...LOCAL_PROVIDERS.map((p) => p.id), 'scheduler'];
  return [
    '## Local stack only',
    '',
    'Read by `npm start` (local/stack.ts) beside everything above, never in AWS.',
    '',
    ...table(
      ['variable', 'default', 'meaning'],
      [
        ...Object.entries(LOCAL_SETTINGS).map(([name, setting]: [string, LocalSetting]) => [
          code(name),
          shown(setting.default),
          setting.description,
        ]),
        [
          code(SERVICE_PORT.pattern),
          shown('0'),
          `${SERVICE_PORT.description} (${ids.map((id) => code(SERVICE_PORT.variable(id))).join(', ')})`,
        ],
      ],
    ),
  ];
}

export function configurationDoc(): string {
  return `${[
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` (bin/configuration-doc.ts) from lambdas/contract/settings.ts,',
    'the provider descriptors and bindings, lib/config.ts and local/settings.ts. Do not edit by hand:',
    'test/architecture/configuration-doc.test.ts fails when this file is stale. -->',
    '',
    'Every variable a process reads, and every key of the deployment settings file. One vocabulary: a',
    "deploy key that sets a variable is the variable's name in camelCase, in the same unit",
    '(`EMAIL_BATCH_MAX` ↔ `emailBatchMax`, `RESEND_FROM` ↔ `resendFrom`). Unset and empty are the same.',
    'Every process checks its settings at start and stops naming each variable that is wrong;',
    '`npm run deploy:check` does the same for the deployment settings.',
    '',
    ...operatorSection(),
    '',
    ...deploymentOnlySection(),
    '',
    ...wiringSection(),
    '',
    ...providerSection(),
    '',
    ...localSection(),
  ].join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const generated = configurationDoc();
  if (process.argv.includes('--check')) {
    const committed = await readFile(CONFIGURATION_DOC, 'utf8').catch(() => '');
    if (committed !== generated) {
      console.error('docs/configuration.md is stale: run `npm run docs:config`');
      process.exit(1);
    }
    console.log('docs/configuration.md is up to date');
  } else {
    await writeFile(CONFIGURATION_DOC, generated);
    console.log(`wrote ${CONFIGURATION_DOC}`);
  }
}
