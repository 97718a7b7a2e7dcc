#!/usr/bin/env node
/**
 * `npm run deploy:check [-- --region <code> …]`: what `cdk deploy` would reject, found offline
 * (lib/deploy-check.ts). Exits 1 on any problem; prints warnings that do not fail it.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSettings, readConfig, SETTINGS_FILE } from '../lib/config.ts';
import { REPO_ROOT } from '../lib/constructs/notice-function.ts';
import {
  ACCEPTED_WARNINGS,
  CHECK_REGIONS,
  checkTargets,
  orderingProblems,
  runCfnLint,
  synthesizeTarget,
  type TargetResult,
} from '../lib/deploy-check.ts';

const { values } = parseArgs({
  options: {
    region: { type: 'string', multiple: true, default: [] },
    outdir: { type: 'string', default: join(REPO_ROOT, '.local', 'deploy-check') },
  },
});

const problems: string[] = [];
const warnings = new Set<string>();
const out = (line: string) => process.stdout.write(`${line}\n`);

out('deploy:check: what `cdk deploy` would reject, found offline');

let fileSettings: Record<string, unknown>;
try {
  fileSettings = loadSettings(join(REPO_ROOT, SETTINGS_FILE));
  const config = readConfig(fileSettings);
  out(
    `settings  ${SETTINGS_FILE}: valid; deploys to ${
      config.target
        ? `${config.target.account}/${config.target.region} (pinned)`
        : 'the CLI’s account and Region'
    }`,
  );
} catch (error) {
  out(`settings  ${(error as Error).message}`);
  out('result    FAILED: fix the settings first');
  process.exit(1);
}

const targets = checkTargets(fileSettings, values.region);
const results: TargetResult[] = [];
for (const [i, target] of targets.entries()) {
  // Bundling does not depend on the environment: once is enough to catch a bundling failure.
  const result = synthesizeTarget(target, {
    outdir: join(values.outdir, target.label.replace(/[^A-Za-z0-9.-]+/g, '_')),
    bundle: i === 0,
  });
  results.push(result);
  const seconds = (result.elapsedMs / 1000).toFixed(1);
  const failing = result.findings.filter(
    (f) => !(f.severity === 'warning' && ACCEPTED_WARNINGS.includes(f.rule)),
  );
  for (const f of result.findings.filter((f) => !failing.includes(f)))
    warnings.add(`${f.rule}: ${f.description}`);
  const status = result.error || failing.length > 0 ? 'FAILED' : 'ok';
  out(
    `synth     ${target.label.padEnd(36)} ${status}  ${seconds} s${i === 0 ? ', bundled' : ''}, ` +
      `${result.stacks.length} stacks, ${failing.length} findings`,
  );
  if (result.error) problems.push(`${target.label}: synthesis failed: ${result.error}`);
  for (const f of failing) {
    problems.push(
      `${target.label}: ${f.severity} ${f.rule} (${f.plugin}) at ${f.constructPaths.join(', ')}: ${f.description}`,
    );
  }
}

const stacks = results.flatMap((r) => r.stacks.map((s) => ({ ...s, label: r.target.label })));
const ordering = stacks.flatMap((s) =>
  orderingProblems(s.template).map((p) => `${s.label} ${s.stackName}: ${p}`),
);
problems.push(...ordering);
out(
  `order     ${stacks.length} templates: ${ordering.length === 0 ? 'ok' : `${ordering.length} problems`} ` +
    '(stage route settings after their routes; SQS event sources and DLQ functions after their grants)',
);

const allRegions = [...new Set([...CHECK_REGIONS, ...values.region])];
const lints = await Promise.all(
  results
    .filter((r) => r.stacks.length > 0)
    .map(async (r) => {
      const region = r.stacks[0]?.region;
      return {
        r,
        lint: await runCfnLint(
          r.stacks.map((s) => s.templatePath),
          region ? [region] : allRegions,
        ),
      };
    }),
);
const first = lints[0]?.lint;
if (!first || first.status === 'missing') {
  out(
    `cfn-lint  skipped: cfn-lint is not installed (${first?.reason ?? 'no templates'}); pip install cfn-lint to run it`,
  );
} else {
  for (const { r, lint } of lints) {
    if (lint.status === 'failed') {
      problems.push(`${r.target.label}: cfn-lint failed: ${lint.reason}`);
      out(`cfn-lint  ${r.target.label.padEnd(36)} FAILED`);
      continue;
    }
    if (lint.status !== 'ran') continue;
    const errors = lint.matches.filter((m) => m.level === 'Error');
    const others = lint.matches.filter((m) => m.level !== 'Error');
    const byRule = new Map<string, number>();
    for (const m of others) byRule.set(m.rule, (byRule.get(m.rule) ?? 0) + 1);
    out(
      `cfn-lint  ${r.target.label.padEnd(36)} ${errors.length === 0 ? 'ok' : 'FAILED'}  ${lint.version}, ` +
        `${r.stacks.length} templates: ${errors.length} errors, ${others.length} warnings` +
        (byRule.size > 0 ? ` (${[...byRule].map(([rule, n]) => `${rule} ×${n}`).join(', ')})` : ''),
    );
    for (const m of errors)
      problems.push(`${r.target.label}: cfn-lint ${m.rule} ${m.file}:${m.line}: ${m.message}`);
  }
}

for (const w of warnings) out(`warning   ${w}`);
for (const p of problems) out(`problem   ${p}`);
out(
  problems.length === 0
    ? `result    ok: ${targets.length} targets, ${warnings.size} warnings (templates in ${values.outdir})`
    : `result    FAILED: ${problems.length} problems`,
);
process.exitCode = problems.length === 0 ? 0 : 1;
