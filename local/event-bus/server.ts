/**
 * An EventBridge stand-in for the outcome bus (no EventBridge emulator runs locally): it answers
 * PutEvents (AWS JSON 1.1, `X-Amz-Target: AWSEvents.PutEvents`) as EventBridge does, so the
 * stream consumer's production adapter runs unchanged, and keeps what it was given, in order, for
 * the console (`/console/events.json`) and `notice-ledger events`. The events are appended to a
 * file in the data dir, so they survive a restart (the last `MAX_KEPT` are served).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';

export interface BusEvent {
  /** Position on this bus: 1, 2, … in the order received. */
  readonly n: number;
  readonly id: string;
  readonly bus: string;
  readonly source: string;
  readonly detailType: string;
  readonly time: string;
  readonly detail: unknown;
}

export interface LocalEventBus {
  readonly endpoint: string;
  /** Events after position `after`, at most `limit`, oldest first. */
  events(after?: number, limit?: number): readonly BusEvent[];
  close(): Promise<void>;
}

const MAX_KEPT = 20_000;
/** EventBridge's own limits: ten entries per call, 256 KB per entry. */
const MAX_ENTRIES = 10;
const MAX_ENTRY_BYTES = 256 * 1024;

export async function startLocalEventBus(options: {
  readonly file: string;
  readonly port?: number;
}): Promise<LocalEventBus> {
  const kept: BusEvent[] = load(options.file);
  let next = (kept[kept.length - 1]?.n ?? 0) + 1;

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
      answer(res, 400, { __type: 'UnknownOperationException', message: `not served here: ${target}` });
      return;
    }
    let input: { Entries?: Record<string, unknown>[] };
    try {
      input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof input;
    } catch {
      answer(res, 400, { __type: 'SerializationException', message: 'body is not JSON' });
      return;
    }
    const entries = input.Entries ?? [];
    if (entries.length === 0 || entries.length > MAX_ENTRIES) {
      answer(res, 400, { __type: 'ValidationException', message: 'Entries must hold 1 to 10 entries' });
      return;
    }
    const results = entries.map((entry) => {
      const detail = typeof entry.Detail === 'string' ? entry.Detail : undefined;
      if (!detail || !entry.Source || !entry.DetailType) {
        return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Source, DetailType and Detail are required' };
      }
      if (Buffer.byteLength(detail) > MAX_ENTRY_BYTES) {
        return { ErrorCode: 'EntryTooLarge', ErrorMessage: 'an entry is at most 256 KB' };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(detail);
      } catch {
        return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is not a JSON object' };
      }
      const time = entry.Time === undefined ? new Date() : new Date(Number(entry.Time) * 1000);
      const event: BusEvent = {
        n: next++,
        id: randomUUID(),
        bus: String(entry.EventBusName ?? 'default'),
        source: String(entry.Source),
        detailType: String(entry.DetailType),
        time: time.toISOString(),
        detail: parsed,
      };
      kept.push(event);
      appendFileSync(options.file, `${JSON.stringify(event)}\n`);
      return { EventId: event.id };
    });
    if (kept.length > MAX_KEPT) kept.splice(0, kept.length - MAX_KEPT);
    const failed = results.filter((r) => 'ErrorCode' in r).length;
    answer(res, 200, { FailedEntryCount: failed, Entries: results });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() =>
      answer(res, 500, { __type: 'InternalException', message: 'internal error' }),
    );
  });
  const port = await listenOnLoopback(server, options.port ?? 0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    events(after = 0, limit = 1000) {
      const start = kept.findIndex((e) => e.n > after);
      return start < 0 ? [] : kept.slice(start, start + limit);
    },
    close: () => closeServer(server),
  };
}

function load(file: string): BusEvent[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  // A line cut short by a kill -9 is dropped; every whole one is kept.
  const events = text.split('\n').flatMap((line) => {
    try {
      return line ? [JSON.parse(line) as BusEvent] : [];
    } catch {
      return [];
    }
  });
  return events.slice(-MAX_KEPT);
}
