/**
 * Headless Chromium for browser tests: Debian's `chromium` package (installed by `.ci/run` when
 * missing), driven by playwright-core, which downloads no browser of its own. Each launch gets a
 * fresh user-data directory and every background service that would reach the network is off,
 * so a test sees exactly the page it opened.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { requireIntegrationTier } from './tier.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
] as const;

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Fails loudly when Chromium is missing: a browser test that silently skips proves nothing. */
export async function launchBrowser(): Promise<Browser> {
  requireIntegrationTier('A browser');
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: apt-get install chromium (see .ci/run) or set CHROMIUM_PATH`,
    );
  }
  const userDataDir = await mkdtemp(join(tmpdir(), 'nl-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1400, height: 1000 },
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
