import { join } from 'node:path';
import { startSesEventFeeder } from '../ses/event-feeder.ts';
import { startSesLocal } from '../ses/server.ts';
import { servicePort } from '../settings.ts';
import type { LocalProvider } from './local-provider.ts';

const FEED_INTERVAL_MS = 500;

/**
 * aws-ses-v2-local in this process (its sent mail kept in `$LEDGER_DATA_DIR/ses-store.jsonl`),
 * plus the feeder that turns what it stores into SES-shaped EventBridge events for the
 * provider-events function: the emulator publishes none.
 */
export const sesLocal: LocalProvider = {
  id: 'ses',
  service: 'sesv2',
  label: 'SES v2',
  external: (env) => Boolean(env.AWS_ENDPOINT_URL_SESV2),
  endpoint: (env) => env.AWS_ENDPOINT_URL_SESV2,
  async start(context) {
    const storeFile = join(context.dataDir, 'ses-store.jsonl');
    const ses = await startSesLocal({ port: servicePort(context.env, 'ses'), storeFile });
    return {
      env: { AWS_ENDPOINT_URL_SESV2: ses.endpoint },
      endpoint: ses.endpoint,
      describe: `started (aws-ses-v2-local; sent mail: ${ses.endpoint}/store, kept in ${storeFile})`,
      simulator: ses,
      stop: () => ses.close(),
    };
  },
  /**
   * For an emulator this stack started, and for an external endpoint only when
   * `LOCAL_SES_EVENTS=store` says it serves aws-ses-v2-local's `/store` (the emulator itself, or a
   * proxy in front of it): an arbitrary endpoint may have no `/store` to read.
   */
  feed(context, deliver) {
    const mode = context.env.LOCAL_SES_EVENTS?.trim();
    if (mode && mode !== 'store') throw new Error(`LOCAL_SES_EVENTS must be "store" or unset, got "${mode}"`);
    const endpoint = context.env.AWS_ENDPOINT_URL_SESV2;
    if (!endpoint || (!context.started && mode !== 'store')) return undefined;
    let lastReport = 0;
    const feeder = startSesEventFeeder({
      endpoint,
      intervalMs: FEED_INTERVAL_MS,
      // The emulator this stack started keeps its store in the data dir, and so does the feed;
      // an external store may be replaced or emptied under it, so that one is replayed instead.
      ...(context.started ? { cursorFile: join(context.dataDir, 'ses-feed.json') } : {}),
      deliver,
      onError: (error) => {
        // It retries every interval; one line per half minute is enough to notice.
        if (Date.now() - lastReport < 30_000) return;
        lastReport = Date.now();
        context.log(
          `SES event feed failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
      },
    });
    return { stop: () => feeder.stop(), describe: 'events fed to provider-events' };
  },
};
