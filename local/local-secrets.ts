import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Secrets the local stack invents on first start and must find again on every later one:
 * - the fingerprint key: a new key changes every destination fingerprint, so suppressions
 *   and duplicate detection would stop matching rows written before;
 * - the envelope key: sealed destinations and variables of open rows become unreadable;
 * - the Twilio simulator's credentials: status callbacks are signed with the auth token, and
 *   a provider lookup after a restart must authenticate against the same account.
 */
export interface LocalSecrets {
  /** Base64 of 32 bytes. */
  readonly fingerprintKey: string;
  /** Base64 of 32 bytes. */
  readonly envelopeKey: string;
  readonly twilio: {
    readonly accountSid: string;
    readonly authToken: string;
    readonly from: string;
  };
}

export const LOCAL_SECRETS_FILE = 'local-secrets.json';

/** Twilio's documented test "From" number; the simulator accepts any sender it is told to. */
const SIMULATOR_FROM = '+15005550006';

function generate(): LocalSecrets {
  return {
    fingerprintKey: randomBytes(32).toString('base64'),
    envelopeKey: randomBytes(32).toString('base64'),
    twilio: {
      accountSid: `AC${randomBytes(16).toString('hex')}`,
      authToken: randomBytes(16).toString('hex'),
      from: SIMULATOR_FROM,
    },
  };
}

function isKey32(value: unknown): value is string {
  return typeof value === 'string' && Buffer.from(value, 'base64').length === 32;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** Keeps every valid field of `stored` and fills the rest from `fresh`. */
function merge(stored: unknown, fresh: LocalSecrets): { secrets: LocalSecrets; complete: boolean } {
  const s = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>;
  const t = (typeof s.twilio === 'object' && s.twilio !== null ? s.twilio : {}) as Record<string, unknown>;
  const secrets: LocalSecrets = {
    fingerprintKey: isKey32(s.fingerprintKey) ? s.fingerprintKey : fresh.fingerprintKey,
    envelopeKey: isKey32(s.envelopeKey) ? s.envelopeKey : fresh.envelopeKey,
    twilio: {
      accountSid: nonEmpty(t.accountSid) ? t.accountSid : fresh.twilio.accountSid,
      authToken: nonEmpty(t.authToken) ? t.authToken : fresh.twilio.authToken,
      from: nonEmpty(t.from) ? t.from : fresh.twilio.from,
    },
  };
  const complete =
    secrets.fingerprintKey === s.fingerprintKey &&
    secrets.envelopeKey === s.envelopeKey &&
    secrets.twilio.accountSid === t.accountSid &&
    secrets.twilio.authToken === t.authToken &&
    secrets.twilio.from === t.from;
  return { secrets, complete };
}

/**
 * Reads `$dataDir/local-secrets.json`, creating it (mode 0600) or completing missing fields.
 * A file that exists but is not JSON is an error rather than something to overwrite: replacing
 * the keys would silently orphan every sealed envelope in the ledger.
 */
export async function loadLocalSecrets(dataDir: string): Promise<LocalSecrets> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, LOCAL_SECRETS_FILE);
  // Two attempts: the second only runs when another process created the file between our
  // read and our write, and then it reads that process's keys.
  for (let attempt = 0; ; attempt++) {
    const stored = await readStored(path);
    const { secrets, complete } = merge(stored, generate());
    if (!complete) {
      // Written aside first so a crash mid-write never leaves half a key file behind.
      const staging = `${path}.${process.pid}.tmp`;
      await writeFile(staging, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
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
