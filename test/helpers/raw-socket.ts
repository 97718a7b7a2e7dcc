import { connect, createServer } from 'node:net';

/**
 * Writes `chunks` to a raw TCP connection (pausing where asked) and resolves with everything
 * that came back once the server closed the connection, and after how long. For what fetch
 * cannot send: a body shorter than its Content-Length, a trickle, headers that never end.
 * Rejects if the server keeps the connection open past `giveUpMs`.
 */
export function rawExchange(
  url: string,
  chunks: readonly (string | { pauseMs: number })[],
  giveUpMs = 10_000,
): Promise<{ response: string; closedAfterMs: number }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      response += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ response, closedAfterMs: Date.now() - started }));
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (typeof chunk === 'string') socket.write(chunk);
        else await new Promise((r) => setTimeout(r, chunk.pauseMs));
        if (socket.destroyed) return;
      }
    });
    setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`the server kept the connection open for ${giveUpMs} ms: ${JSON.stringify(response)}`),
      );
    }, giveUpMs).unref();
  });
}

/** A loopback origin that refuses connections: a port bound once to learn a free one, then closed. */
export async function refusingOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
