/**
 * A simulator's state kept in one JSON file: loaded at start, written (atomically: a temporary
 * file renamed over the old one) before the request that changed it is answered, so a kill -9 of
 * the stack loses nothing a provider had acknowledged. Destinations and bodies are kept (tests
 * read them back) but never printed.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export class JsonFileState<T> {
  value: T;
  constructor(
    private readonly file: string | undefined,
    initial: () => T,
  ) {
    this.value = initial();
    if (!file) return;
    try {
      this.value = { ...initial(), ...(JSON.parse(readFileSync(file, 'utf8')) as T) };
    } catch {
      // None yet (or unreadable): start empty.
    }
  }

  save(): void {
    if (!this.file) return;
    mkdirSync(dirname(this.file), { recursive: true });
    // Per process: two stacks sharing a data directory (a bench's intake process) never share a staging file.
    const staging = `${this.file}.${process.pid}.tmp`;
    writeFileSync(staging, JSON.stringify(this.value));
    renameSync(staging, this.file);
  }
}

/** Reads a request body as text (bounded: a simulator is no place for large uploads). */
export async function readBody(req: import('node:http').IncomingMessage, limit = 1_000_000): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
