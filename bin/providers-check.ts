#!/usr/bin/env node
/**
 * `npm run providers:check [-- --local]`: compares what the provider modules send with what the
 * providers describe about themselves, where a provider publishes such a description. Today: the
 * Infrai-style gateway's discovery surface (`GET {INFRAI_BASE_URL}/discovery/{capability}`,
 * public). `--local` checks against the gateway simulator instead (local/infrai-simulator).
 * Exits 1 when anything does not match; nothing is sent.
 */
import { parseArgs } from 'node:util';
import { descriptor as infrai } from '../lambdas/providers/infrai/descriptor.ts';
import { checkDiscovery } from '../lambdas/providers/infrai/discovery.ts';
import { startInfraiSimulator } from '../local/infrai-simulator/server.ts';

const { values } = parseArgs({ options: { local: { type: 'boolean', default: false } } });
const out = (line: string) => process.stdout.write(`${line}\n`);

const simulator = values.local ? await startInfraiSimulator() : undefined;
const baseUrl =
  simulator?.baseUrl ??
  process.env.INFRAI_BASE_URL ??
  infrai.settings.find((s) => s.name === 'INFRAI_BASE_URL')?.default ??
  '';
let failures = 0;
try {
  out(
    `providers:check ${infrai.id}: ${baseUrl}/discovery/{capability}${simulator ? ' (local simulator)' : ''}`,
  );
  for (const { capability, problems } of await checkDiscovery(baseUrl)) {
    out(
      `  ${problems.length === 0 ? 'ok  ' : 'FAIL'} ${capability}${problems.length ? `: ${problems.join('; ')}` : ''}`,
    );
    if (problems.length > 0) failures += 1;
  }
} finally {
  await simulator?.close();
}
out(
  failures === 0
    ? 'providers:check: every call matches the published schema'
    : `providers:check: ${failures} call(s) differ`,
);
process.exitCode = failures === 0 ? 0 : 1;
