import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type RequestOptions,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts an HTTP server on 127.0.0.1 (every server the local stack and its simulators start binds
 * loopback only) and answers its port; a port already taken rejects instead of crashing the
 * process with an unhandled `error` event. Port 0 (the default): any free port.
 */
export async function listenOnLoopback(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Stops taking connections, ends the open ones (keep-alive clients too), and waits until closed. */
export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** An upstream's whole answer, as the local proxies relay it. */
export interface BufferedAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One request to an upstream (the local proxies' forward), its answer read whole. */
export function forwardBuffered(options: RequestOptions, body: Buffer | undefined): Promise<BufferedAnswer> {
  return new Promise((resolve, reject) => {
    const out = httpRequest(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
