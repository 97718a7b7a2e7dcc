/**
 * The stand-in's schedules: kept in a map, and with a state file written (temp file + rename)
 * before a request that changed them is answered and loaded at start, so a stack killed with
 * SIGKILL still fires the retries it had accepted. CreateSchedule, GetSchedule's lookup,
 * ListSchedules and DeleteSchedule act here; the lost-schedule fault is one of its inputs.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  ACCOUNT_ID,
  ApiError,
  checkName,
  DEFAULT_GROUP,
  isRecord,
  key,
  MAX_LIST_RESULTS,
  oneOf,
  optionalString,
  parseAtExpression,
  parseFlexibleTimeWindow,
  parseTarget,
  requiredString,
  STATE_VERSION,
  type StoredSchedule,
  UTC_ZONES,
  validation,
} from './model.ts';

export interface ScheduleStore {
  readonly schedules: Map<string, StoredSchedule>;
  /** Writes the state file (a no-op without one). */
  persist(): void;
  create(name: string, body: Record<string, unknown>): { ScheduleArn: string };
  find(name: string, url: URL): StoredSchedule;
  list(url: URL): Record<string, unknown>;
  remove(s: StoredSchedule): void;
}

export function createScheduleStore(options: {
  readonly stateFile: string | undefined;
  readonly region: string;
  readonly clock: () => number;
  readonly log: (line: string) => void;
  /** True: accept this create and forget it (the "lost schedule" fault). */
  readonly dropThisCreate: () => boolean;
}): ScheduleStore {
  const { stateFile, region, clock, log } = options;
  const store = new Map<string, StoredSchedule>();
  if (stateFile !== undefined) {
    mkdirSync(dirname(stateFile), { recursive: true });
    for (const s of loadState(stateFile)) store.set(key(s.groupName, s.name), s);
  }

  function persist(): void {
    if (stateFile === undefined) return;
    const tmp = `${stateFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: STATE_VERSION, schedules: [...store.values()] }));
    // rename is atomic: a kill -9 leaves either the old file or the new one, never half of one.
    renameSync(tmp, stateFile);
  }

  function create(name: string, body: Record<string, unknown>): { ScheduleArn: string } {
    const groupName = checkName(optionalString(body, 'GroupName', 1, 64) ?? DEFAULT_GROUP, 'GroupName');
    const expression = requiredString(body, 'ScheduleExpression', 1, 256);
    const timezone = optionalString(body, 'ScheduleExpressionTimezone', 1, 50) ?? 'UTC';
    if (!UTC_ZONES.has(timezone)) {
      throw validation(`ScheduleExpressionTimezone ${timezone}: the local stand-in supports UTC only`);
    }
    const at = parseAtExpression(expression);
    const flexibleTimeWindow = parseFlexibleTimeWindow(body.FlexibleTimeWindow);
    const target = parseTarget(body.Target);
    const state = oneOf(body, 'State', ['ENABLED', 'DISABLED'] as const) ?? 'ENABLED';
    const actionAfterCompletion = oneOf(body, 'ActionAfterCompletion', ['NONE', 'DELETE'] as const) ?? 'NONE';
    const description = optionalString(body, 'Description', 0, 512);
    const kmsKeyArn = optionalString(body, 'KmsKeyArn', 1, 2048);

    const k = key(groupName, name);
    if (store.has(k)) {
      throw new ApiError(409, 'ConflictException', `Schedule ${name} already exists in group ${groupName}.`);
    }
    const arn = `arn:aws:scheduler:${region}:${ACCOUNT_ID}:schedule/${groupName}/${name}`;
    if (options.dropThisCreate()) {
      log(`scheduler stand-in: fault: accepted and lost schedule ${groupName}/${name}`);
      return { ScheduleArn: arn };
    }
    const now = clock();
    store.set(k, {
      name,
      groupName,
      arn,
      scheduleExpression: expression,
      scheduleExpressionTimezone: timezone,
      at,
      state,
      actionAfterCompletion,
      flexibleTimeWindow,
      target,
      ...(description === undefined ? {} : { description }),
      ...(kmsKeyArn === undefined ? {} : { kmsKeyArn }),
      creationDate: now,
      lastModificationDate: now,
      attempts: 0,
      nextAttemptAt: null,
      completed: false,
    });
    try {
      persist();
    } catch (error) {
      // Answer 500 with nothing kept, rather than 200 for a schedule a restart would lose.
      store.delete(k);
      throw error;
    }
    return { ScheduleArn: arn };
  }

  function find(name: string, url: URL): StoredSchedule {
    const groupName = checkName(url.searchParams.get('groupName') ?? DEFAULT_GROUP, 'groupName');
    const s = store.get(key(groupName, name));
    if (s === undefined) {
      throw new ApiError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
    }
    return s;
  }

  function list(url: URL): Record<string, unknown> {
    const group = url.searchParams.get('ScheduleGroup');
    const prefix = url.searchParams.get('NamePrefix') ?? '';
    const state = url.searchParams.get('State');
    const maxText = url.searchParams.get('MaxResults');
    const max = maxText === null ? MAX_LIST_RESULTS : Number(maxText);
    if (!Number.isInteger(max) || max < 1 || max > MAX_LIST_RESULTS) {
      throw validation(`MaxResults must be an integer from 1 to ${MAX_LIST_RESULTS}`);
    }
    const tokenText = url.searchParams.get('NextToken');
    const start = tokenText === null ? 0 : Number(Buffer.from(tokenText, 'base64url').toString('utf8'));
    if (!Number.isInteger(start) || start < 0) throw validation('Invalid NextToken');
    const matching = [...store.values()].filter(
      (s) =>
        (group === null || s.groupName === group) &&
        s.name.startsWith(prefix) &&
        (state === null || s.state === state),
    );
    const page = matching.slice(start, start + max);
    const end = start + page.length;
    return {
      Schedules: page.map((s) => ({
        Arn: s.arn,
        Name: s.name,
        GroupName: s.groupName,
        State: s.state,
        CreationDate: s.creationDate / 1000,
        LastModificationDate: s.lastModificationDate / 1000,
        Target: { Arn: s.target.Arn },
      })),
      ...(end < matching.length ? { NextToken: Buffer.from(String(end)).toString('base64url') } : {}),
    };
  }

  function remove(s: StoredSchedule): void {
    store.delete(key(s.groupName, s.name));
    persist();
  }

  return { schedules: store, persist, create, find, list, remove };
}

function loadState(file: string): StoredSchedule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  // A corrupt file is an error, not an empty stack: silently dropping accepted retries is the
  // failure this file exists to prevent.
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed) || parsed.version !== STATE_VERSION || !Array.isArray(parsed.schedules)) {
    throw new Error(`${file}: not a scheduler stand-in state file (version ${STATE_VERSION})`);
  }
  for (const s of parsed.schedules) {
    if (
      !isRecord(s) ||
      typeof s.name !== 'string' ||
      typeof s.groupName !== 'string' ||
      typeof s.at !== 'number' ||
      !isRecord(s.target)
    ) {
      throw new Error(`${file}: malformed schedule entry`);
    }
  }
  return parsed.schedules as StoredSchedule[];
}
