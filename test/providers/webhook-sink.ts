/** A loopback server that catches the webhooks a simulator posts, for the conformance kits. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InboundRequest } from '../../lambdas/ports/provider.port.ts';

export interface Caught {
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface WebhookSink {
  /** Our "public base URL": where the simulator is told to post. */
  readonly origin: string;
  readonly caught: Caught[];
  /** The first caught request that `match` accepts, waiting for it (bounded). */
  find(match: (caught: Caught) => boolean, what: string): Promise<Caught>;
  /** A caught request as the provider-events function sees it. */
  request(caught: Caught, header?: (name: string) => string | undefined): InboundRequest;
  close(): Promise<void>;
}

export async function startWebhookSink(): Promise<WebhookSink> {
  const caught: Caught[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      caught.push({
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caught,
    async find(match, what) {
      for (let i = 0; i < 300; i++) {
        const hit = caught.find(match);
        if (hit) return hit;
        await sleep(20);
      }
      throw new Error(`no webhook: ${what}`);
    },
    request(hit, header) {
      return {
        url: `${origin}${hit.url}`,
        header:
          header ??
          ((name) => {
            const v = hit.headers[name.toLowerCase()];
            return Array.isArray(v) ? v[0] : v;
          }),
        body: hit.body,
        contentType: hit.headers['content-type'],
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
