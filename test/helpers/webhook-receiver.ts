import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../../local/loopback-server.ts';

/** One request the receiver got, and what it answered. */
export interface ReceivedWebhook {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly status: number;
  readonly at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** The next `count` requests for a webhook-id matching `match` are answered `status`. */
  failNext(match: (id: string, body: string) => boolean, count: number, status?: number): void;
  /** Every request is answered `status` until `open()`. */
  refuseAll(status: number): void;
  open(): void;
  close(): Promise<void>;
}

/** A business system's endpoint for outcome webhooks (loopback only): records every request. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const failures: { match: (id: string, body: string) => boolean; left: number; status: number }[] = [];
  let refusing: number | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
      );
      const id = headers['webhook-id'] ?? '';
      const rule = failures.find((f) => f.left > 0 && f.match(id, body));
      let status = refusing ?? 200;
      if (rule && refusing === undefined) {
        rule.left -= 1;
        status = rule.status;
      }
      received.push({ headers, body, status, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status < 300 ? 'ok' : 'not now');
    });
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/outcomes`,
    received,
    failNext(match, count, status = 500) {
      failures.push({ match, left: count, status });
    },
    refuseAll(status) {
      refusing = status;
    },
    open() {
      refusing = undefined;
    },
    close: () => closeServer(server),
  };
}
