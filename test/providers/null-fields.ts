/**
 * The conformance suite's null case (./conformance.ts): a provider that writes `null` for an
 * optional member ("reason": null) must be read as if the member were absent. A kit names the
 * optional members of its provider's JSON answers and events as paths, and everything the module
 * reads passes through a rewrite first: answers through a proxy in front of the simulator (the
 * module's own HTTP client, unchanged), events before they are signed or handed to the facet.
 *
 * Paths: members joined by `.`; `name[]` is every element of the array `name`, a leading `[]`
 * every element of a top-level array (`[].reason`, `data.items[].bounce_type`).
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Where = 'answer' | 'event';

export interface OptionalFields {
  /** Members of the provider's JSON answers (send, lookup, status, suppression check, errors). */
  readonly answers: readonly string[];
  /** Members of its events (webhook bodies, EventBridge `detail`). */
  readonly events: readonly string[];
}

export type Rewrite = (json: unknown, where: Where) => unknown;

type Leaf = (holder: Record<string, unknown>, member: string) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(value: unknown, segments: readonly string[], leaf: Leaf): number {
  const [head, ...rest] = segments;
  if (head === undefined) return 0;
  if (head === '[]') {
    if (!Array.isArray(value)) return 0;
    return value.reduce((n: number, item) => n + walk(item, rest, leaf), 0);
  }
  if (!isRecord(value)) return 0;
  if (head.endsWith('[]')) {
    const list = value[head.slice(0, -2)];
    if (!Array.isArray(list)) return 0;
    return list.reduce((n: number, item) => n + walk(item, rest, leaf), 0);
  }
  if (rest.length === 0) {
    leaf(value, head);
    return 1;
  }
  return walk(value[head], rest, leaf);
}

function segmentsOf(path: string): string[] {
  return path.split('.').flatMap((s) => (s.startsWith('[]') && s !== '[]' ? ['[]', s.slice(2)] : [s]));
}

function rewriteWith(fields: OptionalFields, leaf: Leaf, fed?: Set<string>): Rewrite {
  return (json, where) => {
    const copy = structuredClone(json);
    for (const path of where === 'answer' ? fields.answers : fields.events) {
      if (walk(copy, segmentsOf(path), leaf) > 0) fed?.add(`${where}:${path}`);
    }
    return copy;
  };
}

/** `null` in every listed member whose holder is there (present or not); `fed` names each one fed. */
export function nullsIn(fields: OptionalFields, fed: Set<string>): Rewrite {
  return rewriteWith(
    fields,
    (holder, member) => {
      holder[member] = null;
    },
    fed,
  );
}

/** Every listed member removed: what `null` must read as. */
export function absentIn(fields: OptionalFields): Rewrite {
  return rewriteWith(fields, (holder, member) => {
    delete holder[member];
  });
}

/** Every path a kit lists, as `nullsIn` names them when fed. */
export function everyPath(fields: OptionalFields): string[] {
  return [...fields.answers.map((p) => `answer:${p}`), ...fields.events.map((p) => `event:${p}`)];
}

export interface RewritingProxy {
  /** The simulator's base URL (its path kept) on the proxy: the module's base URL. */
  readonly origin: string;
  /** Rewrites every JSON answer from now on (`undefined`: passed through as it came). */
  set(rewrite: Rewrite | undefined): void;
  close(): Promise<void>;
}

/**
 * A loopback proxy in front of a simulator: requests go through unchanged; a JSON answer is
 * parsed, rewritten and sent on (the length recomputed). A held answer stays held, so the
 * module's timeouts meet the simulator's faults as before.
 */
export async function startRewritingProxy(upstream: string): Promise<RewritingProxy> {
  const target = new URL(upstream);
  const prefix = target.pathname.replace(/\/+$/, '');
  let rewrite: Rewrite | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url ?? '/',
          headers: { ...req.headers, host: target.host },
        },
        (answer: IncomingMessage) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let text = Buffer.concat(body);
            const json = /json/.test(String(answer.headers['content-type'] ?? ''));
            if (rewrite && json && text.length > 0) {
              try {
                text = Buffer.from(JSON.stringify(rewrite(JSON.parse(text.toString('utf8')), 'answer')));
              } catch {
                // Not JSON after all: passed on as it came.
              }
            }
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            if (res.destroyed) return;
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': text.length });
            res.end(text);
          });
          answer.on('error', () => res.destroy());
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    set(next) {
      rewrite = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
