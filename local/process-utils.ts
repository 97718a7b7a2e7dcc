import { realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';

/** A port free on 127.0.0.1 right now (the OS picks it); racy by nature, so callers retry on EADDRINUSE. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

/** Whether the module with this `import.meta.url` is the script Node was started with (symlinks resolved). */
export function isMainModule(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

/** For the stand-ins' CLIs: close on the first SIGINT/SIGTERM, then exit 0. */
export function closeOnSignal(close: () => Promise<void>): void {
  const stop = () => {
    void close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
