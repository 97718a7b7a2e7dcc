import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type sesLocalModule from 'aws-ses-v2-local';

/**
 * aws-ses-v2-local is CommonJS with `exports.default = server`. A default `import` of it is
 * the whole `module.exports` under Node's ESM loader (and tsx) but the function under
 * vitest's interop; `require` gives `module.exports` everywhere.
 */
const require = createRequire(import.meta.url);
const { default: createSesServer } = require('aws-ses-v2-local') as typeof sesLocalModule;

/** The emulator's module-global store (its `dist/store.js`), to persist and restore what it holds. */
const emulatorStore = (
  require('aws-ses-v2-local/dist/store.js') as { getStoreReadonly(): { emails: SesStoredEmail[] } }
).getStoreReadonly();

export interface SesLocal {
  /** `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_SESV2`. */
  readonly endpoint: string;
  readonly port: number;
  /** Drops open keep-alive connections too, so it resolves promptly. Idempotent. */
  close(): Promise<void>;
}

/**
 * The account `GetAccount` returns. The emulator reads `AWS_SES_ACCOUNT` (this JSON) on every
 * call and answers 400 unless every field of its schema is present. The quota mirrors a
 * typical new production account (14 messages/s), so rate pacing has a realistic number to
 * start from; the emulator itself never enforces it.
 */
export const DEFAULT_SES_ACCOUNT = {
  DedicatedIpAutoWarmupEnabled: false,
  Details: {
    AdditionalContactEmailAddresses: [] as string[],
    ContactLanguage: 'EN',
    MailType: 'TRANSACTIONAL',
    ReviewDetails: { CaseId: 'local', Status: 'GRANTED' },
    UseCaseDescription: 'notice-ledger local stack',
    WebsiteURL: 'http://127.0.0.1',
  },
  EnforcementStatus: 'HEALTHY',
  ProductionAccessEnabled: true,
  SendingEnabled: true,
  SendQuota: { Max24HourSend: 50_000, MaxSendRate: 14, SentLast24Hours: 0 },
  SuppressionAttributes: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
} as const;

/**
 * Starts aws-ses-v2-local in this process on 127.0.0.1 (an ephemeral port unless `port` is
 * given).
 *
 * In-process because the package exports its server factory: start-up is a few milliseconds
 * instead of a Node child's ~0.7 s. Two consequences of the package's design:
 * - its store is module-global: every emulator started in one process shares one set of
 *   emails, and `clearSesStore` on any of them clears them all;
 * - it reads `AWS_SES_ACCOUNT` (and `SMTP_TRANSPORT`) from this process's environment on each
 *   request, so `DEFAULT_SES_ACCOUNT` is installed there when the variable is unset; set it
 *   yourself beforehand to describe another account.
 */
export async function startSesLocal(options: { port?: number; storeFile?: string } = {}): Promise<SesLocal> {
  process.env.AWS_SES_ACCOUNT ??= JSON.stringify(DEFAULT_SES_ACCOUNT);

  if (options.storeFile) restoreStore(options.storeFile);
  const server: Server = await createSesServer({ host: '127.0.0.1', port: options.port ?? 0 });
  if (options.storeFile) persistStore(server, options.storeFile);
  // Express 5 hands a listen error (EADDRINUSE…) to the callback, which the factory ignores:
  // it resolves with a server that is not listening instead of rejecting.
  if (!server.listening) {
    throw new Error(`aws-ses-v2-local could not listen on 127.0.0.1:${options.port ?? 0}`);
  }
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * With a store file, what the emulator holds survives a restart (and a kill -9): each email it
 * stores is appended to the file (one JSON line) before the response that reports it leaves,
 * and the file is loaded into the store at start. Only for the stack's own emulator: the store
 * is module-global, so several emulators in one process share it.
 */
function restoreStore(file: string): void {
  if (!existsSync(file)) return;
  const known = new Set(emulatorStore.emails.map((e) => e.messageId));
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const email = JSON.parse(line) as SesStoredEmail;
      if (!known.has(email.messageId)) emulatorStore.emails.push(email);
    } catch {
      // A line cut short by a kill -9 mid-append: the response for it never left either.
    }
  }
}

function persistStore(server: Server, file: string): void {
  let persisted = emulatorStore.emails.length;
  // Runs before express's own listener, so `end` is wrapped before express can answer: the email
  // is on disk before its 200 is.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const emails = emulatorStore.emails;
      if (emails.length < persisted) {
        // The store was cleared (POST /clear-store): so is the file.
        writeFileSync(file, emails.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
        persisted = emails.length;
      }
      if (emails.length > persisted) {
        appendFileSync(
          file,
          emails
            .slice(persisted)
            .map((e) => `${JSON.stringify(e)}\n`)
            .join(''),
          { mode: 0o600 },
        );
        persisted = emails.length;
      }
      return end(...args);
    }) as ServerResponse['end'];
  });
}

/** One email as `GET /store` reports it; only the fields tests and the local event feed use. */
export interface SesStoredEmail {
  readonly messageId: string;
  readonly from: string;
  readonly replyTo: readonly string[];
  readonly destination: {
    readonly to: readonly string[];
    readonly cc: readonly string[];
    readonly bcc: readonly string[];
  };
  readonly subject: string;
  readonly body: { readonly text?: string; readonly html?: string };
  readonly headers?: readonly { readonly name: string; readonly value: string }[];
  /** Epoch seconds (floored) when the emulator accepted it. */
  readonly at: number;
}

const STORE_REQUEST_TIMEOUT_MS = 5000;

/**
 * The emails held by the emulator at `endpoint`, oldest first; with `sinceEpochSeconds`, only
 * those stored at or after that second (the emulator's own filter, `at >= since`).
 *
 * The emulator keeps neither `EmailTags` nor `ConfigurationSetName`, so an email cannot be
 * matched to an intent from the store alone: match on `messageId` (the SES receipt id).
 */
export async function readSesStore(endpoint: string, sinceEpochSeconds?: number): Promise<SesStoredEmail[]> {
  const url = new URL('/store', endpoint);
  // The emulator rejects anything but a plain integer, and then crashes that request by
  // answering twice; never send it one.
  if (sinceEpochSeconds !== undefined) url.searchParams.set('since', String(Math.floor(sinceEpochSeconds)));
  const response = await fetch(url, { signal: AbortSignal.timeout(STORE_REQUEST_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET /store answered ${response.status}`);
  const body: unknown = await response.json();
  const emails = (body as { emails?: unknown } | null)?.emails;
  if (!Array.isArray(emails)) throw new Error('GET /store: response has no emails array');
  return emails as SesStoredEmail[];
}

/** Empties the emulator's store (emails and templates). */
export async function clearSesStore(endpoint: string): Promise<void> {
  const response = await fetch(new URL('/clear-store', endpoint), {
    method: 'POST',
    signal: AbortSignal.timeout(STORE_REQUEST_TIMEOUT_MS),
  });
  // Drain the body so the keep-alive socket is released.
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`POST /clear-store answered ${response.status}`);
}
