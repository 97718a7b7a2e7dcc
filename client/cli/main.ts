import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { OperatorLimits } from '../../lambdas/edge/operator-requests.ts';
import { type ApiResult, type Channel, NoticeLedgerClient, SigningError, TransportError } from '../client.ts';
import { toIsoDuration } from '../format.ts';
import { renderTimelinePage } from '../html/timeline-page.ts';
import { executeApiRegion, sigV4Signer } from '../sigv4.ts';
import { printEvents } from './events.ts';
import {
  batchText,
  cancelText,
  channelResolvedText,
  listText,
  problemText,
  recordedText,
  suppressionText,
  timelineText,
} from './output.ts';

/**
 * `notice-ledger`: the operator CLI over the typed client (docs/operators.md).
 * Exit codes: 0 success, 1 the API answered a problem (or could not be reached or signed for), 2 usage.
 */

export const DEFAULT_ENDPOINT = 'http://127.0.0.1:3000';
export const ENDPOINT_VARIABLE = 'NOTICE_LEDGER_ENDPOINT';
export const CALLER_VARIABLE = 'NOTICE_LEDGER_CALLER';

export const EXIT = { ok: 0, api: 1, usage: 2 } as const;

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readStdin: () => Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => Date;
  readonly cwd: string;
  /** For tests; default global fetch. */
  readonly fetch?: typeof fetch;
  /** Ends `events --follow` (tests); the CLI itself ends on Ctrl-C. */
  readonly signal?: AbortSignal;
}

export const USAGE = `notice-ledger — operate a notice-ledger HTTP API

usage: notice-ledger <command> [arguments] [options]

commands
  send <file|->                         submit a notice (or {"notices":[…]} as a batch) from a JSON file or stdin
  get <noticeId> [--html FILE]          the timeline; --html writes it as one self-contained page
  list [--state S] [--channel C] [--older-than 10m] [--limit N] [--all]
                                        unresolved channels, oldest first, each with its last reason
                                        and what happens next (S: reserved, sending, retry_scheduled,
                                        unknown, or failed: the last 24 hours, most recent first;
                                        C: email, sms)
  resolve <noticeId> <channel> --outcome accepted|not_sent --reason "…" [--evidence "…"] [--actor name]
                                        settle an unknown channel on your word (recorded with your identity)
  cancel <noticeId> --reason "…" [--actor name]
                                        call off the channels not yet sent
  suppress add|get|remove <channel> <destination> [--reason code] [--actor name]
                                        manage the suppression list, a history (the destination is sent, never
                                        printed)

  --actor names who acts on the local stack (default: local); behind IAM the signed identity is
  the actor and --actor is refused
  events [--follow]                     local stack: the outcome events (docs/outcome-events.md), oldest
                                        first; --follow prints new ones as they come (Ctrl-C ends)
  health                                liveness
  openapi                               the API's OpenAPI document

options
  --endpoint URL     API origin (default $${ENDPOINT_VARIABLE}, else ${DEFAULT_ENDPOINT})
  --sigv4            sign requests with SigV4 (automatic for *.execute-api.<region>.amazonaws.com)
  --profile NAME     AWS profile for the credentials (default: the SDK's chain, AWS_PROFILE)
  --region REGION    signing region (default: from the execute-api host, else AWS_REGION)
  --as ARN           local stack only: call as this IAM principal (default $${CALLER_VARIABLE}, else
                     the local operator); behind IAM your signed identity is the caller
  --json             print the API's JSON body instead of a table
  --timeout MS       per request (default 30000)
  -h, --help         this text

exit codes: 0 success, 1 API problem (title, status and field errors printed) or no answer
  (unreachable, or no credentials to sign with), 2 usage
`;

class UsageError extends Error {}

