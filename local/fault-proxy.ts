import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardBuffered } from './loopback-server.ts';

/**
 * What to do with one proxied request:
 *  - pass:                forward, answer with the upstream's answer;
 *  - status:              answer `status` without forwarding (provably not accepted);
 *  - timeout_after_accept: forward, then hold the answer for `delayMs` (the caller times out
 *                          while the upstream did accept: the ambiguous case);
 *  - timeout_before_accept: hold for `delayMs`, then drop without forwarding;
 *  - reset_after_accept:   forward, then destroy the client socket.
 */
export type ProxyFault =
  | { readonly kind: 'pass' }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: string;
      readonly headers?: Record<string, string>;
    }
  | { readonly kind: 'timeout_after_accept'; readonly delayMs: number }
  | { readonly kind: 'timeout_before_accept'; readonly delayMs: number }
  | { readonly kind: 'reset_after_accept' };

export interface FaultProxy {
  readonly endpoint: string;
  /** Faults applied to the next matching requests, in order; then `random` (if set), then pass. */
  readonly queue: ProxyFault[];
  random?: () => ProxyFault;
  /** `settled`: requests answered or dropped, every fault played out (a test waits for it). */
  readonly counters: { requests: number; forwarded: number; settled: number; faults: Record<string, number> };
  close(): Promise<void>;
}

/**
 * An HTTP reverse proxy on 127.0.0.1 that injects provider faults in front of a local
 * emulator that has none (aws-ses-v2-local), so the SES adapter runs unchanged against
 * `AWS_ENDPOINT_URL_SESV2=<proxy>`. Only requests whose path matches `match` are faulted
 * (default: SES SendEmail); store reads and health checks always pass.
 */
export async function startFaultProxy(options: {
  upstream: string;
  port?: number;
  match?: (method: string, path: string) => boolean;
}): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  const match =
    options.match ?? ((method, path) => method === 'POST' && path.startsWith('/v2/email/outbound-emails'));
  const sockets = new Set<import('node:net').Socket>();
  const state: FaultProxy = {
    endpoint: '',
    queue: [],
    counters: { requests: 0, forwarded: 0, settled: 0, faults: {} },
    close: async () => undefined,
  };

  function forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
    const answer = forwardBuffered(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      body,
    );
    state.counters.forwarded += 1;
    return answer;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    state.counters.requests += 1;
    const fault: ProxyFault = match(req.method ?? 'GET', req.url ?? '/')
      ? (state.queue.shift() ?? state.random?.() ?? { kind: 'pass' })
      : { kind: 'pass' };
    state.counters.faults[fault.kind] = (state.counters.faults[fault.kind] ?? 0) + 1;
    switch (fault.kind) {
      case 'status':
        res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
        res.end(fault.body ?? JSON.stringify({ message: `injected ${fault.status}` }));
        return;
      case 'timeout_before_accept':
        await new Promise((r) => setTimeout(r, fault.delayMs));
        req.socket.destroy();
        return;
      default: {
        const answer = await forward(req, body);
        if (fault.kind === 'reset_after_accept') {
          req.socket.destroy();
          return;
        }
        if (fault.kind === 'timeout_after_accept') await new Promise((r) => setTimeout(r, fault.delayMs));
        if (req.socket.destroyed) return;
        const headers = { ...answer.headers };
        delete headers['transfer-encoding'];
        res.writeHead(answer.status, headers);
        res.end(answer.body);
      }
    }
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks))
        .catch(() => {
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        })
        .finally(() => {
          state.counters.settled += 1;
        });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
