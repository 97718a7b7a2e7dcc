import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isMainModule } from '../process-utils.ts';

const run = promisify(execFile);

// The jar ships inside this npm package; `npm pack` + extracting one folder avoids the
// package's ~350 MB dependency tree (see shared/reference/local-emulators.md).
const PACKAGE_SPEC = 'amplify-dynamodb-simulator@2.9.30';

// Anchored to this file rather than cwd so tests, scripts and the local stack share one cache
// whatever directory they are started from.
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const cacheDir = join(repoRoot, '.local', 'ddb');
const emulatorDir = join(cacheDir, 'emulator');

function isComplete(dir: string): boolean {
  return existsSync(join(dir, 'DynamoDBLocal.jar')) && isDirectory(join(dir, 'DynamoDBLocal_lib'));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error ? String(error.code) : undefined;
}

/**
 * Returns the absolute path of the folder holding `DynamoDBLocal.jar` and `DynamoDBLocal_lib/`,
 * downloading it on first use.
 */
export async function ensureDynamoDbLocal(): Promise<string> {
  if (isComplete(emulatorDir)) return emulatorDir;

  await mkdir(cacheDir, { recursive: true });
  // Staging inside the cache dir keeps the final rename on one filesystem, which is what
  // makes it atomic: other processes see either no folder or a complete one.
  const staging = await mkdtemp(join(cacheDir, 'tmp-'));
  try {
    const { stdout } = await run('npm', ['pack', PACKAGE_SPEC, '--silent'], {
      cwd: staging,
      maxBuffer: 1024 * 1024,
    });
    const tarball = stdout.trim().split('\n').pop()?.trim();
    if (!tarball || !existsSync(join(staging, tarball))) {
      throw new Error(`npm pack ${PACKAGE_SPEC} did not produce a tarball (output: ${stdout.trim()})`);
    }
    await run('tar', ['xzf', tarball, 'package/emulator'], { cwd: staging });
    const extracted = join(staging, 'package', 'emulator');
    if (!isComplete(extracted)) {
      throw new Error(`${PACKAGE_SPEC} no longer contains emulator/DynamoDBLocal.jar`);
    }
    await publish(extracted, staging);
    return emulatorDir;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function publish(extracted: string, staging: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(extracted, emulatorDir);
      return;
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // A concurrent caller won the race; its copy is as good as ours.
      if (isComplete(emulatorDir)) return;
      if (attempt > 0) throw error;
      // Only a manual edit leaves a partial folder (ours are published atomically), so move it
      // out of the way instead of asking someone to delete it.
      await rename(emulatorDir, join(staging, 'stale-emulator')).catch(() => {});
    }
  }
}

if (isMainModule(import.meta.url)) {
  ensureDynamoDbLocal().then(
    (dir) => console.log(dir),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