const OPTIONS = {
  endpoint: { type: 'string' },
  sigv4: { type: 'boolean' },
  profile: { type: 'string' },
  region: { type: 'string' },
  as: { type: 'string' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  html: { type: 'string' },
  state: { type: 'string' },
  channel: { type: 'string' },
  'older-than': { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  outcome: { type: 'string' },
  reason: { type: 'string' },
  evidence: { type: 'string' },
  actor: { type: 'string' },
  follow: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Which options each command takes, beyond the global ones; anything else is a usage error. */
const COMMAND_OPTIONS: Readonly<Record<string, readonly (keyof Values)[]>> = {
  send: [],
  get: ['html'],
  list: ['state', 'channel', 'older-than', 'limit', 'all'],
  resolve: ['outcome', 'reason', 'evidence', 'actor'],
  cancel: ['reason', 'actor'],
  suppress: ['reason', 'actor'],
  health: [],
  openapi: [],
  events: ['follow'],
};
const GLOBAL_OPTIONS: readonly (keyof Values)[] = [
  'endpoint',
  'sigv4',
  'profile',
  'region',
  'as',
  'json',
  'timeout',
  'help',
];

function channelArg(value: string | undefined, what = 'channel'): Channel {
  if (value !== 'email' && value !== 'sms') throw new UsageError(`${what} must be email or sms`);
  return value;
}

function positional(args: readonly string[], index: number, name: string): string {
  const value = args[index];
  if (value === undefined || value === '') throw new UsageError(`missing <${name}>`);
  return value;
}

function required(values: Values, name: 'outcome' | 'reason'): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function makeClient(values: Values, io: CliIo): NoticeLedgerClient {
  const endpoint = values.endpoint ?? io.env[ENDPOINT_VARIABLE] ?? DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`--endpoint is not a URL`);
  }
  const hostRegion = executeApiRegion(url.hostname);
  const sign = values.sigv4 === true || hostRegion !== undefined;
  const region = values.region ?? hostRegion ?? io.env.AWS_REGION ?? io.env.AWS_DEFAULT_REGION;
  if (sign && !region) throw new UsageError('SigV4 needs a region: --region or AWS_REGION');
  const caller = values.as ?? (io.env[CALLER_VARIABLE] || undefined);
  if (sign && caller !== undefined) {
    throw new UsageError(
      `--as (${CALLER_VARIABLE}) is for the local stack: behind IAM your signed identity is the caller`,
    );
  }
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw new UsageError('--timeout must be a positive number of milliseconds');
  }
  return new NoticeLedgerClient({
    endpoint,
    signer: sign ? sigV4Signer({ region: region as string, profile: values.profile }) : false,
    timeoutMs,
    caller,
    ...(io.fetch ? { fetch: io.fetch } : {}),
  });
}

