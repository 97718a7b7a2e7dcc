/**
 * `notice-ledger events [--follow]`: the outcome events on the local stack's bus stand-in
 * (`GET /console/events.json`, local/console.ts), one line each, oldest first; `--follow` keeps
 * polling and prints new ones as they arrive (Ctrl-C ends it). Local only: in AWS the events are
 * on an EventBridge bus, read with rules of one's own (docs/outcome-events.md).
 */
import type { OutcomeEventData } from '../../lambdas/domain/outcome-event.ts';
import { TransportError } from '../client.ts';
import { formatUtc } from '../format.ts';
import { table } from './output.ts';

interface BusEvent {
  readonly n: number;
  readonly detailType: string;
  readonly detail: { readonly id: string; readonly data: OutcomeEventData };
}

export interface EventsOptions {
  readonly endpoint: string;
  readonly follow: boolean;
  readonly json: boolean;
  readonly timeoutMs: number;
  readonly stdout: (text: string) => void;
  readonly fetch: typeof fetch;
  /** Ends `--follow` (tests; the CLI ends on Ctrl-C). */
  readonly signal?: AbortSignal | undefined;
  /** @default 1000 */
  readonly pollMs?: number;
}

const HEADERS = [
  '#',
  'at (UTC)',
  'type',
  'notice',
  'channel',
  'seq',
  'state',
  'reason',
  'attempt',
  'webhook-id',
];

function row(e: BusEvent): unknown[] {
  const d = e.detail.data;
  return [
    e.n,
    formatUtc(d.at),
    e.detailType.replace(/^notice\.channel\./, ''),
    d.noticeId,
    d.channel,
    d.seq,
    d.state,
    d.reason,
    d.attempt,
    e.detail.id,
  ];
}

/** Answers exit code 0; a stack it cannot read is a TransportError (the CLI's exit 1). */
export async function printEvents(options: EventsOptions): Promise<number> {
  let after = 0;
  let first = true;
  const pollMs = options.pollMs ?? 1_000;
  while (!options.signal?.aborted) {
    let events: BusEvent[];
    const url = `${options.endpoint.replace(/\/+$/, '')}/console/events.json?after=${after}`;
    let response: Response;
    try {
      response = await options.fetch(url, { signal: AbortSignal.timeout(options.timeoutMs) });
    } catch (error) {
      if (options.signal?.aborted) break;
      // Not reached: said as the other commands say it (main.ts answers a TransportError with exit 1).
      const reason =
        error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : 'failed';
      throw new TransportError(`GET ${new URL(url).origin}/console/events.json failed: ${reason}`, url, {
        cause: error,
      });
    }
    if (response.status !== 200) {
      throw new TransportError(
        `GET ${new URL(url).origin}/console/events.json answered ${response.status} (a local stack serves the events)`,
        url,
      );
    }
    events = ((await response.json()) as { events: BusEvent[] }).events;
    if (options.json) {
      for (const e of events) options.stdout(`${JSON.stringify(e.detail)}\n`);
    } else if (events.length > 0 || first) {
      const text = table(HEADERS, events.map(row));
      // Following: the header once, then only rows.
      options.stdout(`${first ? text : text.split('\n').slice(2).join('\n')}\n`);
    }
    first = false;
    after = events[events.length - 1]?.n ?? after;
    if (!options.follow) return 0;
    if (events.length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        options.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
  return 0;
}
