import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Secrets the local stack invents on first start and must find again on every later one:
 * - the fingerprint key: a new key changes every destination fingerprint, so suppressions
 *   and duplicate detection would stop matching rows written before;
 * - the envelope key: sealed destinations and variables of open rows become unreadable;
 * - each simulated provider's credentials (under its id, e.g. `twilio`): callbacks are signed
 *   with them, and a lookup after a restart must authenticate against the same account.
 */
export interface LocalSecrets {
  /** Base64 of 32 bytes. */
  readonly fingerprintKey: string;
  /** Base64 of 32 bytes. */
  readonly envelopeKey: string;
  /** Credentials per simulated provider id. */
  readonly providers: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** Fresh credentials for a simulated provider (local/providers/*.ts). */
export type CredentialGenerator = () => Record<string, string>;

export const LOCAL_SECRETS_FILE = 'local-secrets.json';

function generate(generators: Readonly<Record<string, CredentialGenerator>>): LocalSecrets {
  return {
    fingerprintKey: randomBytes(32).toString('base64'),
    envelopeKey: randomBytes(32).toString('base64'),
    providers: Object.fromEntries(Object.entries(generators).map(([id, make]) => [id, make()])),
  };
}

function isKey32(value: unknown): value is string {
  return typeof value === 'string' && Buffer.from(value, 'base64').length === 32;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** Keeps every valid field of `stored` and fills the rest from `fresh`; other stored entries stay. */
function merge(
  stored: unknown,
  fresh: LocalSecrets,
): { secrets: LocalSecrets; file: Record<string, unknown>; complete: boolean } {
  const s = record(stored);
  let complete = isKey32(s.fingerprintKey) && isKey32(s.envelopeKey);
  const providers: Record<string, Record<string, string>> = {};
  for (const [id, freshFields] of Object.entries(fresh.providers)) {
    const kept = record(s[id]);
    providers[id] = Object.fromEntries(
      Object.entries(freshFields).map(([field, value]) => {
        if (nonEmpty(kept[field])) return [field, kept[field]];
        complete = false;
        return [field, value];
      }),
    );
  }
  const secrets: LocalSecrets = {
    fingerprintKey: isKey32(s.fingerprintKey) ? s.fingerprintKey : fresh.fingerprintKey,
    envelopeKey: isKey32(s.envelopeKey) ? s.envelopeKey : fresh.envelopeKey,
    providers,
  };
  // One object per provider at the top level (`"twilio": { … }`), as the file has always held them.
  const file = {
    ...s,
    fingerprintKey: secrets.fingerprintKey,
    envelopeKey: secrets.envelopeKey,
    ...providers,
  };
  return { secrets, file, complete };
}

/**
 * Reads `$dataDir/local-secrets.json`, creating it (mode 0600) or completing missing fields.
 * A file that exists but is not JSON is an error rather than something to overwrite: replacing
 * the keys would silently orphan every sealed envelope in the ledger.
 */
export async function loadLocalSecrets(
  dataDir: string,
  generators: Readonly<Record<string, CredentialGenerator>> = {},
): Promise<LocalSecrets> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, LOCAL_SECRETS_FILE);
  // Two attempts: the second only runs when another process created the file between our
  // read and our write, and then it reads that process's keys.
  for (let attempt = 0; ; attempt++) {
    const stored = await readStored(path);
    const { secrets, file, complete } = merge(stored, generate(generators));
    if (!complete) {
      // Written aside first so a crash mid-write never leaves half a key file behind.
      const staging = `${path}.${process.pid}.tmp`;
      await writeFile(staging, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      try {
        if (stored === undefined) {
          // link() fails if the name exists: of two stacks starting together, one set of keys wins.
          await link(staging, path);
        } else {
          await rename(staging, path);
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
        continue;
      } finally {
        await rm(staging, { force: true });
      }
    }
    // A copied or hand-edited file may have lost its mode; these keys guard health data.
    await chmod(path, 0o600);
    return secrets;
  }
}

async function readStored(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(
      `${path} is not valid JSON (${(error as Error).message}); fix or remove it ` +
        '(removing it makes existing envelopes and fingerprints unusable)',
    );
  }
}