async function readJsonInput(source: string, io: CliIo): Promise<unknown> {
  let text: string;
  try {
    text = source === '-' ? await io.readStdin() : await readFile(resolve(io.cwd, source), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${source}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${source} is not JSON`);
  }
}

/** Prints a result: the body (`--json`) or `human(body)`; a problem on stderr. Answers the exit code. */
function report<T>(
  result: ApiResult<T>,
  values: Values,
  io: CliIo,
  human: (body: T, status: number) => string,
): number {
  if (!result.ok) {
    if (values.json) io.stdout(`${JSON.stringify(result.problem, null, 2)}\n`);
    io.stderr(`${problemText(result.problem, result.status)}\n`);
    return EXIT.api;
  }
  io.stdout(
    values.json ? `${JSON.stringify(result.body, null, 2)}\n` : `${human(result.body, result.status)}\n`,
  );
  return EXIT.ok;
}

/**
 * The states `list --state` takes: the unresolved ones, and `failed` (the last 24 hours', most
 * recent first); GET /v1/notices refuses others.
 */
const LISTABLE = ['reserved', 'sending', 'retry_scheduled', 'unknown', 'failed'] as const;

/**
 * The largest `--limit` the API takes. The client may import only types from the service, so the
 * value is written here and its type ties it to the server's: a change there fails the type check.
 */
const LIST_MAX_LIMIT: (typeof OperatorLimits)['listMaxLimit'] = 200;

/** `--limit`: a whole number from 1 to LIST_MAX_LIMIT, checked before anything is sent. */
function limitOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > LIST_MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${LIST_MAX_LIMIT}`);
  return String(n);
}

/**
 * The file `get --html` writes, its folder created when missing; checked before the request, so a
 * path that cannot be written is a usage error with nothing sent.
 */
async function htmlTarget(value: string, io: CliIo): Promise<string> {
  const file = resolve(io.cwd, value);
  try {
    await mkdir(dirname(file), { recursive: true });
  } catch (error) {
    throw new UsageError(`cannot write ${file}: ${fsReason(error)}`);
  }
  return file;
}

/** Why a file could not be written, in words (the path is printed beside it). */
function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EEXIST' || code === 'ENOTDIR') return 'a part of its folder path is a file';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

/** `--actor`, where it means something: only an unsigned request (the local stack) names its actor. */
function actorOption(values: Values, client: NoticeLedgerClient): { actor?: string } {
  if (values.actor === undefined) return {};
  if (client.signs) {
    throw new UsageError('--actor is for the local stack: behind IAM your signed identity is the actor');
  }
  return { actor: values.actor };
}

async function dispatch(command: string, args: string[], values: Values, io: CliIo): Promise<number> {
  const client = makeClient(values, io);
  // Read after the answer arrives: an age is relative to when it is printed.
  const now = () => io.now();
  switch (command) {
    case 'health':
      return report(await client.health(), values, io, (body) => body.status);
    case 'openapi':
      return report(await client.openApi(), values, io, (body) => JSON.stringify(body, null, 2));
    case 'send': {
      const input = await readJsonInput(positional(args, 0, 'file|-'), io);
      const isBatch =
        typeof input === 'object' && input !== null && 'notices' in input && Array.isArray(input.notices);
      if (isBatch) {
        const result = await client.submitBatch((input as { notices: unknown[] }).notices);
        const code = report(result, values, io, (body) => batchText(body));
        // A batch answers 200 even when items fail: each failed item is an API problem.
        return code === EXIT.ok && result.ok && result.body.results.some((r) => r.status >= 400)
          ? EXIT.api
          : code;
      }
      return report(await client.submitNotice(input), values, io, recordedText);
    }
    case 'events':
      return printEvents({
        endpoint: values.endpoint ?? io.env[ENDPOINT_VARIABLE] ?? DEFAULT_ENDPOINT,
        follow: values.follow === true,
        json: values.json === true,
        timeoutMs: values.timeout === undefined ? 30_000 : Number(values.timeout),
        stdout: io.stdout,
        fetch: io.fetch ?? fetch,
        signal: io.signal,
      });
    case 'get': {
      const noticeId = positional(args, 0, 'noticeId');
      const file = values.html === undefined ? undefined : await htmlTarget(values.html, io);
      const result = await client.getNotice(noticeId);
      if (result.ok && file !== undefined) {
        try {
          await writeFile(file, renderTimelinePage(result.body, { now: now() }));
        } catch (error) {
          throw new UsageError(`cannot write ${file}: ${fsReason(error)}`);
        }
        io.stderr(`wrote ${file}\n`);
        if (!values.json) return EXIT.ok;
      }
      return report(result, values, io, (body) => timelineText(body, now()));
    }
    case 'list': {
      const olderThan = values['older-than'] === undefined ? undefined : toIsoDuration(values['older-than']);
      if (values['older-than'] !== undefined && olderThan === undefined) {
        throw new UsageError(
          '--older-than must be like 90s, 10m, 2h, 1d, 1w or an ISO 8601 duration (PT10M)',
        );
      }
      const limit = limitOption(values.limit);
      const state = values.state as (typeof LISTABLE)[number] | undefined;
      if (state !== undefined && !LISTABLE.includes(state)) {
        throw new UsageError(
          `--state must be one of ${LISTABLE.join(', ')} (the unresolved states, or failed: the last 24 hours)`,
        );
      }
      const filters = {
        ...(state ? { state } : {}),
        ...(values.channel ? { channel: channelArg(values.channel, '--channel') } : {}),
      };
      const query = { ...filters, ...(olderThan ? { olderThan } : {}), ...(limit ? { limit } : {}) };
      const result = values.all ? await client.listAllNotices(query) : await client.listNotices(query);
      // Nothing older than asked: say how old the oldest match is, so that an empty answer is not
      // read as "nothing open" (one more page of one item, for the human output only).
      const oldestYounger =
        olderThan && !values.json && result.ok && result.body.items.length === 0
          ? await client.listNotices({ ...filters, limit: '1' })
          : undefined;
      return report(result, values, io, (body) =>
        listText(body, now(), {
          ...filters,
          ...(values['older-than'] !== undefined ? { olderThan: values['older-than'] } : {}),
          ...(oldestYounger?.ok ? { oldestYounger: oldestYounger.body.items[0] ?? null } : {}),
        }),
      );
    }
    case 'resolve': {
      const noticeId = positional(args, 0, 'noticeId');
      const channel = channelArg(positional(args, 1, 'channel'));
      const outcome = required(values, 'outcome');
      if (outcome !== 'accepted' && outcome !== 'not_sent')
        throw new UsageError('--outcome must be accepted or not_sent');
      const result = await client.resolveChannel(noticeId, channel, {
        outcome,
        reason: required(values, 'reason'),
        ...(values.evidence !== undefined ? { evidence: values.evidence } : {}),
        ...actorOption(values, client),
      });
      return report(result, values, io, (body) => channelResolvedText(body, now()));
    }
    case 'cancel': {
      const noticeId = positional(args, 0, 'noticeId');
      return report(
        await client.cancelNotice(noticeId, {
          reason: required(values, 'reason'),
          ...actorOption(values, client),
        }),
        values,
        io,
        cancelText,
      );
    }
    case 'suppress': {
      const action = positional(args, 0, 'add|get|remove');
      const channel = channelArg(positional(args, 1, 'channel'));
      const destination = positional(args, 2, 'destination');
      if (action === 'get' && (values.reason !== undefined || values.actor !== undefined)) {
        throw new UsageError('--reason and --actor go with suppress add or remove');
      }
      const body = {
        ...(values.reason !== undefined ? { reason: values.reason } : {}),
        ...actorOption(values, client),
      };
      const sent = Object.keys(body).length ? body : undefined;
      switch (action) {
        case 'add': {
          const result = await client.putSuppression(channel, destination, sent);
          return report(
            result,
            values,
            io,
            (entry, status) =>
              `${status === 201 ? 'added' : 'already suppressed (recorded again)'}\n${suppressionText(entry, now())}`,
          );
        }
        case 'get':
          return report(await client.getSuppression(channel, destination), values, io, (entry) =>
            suppressionText(entry, now()),
          );
        case 'remove':
          return report(
            await client.deleteSuppression(channel, destination, sent),
            values,
            io,
            () => 'lifted',
          );
        default:
          throw new UsageError('suppress takes add, get or remove');
      }
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(
      `notice-ledger: ${error instanceof Error ? error.message : String(error)}\nrun notice-ledger --help for usage\n`,
    );
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || command === 'help') {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (!command) {
    io.stderr(USAGE);
    return EXIT.usage;
  }
  try {
    const allowed = COMMAND_OPTIONS[command];
    if (!allowed) throw new UsageError(`unknown command ${command}`);
    const stray = (Object.keys(values) as (keyof Values)[]).filter(
      (name) => values[name] !== undefined && !GLOBAL_OPTIONS.includes(name) && !allowed.includes(name),
    );
    if (stray.length > 0)
      throw new UsageError(`${command} does not take ${stray.map((s) => `--${s}`).join(', ')}`);
    return await dispatch(command, args, values, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`notice-ledger ${command}: ${error.message}\nrun notice-ledger --help for usage\n`);
      return EXIT.usage;
    }
    // Not reached, or not signed: credentials the chain could not find, a profile that does not
    // exist, an STS or SSO endpoint out of reach.
    if (error instanceof TransportError || error instanceof SigningError) {
      io.stderr(`error: ${error.message}\n`);
      return EXIT.api;
    }
    throw error;
  }
}

/** The process entry point (bin/notice-ledger.mjs). */
export async function main(): Promise<void> {
  const code = await runCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    now: () => new Date(),
    cwd: process.cwd(),
  });
  process.exitCode = code;
}
